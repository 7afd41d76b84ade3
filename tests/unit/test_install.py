"""The package installs as the docs say: from a checkout, or from the wheel it builds.

Every ``pip install`` and ``pip wheel`` line a reader copies from README.md and the site
(docs/**/*.md and the files they include with ``--8<--``; not the changelog, which is
history), in ``sh`` blocks and in inline code, runs as written, each distinct line once,
in a copy of the checkout (where ``.`` and ``dist/`` mean what they mean in one; the
``pip wheel`` lines run first, as the docs order them). It runs offline: ``PIP_NO_INDEX``
and a wheelhouse of the project's dependencies built once for the module, without
asyncsports in it, so a line that wants asyncsports from a package index fails here as it
does for a reader ("No matching distribution").

An install line runs with ``--dry-run --report``: pip resolves it whole, as it would to
install it (the project's metadata built by its backend in an isolated build environment,
each extra looked up, every requirement found among the wheels), and the report says what
it would install: the line's requirements with their extras, and every dependency of
those extras. Unpacking the wheels proves nothing more about a line, and cost the most: a
line took 9 to 29 s installed in a venv of its own (4.7 s of it making the venv), and
takes 1 to 5 s resolved. What a dry run does not do, build the editable wheel and install
it, the README's set-up line does for real, once; its command then runs and the package
imports from the checkout. The dry runs share one venv, which nothing is installed into.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from support.docblocks import INCLUDE, blocks

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
HISTORY = "CHANGELOG.md"  # included by docs/changelog.md: it quotes what was, as it was
FENCED = re.compile(r"^[ \t]*(```+|~~~+).*?^[ \t]*\1[ \t]*$", re.S | re.M)
SHELL = ("sh", "bash", "console", "shell")
VALUED = {"-e", "--editable", "-w", "--wheel-dir", "-r", "--requirement", "-c", "--constraint"}


def commands(text: str) -> list[str]:
    """The shell commands of a Markdown text, from its shell blocks and its inline code:
    split at ``&&`` and ``;``, comments dropped, each normalized by shlex."""
    lines = [
        line
        for b in blocks(text)
        if b.lang in SHELL
        for line in b.code.replace("\\\n", " ").splitlines()
    ]
    lines += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", FENCED.sub("", text))]
    found = []
    for line in lines:
        for part in re.split(r"&&|;", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:  # not shell (an unbalanced quote in prose code)
                continue
            if words:
                found.append(shlex.join(words))
    return found


def include(text: str) -> str:
    """A page with the files it includes (``--8<--``) read in, the changelog left out."""
    return INCLUDE.sub(
        lambda m: "" if m["file"] == HISTORY else (ROOT / m["file"]).read_text(), text
    )


def install_lines() -> dict[str, list[str]]:
    """Each distinct ``pip install`` or ``pip wheel`` line, with the pages that say it."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for line in commands(include(page.read_text(encoding="utf-8"))):
            if re.match(r"pip (install|wheel) ", line):
                found.setdefault(line, []).append(str(page.relative_to(ROOT)))
    return found


LINES = install_lines()
WHEEL_LINES = [line for line in LINES if line.startswith("pip wheel ")]


def test_commands_are_read_from_blocks_and_inline_code() -> None:
    text = (
        "Run `pip install\n'dlt[postgres]'` say.\n\n```sh\npip install -e '.[x]'  # why\n"
        "cd a && pip wheel -w dist . ; ls\npip install \\\n  b\n```\n\n```python\n`pip no`\n```\n"
    )
    assert commands(text) == [
        "pip install -e '.[x]'",
        "cd a",
        "pip wheel -w dist .",
        "ls",
        "pip install b",
        "pip install 'dlt[postgres]'",
    ]


def test_the_docs_install_from_a_checkout_or_the_wheel() -> None:
    assert "pip install -e '.[cli]'" in LINES and WHEEL_LINES
    version = (ROOT / "asyncsports" / "_version.py").read_text().split('"')[1]
    assert f"pip install 'dist/asyncsports-{version}-py3-none-any.whl[cli]'" in LINES
    # The sync guide's first command (--metrics-port) needs the sync extra: it says so.
    assert "docs/guides/sync.md" in LINES["pip install -e '.[cli,sync]'"]


def test_every_extra_the_docs_name_exists() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"].keys()
    named = {
        e
        for line in LINES
        for group in re.findall(r"(?:\.|\.whl)\[([^]]+)\]", line)
        for e in group.split(",")
    }
    assert named and named <= extras, named - extras


def requirements() -> list[str]:
    """What any line may need from an index: the build backend, every dependency of every
    extra, and what the lines name beside asyncsports itself (which is not on any index)."""
    project = PYPROJECT["project"]
    # editables: what hatchling asks for to build an editable install (pip install -e).
    found = [*PYPROJECT["build-system"]["requires"], "editables", *project["dependencies"]]
    found += [r for extra in project["optional-dependencies"].values() for r in extra]
    for line in LINES:
        words = shlex.split(line)[2:]
        found += [
            w
            for before, w in zip(["", *words], words, strict=False)
            if not w.startswith(("-", ".")) and before not in VALUED and "/" not in w
        ]
    return sorted({r for r in found if not r.startswith("asyncsports")})


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wheels of everything the lines need but asyncsports, built once (from pip's cache)."""
    house = tmp_path_factory.mktemp("wheelhouse")
    command = [sys.executable, "-m", "pip", "wheel", "-q", "-w", str(house), *requirements()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    return house


def new_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv the dry runs, the ``pip wheel`` lines and the refused line share: none of
    them installs anything into it."""
    return new_venv(tmp_path_factory.mktemp("shared") / "venv")


def in_venv(line: str, venv: Path, cwd: Path, wheelhouse: Path) -> subprocess.CompletedProcess[str]:
    """Run a shell line in ``venv``, offline against the wheelhouse."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_NO_COLOR": "1"}
    env["PIP_NO_COMPILE"] = "1"  # byte-compiling took half the time, and proves nothing here
    command = ["bash", "-euo", "pipefail", "-c", line]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path, venv: Path) -> Path:
    """A copy of what a checkout builds from, with the docs' wheel built in it."""
    tree = tmp_path_factory.mktemp("checkout")
    shutil.copy(ROOT / "pyproject.toml", tree)
    shutil.copy(ROOT / "README.md", tree)
    shutil.copytree(
        ROOT / "asyncsports", tree / "asyncsports", ignore=shutil.ignore_patterns("__pycache__")
    )
    for line in WHEEL_LINES:
        result = in_venv(line, venv, tree, wheelhouse)
        assert result.returncode == 0, f"{line}\n{result.stdout}{result.stderr}"
    return tree


