"""The published benchmark table (benchmarks/results/latest.md, quoted in benchmarks/README.md's
"Latest results") says when it was run, and the versions it measured are ones pyproject.toml
allows: a table measured on versions the package no longer declares describes another
package. It is regenerated on an idle machine (benchmarks/README.md, "Regenerating the
published table"), never in CI; this only checks what it says of itself.

The check is a function of the table's text and the declared requirements, so that the
tests at the end feed it made-up tables and show each way it fails.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from pathlib import Path

# packaging: pytest's own dependency, so every test venv has it.
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).parents[2]
TABLE = ROOT / "benchmarks" / "results" / "latest.md"
README = ROOT / "benchmarks" / "README.md"
RUN = re.compile(r"^Run (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}) UTC with `([^`]+)`", re.M)
VERSIONS = re.compile(r"^Versions: (.+)\.$", re.M)
OWN = "asyncsports"
"""The package itself: its version is its own, not a range pyproject declares."""
CARRIED = {"pydantic-core": "pydantic"}
"""Measured packages that come with a declared one (pydantic's core, pinned by pydantic)."""


def declared() -> dict[str, SpecifierSet]:
    """Every requirement of pyproject.toml (the core's and every extra's), by name: the
    ranges it declares, intersected where a name comes more than once."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found: dict[str, SpecifierSet] = {}
    extras = [text for group in project["optional-dependencies"].values() for text in group]
    for text in [*project["dependencies"], *extras]:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        found[name] = found.get(name, SpecifierSet()) & req.specifier
    return found


def problems(text: str, ranges: dict[str, SpecifierSet], today: dt.date) -> list[str]:
    """What is wrong with a published table's header: no date (or one to come), no
    versions, a version that is not one, outside its range, or of nothing declared."""
    said: list[str] = []
    run = RUN.search(text)
    if run is None:
        said.append("no 'Run YYYY-MM-DD HH:MM UTC with `command`' line: the table's date")
    elif dt.date.fromisoformat(run[1]) > today:
        said.append(f"run on {run[1]}, after today ({today})")
    versions = VERSIONS.search(text)
    if versions is None:
        return [*said, "no 'Versions: name version, ...' line"]
    for part in versions[1].split(", "):
        name, _, version = part.partition(" ")
        key = canonicalize_name(name)
        if key == OWN:
            continue
        try:
            parsed = Version(version)
        except InvalidVersion:
            said.append(f"{name}: {version!r} is not a version")
            continue
        spec = ranges.get(CARRIED.get(key, key))
        if spec is None:
            said.append(f"{name} {version}: not a requirement of pyproject.toml")
        elif key not in CARRIED and not spec.contains(parsed, prereleases=True):
            said.append(f"{name} {version}: outside pyproject.toml's {spec}")
    return said


def header(text: str) -> list[str]:
    """The lines a copy of the table must repeat: its run, machine and versions."""
    return [x for x in text.splitlines() if x.startswith(("Run ", "Machine: ", "Versions: "))]


def test_the_published_table_is_dated_and_measured_what_pyproject_allows() -> None:
    today = dt.datetime.now(dt.UTC).date()
    assert problems(TABLE.read_text(encoding="utf-8"), declared(), today) == []


def test_the_readme_quotes_the_published_tables_header() -> None:
    quoted = README.read_text(encoding="utf-8").partition("## Latest results")[2]
    assert header(TABLE.read_text(encoding="utf-8")) == header(quoted)


GOOD = """# Benchmark results (full mode)

Run 2026-11-22 06:19 UTC with `python -m benchmarks --instructions` in 244 s.
Versions: asyncsports 0.1.0, aiohttp 3.14.5, msgspec 0.22.0, pydantic-core 2.46.4.
"""
RANGES = {
    "aiohttp": SpecifierSet(">=3.11"),
    "msgspec": SpecifierSet(">=0.18.6,<0.23"),
    "pydantic": SpecifierSet(">=2.8"),
}
TODAY = dt.date(2026, 12, 6)


def test_a_good_header_passes() -> None:
    assert problems(GOOD, RANGES, TODAY) == []


def test_a_version_outside_its_range_is_named() -> None:
    older = GOOD.replace("aiohttp 3.14.5", "aiohttp 3.10.0")
    assert problems(older, RANGES, TODAY) == ["aiohttp 3.10.0: outside pyproject.toml's >=3.11"]
    newer = GOOD.replace("msgspec 0.22.0", "msgspec 0.23.1")
    assert problems(newer, RANGES, TODAY) == [
        "msgspec 0.23.1: outside pyproject.toml's <0.23,>=0.18.6"
    ]


def test_a_package_nothing_declares_is_named() -> None:
    text = GOOD.replace("msgspec 0.22.0", "orjson 3.10.0")
    assert problems(text, RANGES, TODAY) == ["orjson 3.10.0: not a requirement of pyproject.toml"]
    carried = {k: v for k, v in RANGES.items() if k != "pydantic"}
    assert problems(GOOD, carried, TODAY) == [
        "pydantic-core 2.46.4: not a requirement of pyproject.toml"
    ]


def test_a_missing_or_future_date_is_named() -> None:
    undated = GOOD.replace("Run 2026-11-22 06:19 UTC", "Run some time ago")
    assert problems(undated, RANGES, TODAY)[0].startswith("no 'Run YYYY-MM-DD")
    assert problems(GOOD, RANGES, dt.date(2026, 11, 21)) == [
        "run on 2026-11-22, after today (2026-11-21)"
    ]


def test_missing_versions_are_named() -> None:
    text = GOOD.replace("Versions:", "Packages:")
    assert problems(text, RANGES, TODAY) == ["no 'Versions: name version, ...' line"]
    bad = GOOD.replace("aiohttp 3.14.5", "aiohttp latest")
    assert problems(bad, RANGES, TODAY) == ["aiohttp: 'latest' is not a version"]
