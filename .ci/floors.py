"""Branch coverage per area, held to a floor: what .ci/run runs after the newest leg's tests.

``python .ci/floors.py [DATA]`` reads the coverage data file DATA (default: coverage's own,
``.coverage`` or ``$COVERAGE_FILE``) that ``pytest --cov`` wrote, and the areas and the
floor from pyproject.toml's ``[tool.asyncsports.coverage]``. It prints a row per area
(files, statements, branches, covered branches, the branch percentage and coverage's own
percentage of statements and branches together) and, for an area under its floor, every
branch not taken (``file:line->line``, ``exit`` when the branch leaves the function) and
every line not run. It exits 1 when an area is under the floor on either percentage, when
a file of an area was never imported (none of its lines ran: named, rather than only
lowering the sums), or when a ``pragma: no cover``/``no branch`` in an area gives no
reason on its line.
Run it from the tree's root, where the tests ran (the data names files relative to it).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import coverage

# A pragma and what follows it: the reason, which must hold a word.
PRAGMA = re.compile(r"#\s*pragma:\s*no\s+(?:cover|branch)\b(.*)$")


@dataclasses.dataclass
class Tally:
    """One area's sums, and what it left unrun."""

    files: int = 0
    statements: int = 0
    run: int = 0
    branches: int = 0
    taken: int = 0
    missed: list[str] = dataclasses.field(default_factory=list)

    @property
    def branch_percent(self) -> float:
        """Branches taken, of all branches (100 with none)."""
        return 100.0 * self.taken / self.branches if self.branches else 100.0

    @property
    def percent(self) -> float:
        """Coverage's own figure: statements run and branches taken, of both."""
        total = self.statements + self.branches
        return 100.0 * (self.run + self.taken) / total if total else 100.0


def settings(root: Path) -> tuple[float, dict[str, list[str]]]:
    """The floor and the areas (name -> entries) from ``root``'s pyproject.toml."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    table = config["tool"]["asyncsports"]["coverage"]
    return float(table["floor"]), {name: list(entries) for name, entries in table["areas"].items()}


def area_of(path: str, areas: Mapping[str, Sequence[str]]) -> str | None:
    """The area of ``path`` (relative, ``/``-separated): that of its longest matching entry."""
    matches = [
        (len(entry), name)
        for name, entries in areas.items()
        for entry in entries
        if path == entry or (entry.endswith("/") and path.startswith(entry))
    ]
    return max(matches)[1] if matches else None


def area_files(root: Path, areas: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Every Python file the areas name under ``root``, with its area."""
    found: dict[str, str] = {}
    for entries in areas.values():
        for entry in entries:
            paths = sorted((root / entry).rglob("*.py")) if entry.endswith("/") else [root / entry]
            for path in paths:
                name = path.relative_to(root).as_posix()
                area = area_of(name, areas)
                if area is not None and path.is_file():
                    found[name] = area
    return found


def report(data: Path, root: Path, files: Iterable[str]) -> dict[str, Any]:
    """Coverage's JSON report of ``files`` in ``data``: per file, its summary and what it missed.

    A file the tests never imported is in it too, with every statement missing.
    """
    cov = coverage.Coverage(data_file=str(data), config_file=str(root / "pyproject.toml"))
    cov.load()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "coverage.json"
        cov.json_report(morfs=[str(root / name) for name in files], outfile=str(out))
        found: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))["files"]
    return {Path(name).as_posix(): summary for name, summary in found.items()}


def tally(files: Mapping[str, str], measured: Mapping[str, Any]) -> dict[str, Tally]:
    """Each area's sums over its files' reports."""
    sums: dict[str, Tally] = {area: Tally() for area in dict.fromkeys(files.values())}
    for name, area in sorted(files.items()):
        entry, into = measured[name], sums[area]
        summary = entry["summary"]
        into.files += 1
        into.statements += summary["num_statements"]
        into.run += summary["covered_lines"]
        into.branches += summary.get("num_branches", 0)
        into.taken += summary.get("covered_branches", 0)
        into.missed += [
            f"{name}:{start}->{end if end > 0 else 'exit'}"
            for start, end in entry.get("missing_branches", [])
        ]
        into.missed += [f"{name}:{line} (not run)" for line in entry["missing_lines"]]
    return sums


def bare_pragmas(root: Path, files: Iterable[str]) -> list[str]:
    """The pragmas in ``files`` that give no reason on their line (``file:line``)."""
    found = []
    for name in sorted(files):
        lines = (root / name).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            match = PRAGMA.search(line)
            if match and not re.search(r"\w", match[1]):
                found.append(f"{name}:{number}")
    return found


def check(root: Path, data: Path, out: Any = sys.stdout) -> int:
    """Print the table and what fails; 1 when anything does, else 0."""
    floor, areas = settings(root)
    files = area_files(root, areas)
    measured = report(data, root, files)
    sums = tally(files, measured)
    print(f"{'area':<9}{'files':>6}{'stmts':>7}{'branches':>10}{'taken':>7}", end="", file=out)
    print(f"{'branch %':>10}{'all %':>8}   (floor {floor:g}% on both)", file=out)
    failed = False
    for area, t in sums.items():
        under = min(t.branch_percent, t.percent) < floor
        failed |= under
        row = f"{area:<9}{t.files:>6}{t.statements:>7}{t.branches:>10}{t.taken:>7}"
        print(
            f"{row}{t.branch_percent:>10.1f}{t.percent:>8.1f}{'   UNDER' if under else ''}",
            file=out,
        )
    for area, t in sums.items():
        if min(t.branch_percent, t.percent) < floor:
            print(f"\n{area}: under {floor:g}%, not taken or not run:", file=out)
            print("\n".join(f"  {m}" for m in t.missed), file=out)
    unmeasured = sorted(
        name
        for name, entry in measured.items()
        if entry["summary"]["num_statements"] and not entry["summary"]["covered_lines"]
    )
    if unmeasured:
        failed = True
        print("\nnever imported by the tests (no line ran):", *unmeasured, sep="\n  ", file=out)
    bare = bare_pragmas(root, files)
    if bare:
        failed = True
        print("\na pragma without its reason on the line:", *bare, sep="\n  ", file=out)
    return 1 if failed else 0


def main(argv: Sequence[str]) -> int:
    if len(argv) > 1 or any(arg.startswith("-") for arg in argv):
        print("usage: floors.py [DATA]", file=sys.stderr)
        return 2
    root = Path.cwd()
    data = Path(argv[0]) if argv else Path(coverage.Coverage().config.data_file)
    if not data.is_file():
        print(f"floors.py: no coverage data at {data} (run `pytest --cov` first)", file=sys.stderr)
        return 2
    return check(root, data)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
