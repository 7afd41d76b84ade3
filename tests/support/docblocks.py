"""Run the Python blocks of a Markdown page, in order, as a reader pasting them would.

A page's blocks share one namespace and one event loop, like a ``python -m asyncio``
session: a block may ``await`` at top level and use what an earlier block defined (the
guides open with a block that starts an emulator and binds ``client``). A block that calls
``asyncio.run`` is a whole script and runs on its own, outside the page's loop.

A block preceded by ``<!-- not run: why -->`` is skipped (a real service's address, say);
the reason is required.

A page closes what it opens, as a reader's session must: nothing here closes it for the
page. Run as ``python -X dev -W error tests/support/docblocks.py FILE`` (a page, or a script such
as an example), it runs in a process of its own, collects what the page or script left
behind, and so prints on stderr every "Unclosed client session", ResourceWarning or task
left running that a reader would see; tests/unit/test_docs.py asserts that stderr holds
nothing but the library's own log records (a retry that a guide shows, say).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import gc
import inspect
import io
import json
import logging
import re
import runpy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)[ \t]*(?P<info>[^\n]*)$")
INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<file>[^"]+)"\s*$', re.M)  # pymdownx.snippets
SKIP = re.compile(r"<!--\s*not run:\s*(?P<why>\S[^>]*?)\s*-->")
# A bound for a block that hangs, not a speed: the warehouse guide's dlt load took over 20 s
# on CI's saturated cores (four test processes on two, with -X dev and coverage).
BLOCK_TIMEOUT = 90.0


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
    rel = str(path.relative_to(root) if path.is_relative_to(root) else path)
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


EXAMPLE = re.compile(r'^\s*--8<--\s+"examples/[^"/]+\.py"\s*$')


def run_page(page: list[Block]) -> list[tuple[Block, str]]:
    """Run a page's blocks in order; each runnable block with what it printed.

    A block that is only an example script, included, is left to the test that runs the
    examples themselves. Tasks the page left running are named on stderr and cancelled;
    what else it left open is collected while the loop still runs, so that its warnings
    are reported as a reader leaving ``python -m asyncio`` would see them.
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
        # As a reader's session ends: what the page no longer names is collected, the
        # async generators it left are closed; what still runs then was left running.
        namespace.clear()
        gc.collect()
        loop.run_until_complete(loop.shutdown_asyncgens())
        for task in asyncio.all_tasks(loop):
            print(f"task left running: {task!r}", file=sys.stderr)
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        gc.collect()
    return done


def _timing(record: logging.LogRecord) -> bool:
    # asyncio's debug mode (-X dev) reports slow callbacks: the machine's load, not a leak.
    return not str(record.msg).startswith("Executing %s took")


LOG = "%(name)s %(levelname)s: %(message)s"  # so that the library's own warnings are told apart


def main(argv: list[str]) -> int:
    """Run one page (``.md``: what each block printed, as JSON on stdout) or one script."""
    logging.basicConfig(format=LOG, level=logging.WARNING)
    logging.getLogger("asyncio").addFilter(_timing)
    path = Path(argv[1]).resolve()
    if path.suffix == ".py":
        sys.argv = [str(path)]
        runpy.run_path(str(path), run_name="__main__")
    else:
        root = Path(__file__).resolve().parents[2]
        ran = run_page(python_blocks(path, root))
        json.dump([{"where": b.where, "printed": out} for b, out in ran], sys.stdout)
    gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
