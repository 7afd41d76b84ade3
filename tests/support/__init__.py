"""What many test files share: the command run as a user would (``cli``), the emulator
as a standalone process (``standalone``), tests run once per live dialect
(``dialects``), a bounded wait for a condition (``wait``), and stored rows compared
across engines and runs (``rows``, imported from there)."""

import pytest

from support.cli import CLI, TIMEOUT, ainvoke, clean_env, invoke, lines, run
from support.dialects import each_dialect
from support.standalone import Standalone
from support.wait import until

# The two store engines, for ``@pytest.fixture(params=ENGINES)``: PostgreSQL's is slow
# (a server; tests/support/servers.py).
ENGINES = ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)]

__all__ = ["CLI", "ENGINES", "TIMEOUT", "Standalone", "ainvoke", "clean_env", "each_dialect",
           "invoke", "lines", "run", "until"]  # fmt: skip
