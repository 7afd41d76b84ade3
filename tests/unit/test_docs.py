"""Every Python block of the README and the site, and every example, runs.

Against the embedded emulator, as a reader would paste them: an example that stops
working fails here (tests/support/docblocks.py says how a page's blocks run). Each page and each
example runs in a process of its own with every warning an error (``-X dev -W error``),
and must leave nothing on stderr: no "Unclosed client session", no ResourceWarning, no
task left running.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support.cli import project_env
from support.docblocks import blocks, python_blocks

pytestmark = pytest.mark.slow  # the pages' blocks and examples run in subprocesses

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# Blocks that cannot run as they are (a real service's address); kept few on purpose.
MAX_SKIPPED = 7


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_blocks_are_found_with_their_notes() -> None:
    text = "# t\n\n```python\nx = 1\n```\n\n<!-- not run: a real URL -->\n\n```py\ny\n```\n\n  ```sh\n  ls\n  ```\n"
    found = blocks(text)
    assert [(b.lang, b.code, b.skip) for b in found] == [
        ("python", "x = 1\n", None),
        ("py", "y\n", "a real URL"),
        ("sh", "ls\n", None),
    ]
    assert [b.line for b in found] == [3, 9, 13]


def test_skipped_blocks_are_few_and_say_why() -> None:
    skipped = [b for page in PAGES for b in python_blocks(page, ROOT) if b.skip is not None]
    assert len(skipped) <= MAX_SKIPPED, [b.where for b in skipped]
    assert all(len(b.skip or "") > 5 for b in skipped)


def test_blocks_fit_the_page() -> None:
    # About 88 columns of code fit the site's content column beside both sidebars.
    code = [b for p in PAGES for b in python_blocks(p, ROOT)] + [
        b for p in PAGES for b in blocks(p.read_text(), page_id(p)) if b.lang in ("sh", "bash")
    ]
    wide = [f"{b.where}: {line}" for b in code for line in b.code.splitlines() if len(line) > 88]
    assert not wide, wide


def runnable(page: Path) -> bool:
    return any(b.skip is None for b in python_blocks(page, ROOT))


DOCBLOCKS = ROOT / "tests" / "support" / "docblocks.py"
# The library's own log records (a retry, say) are what a guide shows, not a leak.
LIBRARY_LOG = re.compile(r"^asyncsports[\w.]* WARNING: ")


def session(path: Path, cwd: Path) -> tuple[str, str]:
    """Run a page or a script as a reader's session would, in a process of its own with
    every warning an error: what it printed, and what it left on stderr."""
    command = [sys.executable, "-X", "dev", "-W", "error", str(DOCBLOCKS), str(path)]
    env = project_env(PYTHONPATH=str(ROOT))
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    assert result.returncode == 0, f"{path.name} failed:\n{result.stderr}"
    left = [line for line in result.stderr.splitlines() if not LIBRARY_LOG.match(line)]
    return result.stdout, "\n".join(left)


@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=page_id)
def test_page_blocks_run(page: Path, tmp_path: Path) -> None:
    out, left = session(page, tmp_path)  # files a block writes (sports.sqlite) land there
    assert not left, f"{page_id(page)} leaves this behind:\n{left}"
    printed = {r["where"]: r["printed"] for r in json.loads(out)}
    for block in python_blocks(page, ROOT):
        if block.where in printed and "print(" in block.code:
            assert printed[block.where].strip(), f"{block.where} printed nothing"


OPEN = """```python
from asyncsports.emulator import Emulator

emu = Emulator(seed=0)
await emu.start()
client = await emu.client().open()
print(len(await client.fixtures.list("soccer", page_size=5).collect()))
```
"""
CLOSE = """```python
await client.aclose()
await emu.close()
```
"""


def test_a_page_that_leaks_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "leaks.md"
    page.write_text(OPEN)
    _, left = session(page, tmp_path)
    assert "Unclosed client session" in left and "unclosed <asyncsports.Client" in left
    assert "unclosed <socket.socket" in left  # the emulator's listening sockets
    page.write_text(OPEN + CLOSE)
    assert session(page, tmp_path)[1] == ""


LEAKS = """import asyncio

from asyncsports.emulator import Emulator


async def main() -> None:
    async with Emulator(seed=0) as emu:
        client = await emu.client().open()  # and never closed
        print(len(await client.fixtures.list("soccer").collect()))


