"""Run the Python blocks of a Markdown page, in order, as a reader pasting them would.

A page's blocks share one namespace and one event loop, like a ``python -m asyncio``
session: a block may ``await`` at top level and use what an earlier block defined (the
guides open with a block that starts an emulator and binds ``client``). A block that calls
``asyncio.run`` is a whole script and runs on its own, outside the page's loop.

A block preceded by ``<!-- not run: why -->`` is skipped (a real service's address, say);
the reason is required.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n]*)$")
INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<file>[^"]+)"\s*$', re.M)  # pymdownx.snippets
SKIP = re.compile(r"<!--\s*not run:\s*(?P<why>\S[^>]*?)\s*-->")
BLOCK_TIMEOUT = 20.0


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it starts (1-based line), its language and its text."""

    path: str
    line: int
    lang: str
    code: str
    skip: str | None = None
    raw: str = ""  # the block as written, before files included with --8<-- are read in

    @property
    def script(self) -> bool:
        """Whether the block is a whole program (it runs its own event loop)."""
        return "asyncio.run(" in self.code

    @property
    def source(self) -> str:
        """The code, shifted so that a traceback names the Markdown file's own lines."""
        return "\n" * self.line + self.code

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def blocks(text: str, path: str = "<md>") -> list[Block]:
    """The fenced blocks of a Markdown text, with the ``not run`` note before each."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        lang = (m["info"].split() or [""])[0].strip("{}.").lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = [line.removeprefix(indent) for line in lines[i + 1 : j]]
        before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        note = SKIP.search(before)
        found.append(
            Block(path, i + 1, lang, "\n".join(body) + "\n", note["why"] if note else None)
        )
        i = j + 1
    return found


def python_blocks(path: Path, root: Path) -> list[Block]:
    """The Python blocks of one Markdown file, files included with ``--8<--`` read in."""
    rel = str(path.relative_to(root))
    found = []
    for b in blocks(path.read_text(), rel):
        if b.lang in ("python", "py", "python3"):
            code = INCLUDE.sub(lambda m: (root / m["file"]).read_text(), b.code)
            found.append(Block(b.path, b.line, b.lang, code, b.skip, raw=b.code))
    return found


def run_script(block: Block) -> str:
    """Run a whole-program block as ``__main__``; what it printed."""
    out = io.StringIO()
    code = compile(block.source, block.path, "exec")
    with contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__"})
    return out.getvalue()


async def run_snippet(block: Block, namespace: dict[str, Any]) -> str:
    """Run a block in ``namespace`` with top-level ``await`` allowed; what it printed."""
    out = io.StringIO()
    code = compile(
        block.source, block.path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    with contextlib.redirect_stdout(out):
        result = eval(code, namespace)
        if inspect.isawaitable(result):
            await asyncio.wait_for(result, BLOCK_TIMEOUT)
    return out.getvalue()


async def close(namespace: dict[str, Any]) -> None:
    """Close what a page left open: its clients first, then its emulators."""
    from asyncsports import Client
    from asyncsports.emulator import Emulator

    values = list(namespace.values())
    for value in values:
        if isinstance(value, asyncio.Task) and not value.done():
            value.cancel()
            with contextlib.suppress(BaseException):
                await value
    for kind in (Client, Emulator):
        for value in values:
            if isinstance(value, kind):
                await value.aclose() if kind is Client else await value.close()


EXAMPLE = re.compile(r'^\s*--8<--\s+"examples/[^"/]+\.py"\s*$')


def run_page(page: list[Block]) -> list[tuple[Block, str]]:
    """Run a page's blocks in order; each runnable block with what it printed.

    A block that is only an example script, included, is left to the test that runs the
    examples themselves.
    """
    loop = asyncio.new_event_loop()
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    done: list[tuple[Block, str]] = []
    try:
        for block in page:
            if block.skip is not None or EXAMPLE.match(block.raw):
                continue
            if block.script:
                done.append((block, run_script(block)))
            else:
                done.append((block, loop.run_until_complete(run_snippet(block, namespace))))
    finally:
        loop.run_until_complete(close(namespace))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    return done
