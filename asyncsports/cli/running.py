"""The one way a command runs: its event loop under the signal handler, and how it ends
(its errors as one line and an exit code, a closed pipe, an interrupt)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import typer

from .clients import opened
from .exits import INTERRUPTED, PIPE_CLOSED
from .interrupts import interrupts
from .logs import setup_logging
from .messages import ClickError, fail, leaf, say
from .options import Globals

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from asyncio import AbstractEventLoop

    from asyncsports.client import Client

__all__ = ["Job", "run", "run_async"]

log = logging.getLogger("asyncsports.cli")

Job = Callable[["Client"], Awaitable[int | None]]
"""A command's work with a client; a non-zero result is the exit code."""


def run_async(
    cfg: Globals,
    main: Callable[[], Awaitable[int | None]],
    *,
    interrupted: str = "asyncsports: interrupted",
) -> None:
    """Run ``main()`` on an event loop; turn its errors into a message and an exit code.

    Every command's loop runs here. ``interrupted``: the line to print when a signal
    ends it; ``main``'s non-zero result is the exit code. A first signal cancels
    ``main`` unless it registered a gentler stop (:meth:`~.interrupts.Interrupts.stopping`),
    and ``main`` then ends as it chooses (exit 0 when it returns).

    The event loop runs in an :class:`asyncio.Runner`, with SIGINT and SIGTERM handled
    by :data:`~.interrupts.interrupts` from before it starts until after it is closed:
    no signal can interrupt the loop's own shutdown (see that module).
    """
    import asyncio

    setup_logging(cfg.verbose)
    with interrupts.installed():
        interrupts.message = interrupted
        try:
            if interrupts.received:  # before the loop: do not start at all
                raise asyncio.CancelledError
            with asyncio.Runner() as runner:
                code = runner.run(_attached(main))
        except ClickError:
            raise  # a usage error found as the job starts (--metrics-port in use)
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Cancelled at a signal (KeyboardInterrupt: only where the handler could
            # not be installed, outside the main thread).
            say(interrupted)
            raise typer.Exit(interrupts.code or INTERRUPTED) from None
        except (Exception, BaseExceptionGroup) as exc:
            if isinstance(leaf(exc), BrokenPipeError):
                # The reader went away (`| head`): stop quietly, as `yes | head` does. Point
                # stdout at devnull so that flushing it at exit does not fail again.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise typer.Exit(PIPE_CLOSED) from None
            fail(cfg, exc)
    if code:
        raise typer.Exit(code)


async def _attached(main: Callable[[], Awaitable[int | None]]) -> int | None:
    import asyncio

    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().set_exception_handler(_after_signal_quietly)
    interrupts.attach(task)
    try:
        return await main()
    finally:
        interrupts.detach()


def _after_signal_quietly(loop: AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of a future nobody read: after a signal, what a cancelled library
    call left (asyncpg 0.29's "unexpected connection_lost() call" when its connect is
    cancelled), logged for --verbose only, not printed after "interrupted"."""
    if not interrupts.received:
        loop.default_exception_handler(context)
        return
    log.debug("after the signal: %s", context.get("message"), exc_info=context.get("exception"))


def run(
    cfg: Globals,
    job: Job,
    *,
    streaming: bool = False,
    follows: float | None = None,
    interrupted: str = "asyncsports: interrupted",
    **options: Any,
) -> None:
    """:func:`run_async` ``job`` with a client for the settings (:func:`~.clients.opened`
    says what ``streaming``, ``follows`` and ``options`` are)."""

    async def main() -> int | None:
        async with opened(cfg, streaming=streaming, follows=follows, **options) as (client, _):
            return await job(client)

    run_async(cfg, main, interrupted=interrupted)
