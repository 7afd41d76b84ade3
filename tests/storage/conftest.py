"""The storage tests' fixtures: new databases of each engine, and a standalone emulator."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import ENGINES, Standalone


@pytest.fixture(params=ENGINES)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A new mirror database of each engine: a file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "m.sqlite"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """A standalone emulator, its clock frozen at the real now (the mirror's own clock)."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    with Standalone(
        "--frozen", "--now", now, "--fixtures-per-season", "12", "--actions-per-fixture", "40"
    ) as emu:
        yield emu.base_url


@pytest.fixture(params=ENGINES)
def new_db(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], str]:
    """Makes new empty databases of each engine: a file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return lambda name: str(tmp_path / f"{name}.sqlite")
    postgres = request.getfixturevalue("postgres")
    return lambda name: str(postgres.create_database())
