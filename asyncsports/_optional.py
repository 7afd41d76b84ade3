"""Optional dependencies: import one, or raise the one error that says how to install it.

Every import of a module that an extra of ``pyproject.toml`` provides goes through
:func:`need` (type-only imports aside), so a missing one is always told the same way::

    pa = need("pyarrow", "a Parquet export")
    # MissingDependencyError: a Parquet export needs pyarrow, which is not installed:
    # install asyncsports with its parquet extra (in a checkout: pip install -e '.[parquet]')

No I/O beyond the import itself.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from asyncsports.errors import MissingDependencyError

__all__ = ["EXTRAS", "need"]

EXTRAS: dict[str, str] = {
    "asyncpg": "postgres",
    "redis": "redis",
    "pyarrow": "parquet",
    "prometheus_client": "sync",
    "typer": "cli",
    "rich": "cli",
    "opentelemetry": "otel",
    # The transport spike (asyncsports/_http/transports/pyreqwest.py), measured by the benchmarks only.
    "pyreqwest": "bench",
    "dlt": "dlt",
    "nats": "nats",
}
"""The extra that installs each optional top-level module."""


def need(name: str, feature: str) -> ModuleType:
    """Import module ``name`` (dotted names too: ``"redis.asyncio"``) for ``feature``.

    ``feature`` says what the caller is doing, as the start of a sentence ("a Parquet
    export"). Raises :class:`~asyncsports.errors.MissingDependencyError` naming the
    feature, the module and its extra (:data:`EXTRAS`, by the top-level name) if the
    module is missing or fails to import; any other error of the import propagates.
    """
    top = name.partition(".")[0]
    extra = EXTRAS[top]  # a KeyError here is a programming error: add the module above
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # The module itself is missing; a dependency of its own is a broken install.
        if exc.name == top:
            raise MissingDependencyError(feature, top, extra) from exc
        raise MissingDependencyError(feature, top, extra, reason=str(exc)) from exc
    except ImportError as exc:
        raise MissingDependencyError(feature, top, extra, reason=str(exc)) from exc
