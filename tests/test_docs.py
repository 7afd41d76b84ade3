"""Every Python block of the README and the site, and every example, runs.

Against the embedded emulator, as a reader would paste them: an example that stops
working fails here (tests/docblocks.py says how a page's blocks run).
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docblocks import blocks, python_blocks, run_page

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# Blocks that cannot run as they are (a real service's address); kept few on purpose.
MAX_SKIPPED = 6


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


@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=page_id)
def test_page_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files a block writes (sports.sqlite) land here
    ran = run_page(python_blocks(page, ROOT))
    for block, printed in ran:
        if "print(" in block.code:
            assert printed.strip(), f"{block.where} printed nothing: its listing came back empty"


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
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, f"{where}: {line}\n{result.stderr}"
    assert result.stdout.strip(), f"{where}: {line} printed nothing"


def test_every_task_has_an_example() -> None:
    names = {p.stem for p in EXAMPLES}
    assert {"fixtures", "live_feed", "watch_events", "backfill", "mirror"} <= names
    assert (ROOT / "examples" / "test_with_plugin.py").exists()


@pytest.mark.parametrize(
    "script", [p for p in EXAMPLES if not p.name.startswith("test_")], ids=page_id
)
def test_example_runs(
    script: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip(), f"{page_id(script)} printed nothing"


def test_plugin_example_passes_in_strict_mode(tmp_path: Path) -> None:
    # As in a project of its own: pytest-asyncio in its default (strict) mode, no ini file.
    example = ROOT / "examples" / "test_with_plugin.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    options = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "asyncio_mode=strict"]
    command = [sys.executable, "-m", "pytest", *options, "-c", os.devnull, str(example)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout


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
