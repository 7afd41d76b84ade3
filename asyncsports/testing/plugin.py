"""pytest fixtures for tests that run against the embedded emulator.

Registered as a ``pytest11`` entry point, so installing asyncsports makes them available:

- ``sports_emulator``: an open :class:`asyncsports.emulator.Emulator` (function scope).
- ``sports_client``: an open :class:`asyncsports.Client` bound to it.
- ``emulator``: a deprecated alias of ``sports_emulator`` (it warns; removed in 0.3).

The names carry the ``sports_`` prefix so that they cannot collide with a project's own
``emulator`` or ``client`` fixtures.

Configure the emulator of a test with the ``emulator`` marker, whose keyword arguments go
to the constructor::

    @pytest.mark.emulator(seed=7, fixtures_per_season=100)
    async def test_many(sports_client, sports_emulator):
        sports_emulator.clock.advance(3600)
        ...

``@pytest.mark.emulator(replay="tests/data/day.jsonl.gz")`` serves a recording instead
(``Client(record=...)``, ``asyncsports --record``), its path taken from the rootdir.

The fixtures are async (pytest-asyncio). An ``async def`` test that asks for one of them
runs under pytest-asyncio whatever its mode: in the default strict mode it needs no
``@pytest.mark.asyncio`` of its own. Importing this module imports neither the emulator
nor the client; that happens when a test asks for a fixture. A project that does not set
pytest-asyncio's ``asyncio_default_fixture_loop_scope`` gets ``function`` from this plugin
(rather than pytest-asyncio's warning); one that sets it keeps its value.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import AsyncIterator, Callable, Generator
from typing import TYPE_CHECKING, Any

import pytest

try:
    import pytest_asyncio

    _fixture: Callable[[Any], Any] = pytest_asyncio.fixture
    _ASYNCIO = True
except ImportError:  # installed without pytest-asyncio: keep pytest working, explain on use

    def _fixture(fn: Any) -> Any:
        @pytest.fixture(name=fn.__name__)
        def missing() -> None:
            pytest.fail(
                "asyncsports' emulator fixtures need pytest-asyncio: pip install pytest-asyncio"
            )

        return missing

    _ASYNCIO = False


if TYPE_CHECKING:
    from asyncsports.client import Client
    from asyncsports.emulator import Emulator

__all__ = ["emulator", "sports_client", "sports_emulator"]


LOOP_SCOPE = "asyncio_default_fixture_loop_scope"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``emulator`` marker; default pytest-asyncio's fixture loop scope.

    A project that does not set ``asyncio_default_fixture_loop_scope`` gets ``function``
    (this plugin's fixtures' scope, and pytest-asyncio's announced default) rather than
    pytest-asyncio's deprecation warning; a value the project sets is left as it is.
    """
    config.addinivalue_line(
        "markers", "emulator(**kwargs): arguments for the asyncsports Emulator of this test"
    )
    # First (tryfirst), so that pytest-asyncio's own pytest_configure reads the default.
    # pytest has no public way to default another plugin's ini option: getini's cache is it.
    try:
        unset = not config.getini(LOOP_SCOPE)
    except ValueError:  # pytest-asyncio not installed, or disabled (-p no:asyncio)
        return
    cache = getattr(config, "_inicache", None)
    if unset and isinstance(cache, dict):
        cache[LOOP_SCOPE] = "function"


FIXTURES = frozenset({"sports_emulator", "sports_client", "emulator"})


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, None, None]:
    """Mark an ``async def`` test that asks for this plugin's fixtures ``asyncio``.

    Before the item is made, so that pytest-asyncio, in strict mode too, runs it.
    """
    if _ASYNCIO and inspect.iscoroutinefunction(obj) and collector.funcnamefilter(name):
        wanted = set(inspect.signature(obj).parameters) & FIXTURES
        marks = getattr(obj, "pytestmark", [])
        if wanted and not any(m.name == "asyncio" for m in marks):
            pytest.mark.asyncio(obj)
    yield


@_fixture
async def sports_emulator(request: pytest.FixtureRequest) -> AsyncIterator[Emulator]:
    """An open emulator; ``@pytest.mark.emulator(...)`` passes constructor arguments."""
    from asyncsports.emulator import Emulator

    marker = request.node.get_closest_marker("emulator")
    args, kwargs = (marker.args, marker.kwargs) if marker is not None else ((), {})
    if kwargs.get("replay") is not None:  # a recording's path is the project's, not cwd's
        kwargs = {**kwargs, "replay": request.config.rootpath / kwargs["replay"]}
    async with Emulator(*args, **kwargs) as emu:
        yield emu


@pytest.fixture
def emulator(sports_emulator: Emulator) -> Emulator:
    """Deprecated alias of ``sports_emulator``."""
    warnings.warn(
        "the 'emulator' fixture is deprecated: use 'sports_emulator' (removed in 0.3)",
        DeprecationWarning,
        stacklevel=2,
    )
    return sports_emulator


@_fixture
async def sports_client(sports_emulator: Emulator) -> AsyncIterator[Client]:
    """An open client bound to the ``sports_emulator`` fixture."""
    async with sports_emulator.client() as client:
        yield client
