"""What CI installs agrees with what the project declares.

``constraints-lowest.txt`` pins every direct dependency at the lower bound pyproject.toml
gives it (the lowest-versions leg of .ci/run), and .ci/run runs the README's commands as
written (``.ci/readme.py`` extracts them).
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
# name, extras, specifiers: enough of PEP 508 for what pyproject.toml writes.
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def normal(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements() -> list[str]:
    """Every direct requirement: the core's and every extra's."""
    project = PYPROJECT["project"]
    found = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        found += extra
    return found


def lower_bounds() -> dict[str, str]:
    """Each direct dependency's lower bound (``>=``), by normalized name."""
    bounds: dict[str, str] = {}
    for requirement in requirements():
        match = REQUIREMENT.match(requirement)
        assert match, requirement
        name, _, spec = match.groups()
        lower = [s[2:].strip() for s in spec.split(",") if s.strip().startswith(">=")]
        assert len(lower) == 1, f"{requirement}: every direct dependency needs one lower bound"
        previous = bounds.setdefault(normal(name), lower[0])
        assert previous == lower[0], f"{name}: two lower bounds, {previous} and {lower[0]}"
    return bounds


def pins() -> dict[str, str]:
    """The constraints file's pins, by normalized name."""
    found: dict[str, str] = {}
    for line in (ROOT / "constraints-lowest.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"constraints-lowest.txt: {line!r} is not name==version"
            found[normal(name)] = version.strip()
    return found


def test_the_lowest_constraints_pin_every_direct_dependency_at_its_lower_bound() -> None:
    bounds, pinned = lower_bounds(), pins()
    assert {"aiohttp", "msgspec", "anyio", "typer", "pytest"} <= bounds.keys()
    assert pinned == bounds


def test_a_dependency_without_a_lower_bound_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    extras = {**PYPROJECT["project"]["optional-dependencies"], "new": ["somepackage"]}
    monkeypatch.setitem(PYPROJECT["project"], "optional-dependencies", extras)
    with pytest.raises(AssertionError, match="somepackage: every direct dependency"):
        lower_bounds()


def test_the_readme_names_two_set_up_commands_and_the_docs_command() -> None:
    readme = runpy.run_path(str(ROOT / ".ci" / "readme.py"))
    app, tests = readme["setup"](README)
    assert app.startswith("pip install -e '.[cli]' && asyncsports ")
    assert "--emulator" in app
    assert tests == "pip install -e '.[test]' && pytest"
    assert readme["docs"](README) == "pip install -e '.[docs]' && mkdocs build"
    # A third block would be a set-up step CI does not run.
    with pytest.raises(ValueError, match="two one-line sh blocks"):
        readme["setup"](README.replace("## A first program", "```sh\nmake\n```\n\n## A"))


def test_ci_runs_the_extracted_commands_in_throwaway_venvs() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for name in ("setup_app", "setup_tests", "docs"):
        assert re.search(rf'^    in_venv "\$1-\w+" "\$2" "\${name}"$', script, flags=re.M), name
    # The two legs run side by side, each to a log of its own, and both are waited for.
    assert re.search(r'^export PYTEST_ADDOPTS=".*--cov --cov-report="$', script, flags=re.M)
    newest = re.search(r'^\(\n([^()]*?)^\) >"\$tmp/newest.log" 2>&1 &$', script, flags=re.M | re.S)
    assert newest, "the newest leg runs in a subshell of its own"
    steps = [line for line in newest[1].splitlines() if not line.lstrip().startswith("#")]
    assert " ".join(steps).split() == [
        *("export", "ASYNCSPORTS_SLOW_SHARE=0/2"),
        *("tested", "newest", '"$newest"', "checks"),
    ]
    # checks builds the newest leg's site and wheel while its benchmarks run.
    checks = re.search(r"^checks\(\) \{\n(.*?)^\}$", script, flags=re.M | re.S)
    assert checks and re.search(r'^    built newest "\$newest"$', checks[1], flags=re.M)
    # Both legs' coverage, combined, is held to the floors once the legs are done.
    combine = ".coverage $tmp/lowest-tree/.coverage && python .ci/floors.py $tmp/coverage"
    assert re.search(
        r'^in_venv newest-tests "\$newest" "coverage combine .*' + re.escape(combine),
        script,
        flags=re.M,
    )
    assert re.search(r'^wait "\$newest_leg" \|\| status=\$\?$', script, flags=re.M)
    assert re.search(r'^wait "\$lowest_leg" \|\| status=\$\?$', script, flags=re.M)
    lowest = re.search(r'^\(\n([^()]*?)^\) >"\$tmp/lowest.log"', script, flags=re.M | re.S)
    assert lowest, "the lowest leg runs in a subshell of its own"
    assert lowest[1].split() == [
        "cd",
        '"$tmp/lowest-tree"',
        "export",
        "PIP_CONSTRAINT=$PWD/constraints-lowest.txt",
        "ASYNCSPORTS_SLOW_SHARE=1/2",
        *("tested", "lowest", '"$oldest"'),
        *("built", "lowest", '"$oldest"'),
    ]
    assert "--system-site-packages" not in script
    printed = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "readme.py"), "setup"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert printed == runpy.run_path(str(ROOT / ".ci" / "readme.py"))["setup"](README)


def test_ci_runs_the_main_job_from_the_built_wheel_outside_the_tree() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^job=\$\{setup_app#\*&& \}$", script, flags=re.M)
    assert re.search(r'^    wheel "\$1" "\$2"$', script, flags=re.M), "each leg builds the wheel"
    wheel = re.search(r"^wheel\(\) \{\n(.*?)^\}$", script, flags=re.M | re.S)
    assert wheel, "a wheel() step"
    build, install = re.findall(r'^    in_venv "\$1-\w+" "\$2" "(.*)"$', wheel[1], flags=re.M)
    assert "python -m build" in build and "twine check --strict" in build
    assert ".whl)[cli]" in install and 'cd \\"\\$(mktemp -d)\\" && $job' in install
    # The job the wheel runs is the README's, less its install step.
    app = runpy.run_path(str(ROOT / ".ci" / "readme.py"))["setup"](README)[0]
    assert app.partition("&& ")[2].startswith("asyncsports backfill --emulator")


def test_the_supported_pythons_are_the_ones_ci_runs() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    newest = re.search(r"^NEWEST=(3\.\d+)$", script, flags=re.M)
    oldest = re.search(r"^OLDEST=(3\.\d+)$", script, flags=re.M)
    assert newest and oldest
    assert PYPROJECT["project"]["requires-python"] == f">={oldest[1]}"
    assert f"Python {oldest[1]} to {newest[1]}" in README
    classifiers = PYPROJECT["project"]["classifiers"]
    low, high = (int(v.split(".")[1]) for v in (oldest[1], newest[1]))
    for minor in range(low, high + 1):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
