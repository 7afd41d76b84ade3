"""docs/wire.md's table of bus faults and the tests that make them, row for row.

Each row of "### Bus faults" names, in its last cell, the tests that make its fault
against a real server; each of them must exist (and, for a case like ``[oom]``, that case
be written in its file), and each test of the two fault files must be named by a row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAULT_FILES = ("tests/bus/test_bus_redis_faults.py", "tests/bus/test_bus_nats_faults.py")
_DEF = re.compile(r"^(?:async )?def (test_\w+)\(", re.M)
_NAMED = re.compile(r"`(test_\w+)(?:\[([^\]]+)\])?`")


def _rows() -> list[str]:
    text = (ROOT / "docs/wire.md").read_text()
    section = text.split("\n### Bus faults\n", 1)[1].split("\n## ", 1)[0]
    return [
        line
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| Fault", "|---"))
    ]


def _defined() -> dict[str, str]:
    """Each test function under tests/ and its file's text."""
    found: dict[str, str] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        text = path.read_text()
        for name in _DEF.findall(text):
            found.setdefault(name, text)
    return found


def test_every_row_names_a_test_and_each_exists() -> None:
    rows, defined = _rows(), _defined()
    assert len(rows) >= 20, "the table of bus faults is gone or cut"
    missing = []
    for row in rows:
        last = row.rstrip(" |").rsplit("|", 1)[1]
        named = _NAMED.findall(last)
        assert named, f"a row of bus faults names no test: {row[:80]!r}"
        for name, case in named:
            text = defined.get(name)
            if text is None or (case and f'"{case}"' not in text and f"'{case}'" not in text):
                missing.append(f"{name}[{case}]" if case else name)
    assert not missing, f"named in docs/wire.md's bus faults, not in tests/: {missing}"


@pytest.mark.parametrize("path", FAULT_FILES)
def test_every_fault_test_has_its_row(path: str) -> None:
    table = "\n".join(_rows())
    tests = _DEF.findall((ROOT / path).read_text())
    assert tests
    unnamed = [name for name in tests if f"`{name}" not in table]
    assert not unnamed, f"{path}: tests of faults without a row in docs/wire.md: {unnamed}"
