"""The coverage floors' checker (.ci/floors.py) on made-up data, and the areas it reads.

A made-up package of two areas, with coverage data written by hand (the arcs a run would
record), shows the checker passing at the floor and failing under it, naming what was
not taken; and pyproject.toml's measured files (``[tool.coverage.run] include``) are
held to the areas, so that no area's file goes unmeasured.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import io
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import coverage
import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_floors() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_floors", ROOT / ".ci" / "floors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


floors = load_floors()

PYPROJECT = """
[tool.coverage.run]
branch = true

[tool.asyncsports.coverage]
floor = 95

[tool.asyncsports.coverage.areas]
core = ["pkg/"]
odd = ["pkg/odd.py"]
"""
# Line 2's branch goes to 3 or to 4.
SOURCE = "def f(x):\n    if x:\n        return 1\n    return 2\n"
MODULE = {(-1, 1), (1, -1)}
TRUE = {(-1, 2), (2, 3), (3, -1)}
FALSE = {(-1, 2), (2, 4), (4, -1)}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    for name in ("__init__.py", "mod.py", "odd.py"):
        (tmp_path / "pkg" / name).write_text(SOURCE if name != "__init__.py" else "")
    monkeypatch.chdir(tmp_path)  # the data names files relative to where the tests ran
    return tmp_path


def record(tree: Path, arcs: dict[str, set[tuple[int, int]]]) -> Path:
    data = coverage.CoverageData(basename=str(tree / ".coverage"))
    data.add_arcs({str(tree / "pkg" / name): found for name, found in arcs.items()})
    data.write()
    return tree / ".coverage"


def run(tree: Path, data: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = floors.check(tree, data, out)
    return code, out.getvalue()


def test_every_branch_taken_passes(tree: Path) -> None:
    both = MODULE | TRUE | FALSE
    code, out = run(tree, record(tree, {"__init__.py": set(), "mod.py": both, "odd.py": both}))
    assert code == 0, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:] if line.strip()}
    # core: __init__ and mod (odd.py is its own area): 4 statements, 2 branches, both taken.
    assert rows["core"] == ["2", "4", "2", "2", "100.0", "100.0"]
    assert rows["odd"] == ["1", "4", "2", "2", "100.0", "100.0"]
    assert "UNDER" not in out


def test_a_branch_not_taken_fails_and_is_named(tree: Path) -> None:
    both = MODULE | TRUE | FALSE
    code, out = run(
        tree, record(tree, {"__init__.py": set(), "mod.py": both, "odd.py": MODULE | TRUE})
    )
    assert code == 1
    odd = next(line for line in out.splitlines() if line.startswith("odd "))
    # 3 of 4 statements run, 1 of 2 branches taken: 50% of branches, 4 of 6 in all.
    assert odd.split()[1:] == ["1", "4", "2", "1", "50.0", "66.7", "UNDER"]
    assert "pkg/odd.py:2->4" in out
    assert "pkg/odd.py:4 (not run)" in out
    assert "pkg/mod.py" not in out  # an area over its floor lists nothing


def test_a_file_never_imported_fails(tree: Path) -> None:
    both = MODULE | TRUE | FALSE
    code, out = run(tree, record(tree, {"mod.py": both}))
    assert code == 1
    assert "never imported by the tests (no line ran):\n  pkg/odd.py" in out
    # An empty file runs no line either, and has none to miss.
    assert "pkg/__init__.py" not in out


def test_a_bare_pragma_fails_and_a_reasoned_one_passes(tree: Path) -> None:
    both = MODULE | TRUE | FALSE
    data = record(tree, {"__init__.py": MODULE, "mod.py": both, "odd.py": both})
    (tree / "pkg" / "__init__.py").write_text("x = 1  # pragma: no branch  (straight line)\n")
    assert run(tree, data)[0] == 0
    (tree / "pkg" / "__init__.py").write_text("x = 1  # pragma: no cover\n")
    code, out = run(tree, data)
    assert code == 1
    assert "a pragma without its reason on the line:\n  pkg/__init__.py:1" in out


def test_a_file_belongs_to_its_longest_entry() -> None:
    areas = {"core": ["a/", "a/b/"], "retry": ["a/b/retry.py"], "other": ["a/b/"]}
    assert floors.area_of("a/x.py", areas) == "core"
    assert floors.area_of("a/b/retry.py", areas) == "retry"
    assert floors.area_of("b/x.py", areas) is None


def test_no_data_is_a_usage_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert floors.main([str(tree / "missing")]) == 2
    assert "no coverage data" in capsys.readouterr().err


def test_the_measured_files_are_the_areas_files() -> None:
    # Every file of an area is traced, and nothing else: a file traced outside the areas
    # costs time for no floor, and one left out would read as never imported.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["coverage"]["run"]["include"]
    _, areas = floors.settings(ROOT)
    in_areas = set(floors.area_files(ROOT, areas))
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "asyncsports").rglob("*.py")}
    traced = {name for name in package if any(fnmatch.fnmatch(name, glob) for glob in include)}
    assert traced == in_areas
    assert {"core", "secrets", "retry", "live", "store"} == set(areas)