asyncio.run(main())
"""


def test_a_script_that_leaks_is_caught(tmp_path: Path) -> None:
    script = tmp_path / "leaks.py"
    script.write_text(LEAKS)
    out, left = session(script, tmp_path)
    assert out.strip() and "Unclosed client session" in left


def shell_lines() -> list[tuple[str, str]]:
    """The shell lines that run a command against the emulator: ``asyncsports --emulator``."""
    found = []
    for page in PAGES:
        for b in blocks(page.read_text(), page_id(page)):
            if b.lang in ("sh", "bash", "console"):
                lines = b.code.splitlines()
                found += [(b.where, x) for x in lines if x.startswith("asyncsports --emulator ")]
    return found


@pytest.mark.parametrize(("where", "line"), shell_lines(), ids=[w for w, _ in shell_lines()])
def test_shell_lines_run(where: str, line: str, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "asyncsports.cli", *shlex.split(line)[1:]]
    env = project_env(PYTHONPATH=str(ROOT))
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, f"{where}: {line}\n{result.stderr}"
    assert result.stdout.strip(), f"{where}: {line} printed nothing"


def test_the_readme_links_every_guide() -> None:
    where_next = (ROOT / "README.md").read_text().partition("## Where next")[2]
    linked = set(re.findall(r"\(docs/guides/([\w-]+\.md)\)", where_next))
    assert linked == {p.name for p in (ROOT / "docs" / "guides").glob("*.md")}


def test_every_task_has_an_example() -> None:
    names = {p.stem for p in EXAMPLES}
    assert {"fixtures", "live_feed", "watch_events", "backfill", "mirror"} <= names
    assert (ROOT / "examples" / "test_with_plugin.py").exists()


@pytest.mark.parametrize(
    "script", [p for p in EXAMPLES if not p.name.startswith("test_")], ids=page_id
)
def test_example_runs(script: Path, tmp_path: Path) -> None:
    out, left = session(script, tmp_path)
    assert out.strip(), f"{page_id(script)} printed nothing"
    assert not left, f"{page_id(script)} leaves this behind:\n{left}"


def test_plugin_example_passes_in_strict_mode(tmp_path: Path) -> None:
    # As in a project of its own: pytest-asyncio in its default (strict) mode, no ini file
    # and no setting (the plugin defaults asyncio_default_fixture_loop_scope, whose absence
    # pytest-asyncio warns about); every warning an error, so that a fixture left open (an
    # unclosed client) fails.
    example = ROOT / "examples" / "test_with_plugin.py"
    env = project_env(PYTHONPATH=str(ROOT))
    options = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-W", "error"]
    python = [sys.executable, "-X", "dev", "-W", "error", "-m", "pytest"]
    command = [*python, *options, "-c", os.devnull, str(example)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout
    assert "warning" not in result.stdout and not result.stderr, result.stdout + result.stderr
    assert "asyncio_default_fixture_loop_scope" not in result.stdout + result.stderr


def hook(name: str) -> Any:
    """A module of docs/_hooks (the site's build hooks), imported from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docstring_roles_read_as_markdown() -> None:
    markdown = hook("rst").markdown
    text = "See :meth:`get` and :class:`~asyncsports.Client`, like this::\n\n    x = 1\n"
    assert markdown(text) == "See `get` and `Client`, like this:\n\n    x = 1\n"
    assert markdown("Intro.\n\n::\n\n    code\n") == "Intro.\n\n\n    code\n"


def test_the_cli_reference_has_every_command() -> None:
    from asyncsports.cli import app

    text = hook("cli").render()
    commands = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    assert commands and all(f"### `asyncsports {c}`" in text for c in commands)
    assert "#### `asyncsports snooker previous-tournament-winners`" in text
    assert max(len(line) for line in text.splitlines()) <= 88 + 2


def test_the_reference_check_finds_a_missing_name() -> None:
    missing = hook("coverage").missing
    assert "asyncsports.Client" in missing(set())
    # A name re-exported elsewhere is covered by its entry under either path.
    assert "asyncsports.APIError" not in missing({"asyncsports.errors.APIError"})


def test_the_reference_check_reads_the_source() -> None:
    # The site builds with the docs extra alone: the check must import no module of the
    # package (asyncsports.testing.plugin imports pytest, which that extra lacks).
    code = f"""
import importlib.util, sys
sys.modules["pytest"] = None  # an import of pytest fails
spec = importlib.util.spec_from_file_location("coverage", {str(ROOT / "docs/_hooks/coverage.py")!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert "asyncsports.sports_client" not in module.missing(set())
assert "asyncsports.testing.plugin.sports_client" in module.missing(set())
print(sorted(m for m in sys.modules if m.split(".")[0] == "asyncsports"))
"""
    env = project_env(PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


def test_the_recording_guides_test_passes_against_the_recording_it_made(tmp_path: Path) -> None:
    # The guide records match-day.jsonl.gz, then shows a test of the pytest plugin that
    # replays it; run as a reader would: the page in a fresh directory, the recording
    # checked in where the test says, the test's block run by pytest.
    guide = ROOT / "docs" / "guides" / "recording.md"
    session(guide, tmp_path)
    (block,) = [b for b in python_blocks(guide, ROOT) if "@pytest.mark.emulator(" in b.code]
    where = re.search(r'replay="([^"]+)"', block.code)
    assert where is not None, block.where
    checked_in = tmp_path / "project" / where[1]
    checked_in.parent.mkdir(parents=True)
    (tmp_path / "match-day.jsonl.gz").rename(checked_in)
    (tmp_path / "project" / "test_guide.py").write_text(block.code)
    env = project_env(PYTHONPATH=str(ROOT))
    options = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-W", "error"]
    command = [sys.executable, "-m", "pytest", *options, "-c", os.devnull, "--rootdir=."]
    result = subprocess.run(
        [*command, "test_guide.py"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path / "project",
    )
    assert result.returncode == 0, f"{block.where}:\n{result.stdout}{result.stderr}"
    assert " passed" in result.stdout


def test_duckdb_is_shown_through_the_python_package_an_extra_installs() -> None:
    # No extra installs DuckDB's command-line tool; the dlt extra installs its Python
    # package, which runs the same SQL (duckdb.sql). The backfill guide's block runs with
    # the page (test_page_blocks_run), on the Parquet that the page exports.
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    installed = [d for deps in extras["optional-dependencies"].values() for d in deps]
    assert any(re.match(r"duckdb\b", d) for d in installed)
    tool = re.compile(r"^\s*duckdb\s", re.M)
    shell = [
        b.where
        for p in PAGES
        for b in blocks(p.read_text(), page_id(p))
        if b.lang in ("sh", "bash", "console") and tool.search(b.code)
    ]
    assert not shell, shell
    guide = ROOT / "docs" / "guides" / "backfill.md"
    runs = [b for b in python_blocks(guide, ROOT) if "duckdb.sql(" in b.code and b.skip is None]
    assert runs, "the backfill guide queries the Parquet export with duckdb.sql"
