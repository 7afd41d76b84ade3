"""A mkdocs hook: the command-line reference, rendered from the command itself.

A page holding ``<!-- cli-reference -->`` gets the ``--help`` of ``asyncsports`` and of
every subcommand, as typer prints it, so the reference cannot drift from the code; one
holding ``<!-- exit-codes -->`` gets the table of exit codes.
"""

from __future__ import annotations

import os
from typing import Any

MARKER = "<!-- cli-reference -->"
EXIT_CODES = "<!-- exit-codes -->"
WIDTH = 88  # what the content column shows beside both sidebars


def _commands(group: Any, path: list[str]) -> list[list[str]]:
    """Every command path under a click group, depth first, in --help order."""
    found = [path]
    if hasattr(group, "list_commands"):  # a group (typer vendors its own click)
        ctx = group.context_class(group, info_name=path[-1] if path else "asyncsports")
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _commands(sub, [*path, name])
    return found


def render() -> str:
    """The Markdown of the whole reference: one section per command."""
    import typer
    from typer.testing import CliRunner

    from asyncsports.cli import app

    env = {
        "COLUMNS": str(WIDTH),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "_TYPER_FORCE_DISABLE_TERMINAL": "1",
    }
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        runner = CliRunner()
        parts = []
        for path in _commands(typer.main.get_command(app), []):
            # terminal_width: click's runner would print help 80 columns wide whatever
            # COLUMNS says.
            result = runner.invoke(
                app, [*path, "--help"], prog_name="asyncsports", env=env, terminal_width=WIDTH
            )
            if result.exit_code != 0:
                raise RuntimeError(f"asyncsports {' '.join(path)} --help failed: {result.output}")
            title = " ".join(["asyncsports", *path])
            level = "#" * min(2 + len(path), 4)
            text = "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())
            parts.append(f"{level} `{title}`\n\n```text\n{text}\n```\n")
        return "\n".join(parts)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def exit_codes() -> str:
    """The exit codes as a Markdown table, from the command's own (exits.EXIT_CODES)."""
    from asyncsports.cli.exits import exit_code_table

    rows = [f"| {code} | {text} | {used} |" for code, text, used in exit_code_table()]
    return "\n".join(["| Code | Meaning | Used by |", "| --- | --- | --- |", *rows])


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Replace the markers with the exit-code table and the rendered reference."""
    if EXIT_CODES in markdown:
        markdown = markdown.replace(EXIT_CODES, exit_codes())
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())
