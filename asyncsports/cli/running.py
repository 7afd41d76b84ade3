"""The one way a command runs: its event loop under the signal handler, and how it ends
(its errors as one line and an exit code, a closed pipe, an interrupt)."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import typer

from asyncsports import _signals
from asyncsports._signals import interrupts

from .clients import opened
from .exits import INTERRUPTED, PIPE_CLOSED
from .logs import setup_logging
from .messages import ClickError, fail, leaf, say
from .options import Globals

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from asyncsports.client import Client

__all__ = ["Job", "run", "run_async"]

Job = Callable[["Client"], Awaitable[int | None]]
"""A command's work with a client; a non-zero result is the exit code."""


def run_async(
    cfg: Globals,
    main: Callable[[], Awaitable[int | None]],
    *,
    interrupted: str = "asyncsports: interrupted",
    until_stopped: bool = False,
    says_interrupt: bool = False,
) -> None:
    """Run ``main()`` on an event loop; turn its errors into a message and an exit code.

    Every command's loop runs here, under the signal handler (:func:`asyncsports._signals.run`).
    ``interrupted``: the line to print when a signal ends it; ``main``'s non-zero result
    is the exit code. A first signal cancels ``main`` unless it registered a gentler stop
    (:meth:`~asyncsports._signals.Interrupts.stopping`). A command a signal stopped exits
    with the one rule's code (:attr:`~asyncsports._signals.Interrupts.code`): 130 at
    Ctrl-C, 143 at SIGTERM, 0 at SIGTERM for one that runs ``until_stopped`` (a service),
    whether ``main`` was cancelled or returned. ``says_interrupt``: ``main`` returns after
    a gentle stop and the command says so and exits with that code itself (backfill: its
    summary first).
    """
    import asyncio

    setup_logging(cfg.verbose)
    try:
        code = _signals.run(
            main, until_stopped=until_stopped, message=interrupted, says_interrupt=says_interrupt
        )
    except ClickError:
        raise  # a usage error found as the job starts (--metrics-port in use)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # Cancelled at a signal (KeyboardInterrupt: only where the handler could not be
        # installed, outside the main thread).
        stopped = interrupts.code if interrupts.code is not None else INTERRUPTED
        if stopped:  # a service stopped by SIGTERM ended as it should: nothing to say
            say(interrupted)
        raise typer.Exit(stopped) from None
    except (Exception, BaseExceptionGroup) as exc:
        if isinstance(leaf(exc), BrokenPipeError):
            # The reader went away (`| head`): stop quietly, as `yes | head` does. Point
            # stdout at devnull so that flushing it at exit does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(PIPE_CLOSED) from None
        fail(cfg, exc)
    if code:
        raise typer.Exit(code)


def run(
    cfg: Globals,
    job: Job,
    *,
    streaming: bool = False,
    follows: float | None = None,
    interrupted: str = "asyncsports: interrupted",
    until_stopped: bool = False,
    says_interrupt: bool = False,
    **options: Any,
) -> None:
    """:func:`run_async` ``job`` with a client for the settings (:func:`~.clients.opened`
    says what ``streaming``, ``follows`` and ``options`` are)."""

    async def main() -> int | None:
        async with opened(cfg, streaming=streaming, follows=follows, **options) as (client, _):
            return await job(client)

    run_async(
        cfg,
        main,
        interrupted=interrupted,
        until_stopped=until_stopped,
        says_interrupt=says_interrupt,
    )
