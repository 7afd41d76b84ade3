"""--help as plain text that fits the terminal: click's formatter, typer's panels.

typer's rich tables squeeze every column to fit the width and crop what does not fit
with an ellipsis: at 60 columns most option names were cut (``--coverage…``). Here each
option's names and metavar are written whole on the left and its help wraps beside
them, or below them when the names are long; options keep their panel
(``rich_help_panel``) as a section. It reads the same on every supported typer, whose
rich layout has changed from release to release, and needs no rich to print.
"""

from __future__ import annotations

import enum
import inspect
import re
import textwrap
from typing import Any

__all__ = ["argument_name", "write"]

OPTIONS = "Options"
INDENT = "  "
NBSP = "\xa0"  # a space that textwrap never breaks a line at


def argument_name(param: Any) -> str:
    """An argument as the usage line and errors name it: SPORT, FIXTURE_ID."""
    return str(param.metavar or param.name).upper()


def _range(param: Any) -> str:
    # Newer typer keeps the bounds on the option; older ones in a click IntRange type.
    bounds = param if hasattr(param, "min") else getattr(param, "type", None)
    low, high = getattr(bounds, "min", None), getattr(bounds, "max", None)
    if low is None and high is None:
        return ""
    if high is None:
        return f"x>={low}"
    return f"x<={high}" if low is None else f"{low}<=x<={high}"


def _default(param: Any) -> str:
    shown = param.show_default
    if isinstance(shown, str):
        return shown
    value = param.default
    if not shown or value is None or callable(value) or value == [] or value == ():
        return ""
    if getattr(param, "is_flag", False):
        # A flag off by default says nothing; a pair says which of the two, as typer does.
        if not param.secondary_opts or not isinstance(value, bool):
            return ""
        return str((param.opts if value else param.secondary_opts)[-1]).lstrip("-")
    if isinstance(value, enum.Enum):
        value = value.value
    return str(value)


def _names(param: Any) -> str:
    """``--sort FIELD[,DIR]``, ``-s, --sports SPORT``, ``--include-x / --exclude-x``."""
    short = sorted(param.opts, key=lambda o: o.startswith("--"))
    names = ", ".join(short)
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not (param.is_flag or param.count) and param.metavar:
        names += f" {param.metavar}"
    return names


def _record(param: Any) -> tuple[str, str]:
    if param.param_type_name == "argument":
        return argument_name(param), param.help or ""
    extra = []
    if param.envvar and getattr(param, "show_envvar", False):
        extra.append(f"env{NBSP}var: {param.envvar}")
    default = _default(param)
    if default:
        extra.append(f"default: {default}")
    bounds = _range(param)
    if bounds:
        extra.append(bounds)
    if param.required:
        extra.append("required")
    text = param.help or ""
    if extra:
        text = f"{text}  [{'; '.join(extra)}]".strip()
    return _names(param), text


def _sections(command: Any, ctx: Any) -> dict[str, list[tuple[str, str]]]:
    """The visible parameters by section: Arguments, Options, then each panel in order."""
    sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], OPTIONS: []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            name = "Arguments"
        else:
            name = getattr(param, "rich_help_panel", None) or OPTIONS
        sections.setdefault(name, []).append(_record(param))
    return sections


def _commands(group: Any, ctx: Any) -> list[tuple[str, str]]:
    rows = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            # The first paragraph whole, where click would cut it at 45 characters.
            rows.append((name, sub.short_help or (sub.help or "").split("\n\n")[0]))
    return rows


def _wrap(text: str, width: int) -> list[str]:
    """``text``'s paragraphs wrapped to ``width``, a blank line between them; one that
    starts with ``\\b`` (click's convention) kept as written; an example's command line
    continued with backslashes, so that it still pastes into a shell."""
    lines: list[str] = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        words = re.sub(r"[ \t\n]+", " ", paragraph).strip()  # not at NBSP: not split()
        if paragraph.startswith("\b"):
            lines += paragraph[1:].strip("\n").splitlines()
        elif paragraph.startswith("Example: "):
            shown = textwrap.wrap(
                words,
                width - 2,
                subsequent_indent="    ",
                break_on_hyphens=False,
                break_long_words=False,
            )
            lines += [line + " \\" for line in shown[:-1]] + shown[-1:]
        else:
            # Not at a hyphen: "--rate-limit" stays whole on one line.
            lines += textwrap.wrap(words, width, break_on_hyphens=False)
        lines.append("")
    return [line.replace(NBSP, " ") for line in lines[:-1]]


def _rows(rows: list[tuple[str, str]], column: int, width: int) -> list[str]:
    """A definition list: each term, then its text wrapped from ``column`` on (on the
    next line when the term is as wide as the column)."""
    lines = []
    for term, text in rows:
        wrapped = _wrap(text, max(width - column, 10)) if text else []
        if len(INDENT + term) + 2 <= column and wrapped:
            lines.append(f"{INDENT}{term:<{column - len(INDENT)}}{wrapped.pop(0)}".rstrip())
        else:
            lines.append(INDENT + term)
        lines += [" " * column + line if line else "" for line in wrapped]
    return lines


def write(command: Any, ctx: Any, formatter: Any, usage: list[str]) -> None:
    """Write ``command``'s help into click's ``formatter`` (``usage``: the usage pieces).

    The text is as wide as the formatter (the terminal's width, up to 80 columns); the
    terms of every section line up, up to two fifths of that width.
    """
    formatter.write_usage(ctx.command_path, " ".join(usage))
    width = formatter.width
    sections = _sections(command, ctx)
    if hasattr(command, "list_commands"):
        sections["Commands"] = _commands(command, ctx)
    terms = [len(INDENT + term) + 2 for rows in sections.values() for term, _ in rows]
    column = min(max(terms, default=0), width * 2 // 5)
    lines: list[str] = []
    if command.help:
        lines += ["", *(INDENT + line if line else "" for line in _wrap(command.help, width - 2))]
    for name, rows in sections.items():
        if rows:
            lines += ["", f"{name}:", *_rows(rows, column, width)]
    for name, rows in getattr(command, "tables", {}).items():  # the top level's exit codes
        own = max(len(INDENT + term) + 2 for term, _ in rows)
        lines += ["", f"{name}:", *_rows(rows, own, width)]
    if command.epilog:
        lines += ["", *(INDENT + line if line else "" for line in _wrap(command.epilog, width - 2))]
    formatter.write("\n".join(lines) + "\n")
