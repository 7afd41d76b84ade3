"""A SQLite connection for a test's own look into a database file: :func:`sqlite`."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def sqlite(path: str | Path, **options: Any) -> Iterator[sqlite3.Connection]:
    """A connection to the file ``path``: its transaction committed at the block's end
    (rolled back on an error), then closed. ``with sqlite3.connect(...)`` only ends the
    transaction: the connection waits for the collector, and Python 3.13 warns of each
    (CI's newest leg printed 4,520 ResourceWarnings)."""
    with contextlib.closing(sqlite3.connect(path, **options)) as conn, conn:
        yield conn
