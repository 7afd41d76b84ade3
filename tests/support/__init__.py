"""Every helper the tests share; conftest.py files hold only fixtures and hooks. Imported
by name (``from support.X import ...``: pytest puts tests/ on sys.path).

The most used are imported here too: the command run as a user would (``cli``), the
emulator as a standalone process (``standalone``), tests run once per live dialect
(``dialects``), a bounded wait for a condition (``wait``). The others, imported from their
modules: hand-written JSON of the service (``samples``), loopback stub servers (``stub``),
the emulator read with plain aiohttp (``api``), the live feed tests' helpers (``live``,
``hostile_servers``, ``bounds_child``), the throwaway PostgreSQL, Redis and NATS
(``servers``), a TCP proxy that cuts (``proxy``), long-running command processes to signal
and kill (``procs``), stored rows compared across engines and runs (``rows``), the mirror's
(``mirror``), rates at the server (``ratelimit``, ``shared_limit``), the Markdown pages'
blocks run (``docblocks``), call sites mypy checks (``typed_with_json``), and the plugin
that prints the fast suite's time (``timing``)."""

import pytest

from support.cli import CLI, TIMEOUT, ainvoke, clean_env, invoke, lines, run
from support.dialects import each_dialect
from support.standalone import Standalone
from support.wait import until

# The two store engines, for ``@pytest.fixture(params=ENGINES)``: PostgreSQL's is slow
# (a server; tests/support/servers.py).
ENGINES = ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]

__all__ = [
    "CLI",
    "ENGINES",
    "TIMEOUT",
    "Standalone",
    "ainvoke",
    "clean_env",
    "each_dialect",
    "invoke",
    "lines",
    "run",
    "until",
]