INSTALLS = [line for line in LINES if line.startswith("pip install ")]
FIRST = "pip install -e '.[cli]'"  # README.md's set-up line, installed for real


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wanted(line: str) -> dict[str, set[str]]:
    """What an install line asks for: each requirement's name (asyncsports for the
    checkout and the wheel) with the extras it names."""
    words = shlex.split(line)[2:]
    found: dict[str, set[str]] = {}
    for before, word in zip(["", *words], words, strict=False):
        if word.startswith("-") or (before in VALUED and before not in ("-e", "--editable")):
            continue
        target, _, extras = word.partition("[")
        local = target == "." or target.endswith(".whl")
        name = "asyncsports" if local else re.split(r"[<>=!~;@ ]", target)[0]
        found[canonical(name)] = {e.strip() for e in extras.rstrip("]").split(",") if e.strip()}
    return found


def dry_run(line: str, report: Path) -> str:
    """The install line, resolved and reported (``report``, JSON), nothing installed."""
    return line.replace(
        "pip install ", f"pip install --dry-run --report {shlex.quote(str(report))} ", 1
    )


def named(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match and ";" not in requirement, requirement  # a marker could leave it out
    return canonical(match[0])


@pytest.mark.slow
@pytest.mark.parametrize("line", INSTALLS)
def test_install_line_works(
    line: str, checkout: Path, wheelhouse: Path, venv: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    result = in_venv(dry_run(line, report), venv, checkout, wheelhouse)
    assert result.returncode == 0, f"{LINES[line]}: {line}\n{result.stdout}{result.stderr}"
    # An unknown extra is only a warning to pip: the line would install less than it says.
    assert "does not provide the extra" not in result.stdout + result.stderr
    installs = {
        canonical(i["metadata"]["name"]): i for i in json.loads(report.read_text())["install"]
    }
    asked = wanted(line)
    assert asked, line
    for name, extras in asked.items():
        assert name in installs and installs[name]["requested"], (name, sorted(installs))
        assert set(map(canonical, installs[name].get("requested_extras", []))) == set(
            map(canonical, extras)
        )
    extras = PYPROJECT["project"]["optional-dependencies"]
    needed = {named(r) for extra in asked.get("asyncsports", set()) for r in extras[extra]}
    if "asyncsports" in asked:
        needed |= {named(r) for r in PYPROJECT["project"]["dependencies"]}
    assert needed <= installs.keys(), needed - installs.keys()


@pytest.mark.slow
def test_the_readme_set_up_line_installs_and_runs_from_the_checkout(
    checkout: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    """The one line installed for real, in a new venv: the editable wheel built and
    installed, the command on PATH, the package imported from the checkout (run from an
    empty directory, so that the working directory cannot hide a broken install)."""
    assert "README.md" in LINES[FIRST]
    venv = new_venv(tmp_path / "venv")
    line = f"{FIRST} && cd {shlex.quote(str(tmp_path))} && asyncsports --help >/dev/null"
    line += " && python -c 'import asyncsports; print(asyncsports.__file__)'"
    result = in_venv(line, venv, checkout, wheelhouse)
    assert result.returncode == 0, f"{line}\n{result.stdout}{result.stderr}"
    assert "Successfully installed" in result.stdout
    assert "does not provide the extra" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == str(checkout / "asyncsports" / "__init__.py")


@pytest.mark.slow
def test_a_line_that_wants_asyncsports_from_an_index_fails(
    checkout: Path, wheelhouse: Path, venv: Path, tmp_path: Path
) -> None:
    line = dry_run("pip install 'asyncsports[cli]'", tmp_path / "report.json")
    result = in_venv(line, venv, checkout, wheelhouse)
    assert result.returncode != 0
    assert "No matching distribution found for asyncsports" in result.stderr


@pytest.mark.slow
def test_the_wheel_holds_the_package_and_nothing_else(
    wheelhouse: Path, venv: Path, tmp_path: Path
) -> None:
    # Built from the tree itself (not the copy), so that a rule that lets tests or docs in
    # would show.
    line = f"pip wheel --no-deps -w {tmp_path / 'dist'} {ROOT}"
    result = in_venv(line, venv, tmp_path, wheelhouse)
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "dist").glob("asyncsports-*-py3-none-any.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    info = wheel.name.split("-py3")[0] + ".dist-info/"
    assert {n for n in names if not n.startswith(("asyncsports/", info))} == set()
    package = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "asyncsports").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert "asyncsports/py.typed" in package and "asyncsports/emulator/_world.py" in package
    assert {n for n in names if n.startswith("asyncsports/")} == package
    entry_points = zipfile.ZipFile(wheel).read(info + "entry_points.txt").decode()
    assert "[pytest11]\nasyncsports = asyncsports.testing.plugin\n" in entry_points
    assert "asyncsports = asyncsports.__main__:main" in entry_points
