"""SIGINT and SIGTERM: how every command stops, at any moment, within seconds, and the
one rule of its exit code. The ``asyncsports`` command (every subcommand) and the
standalone ``asyncsports-emulator`` both run their event loop here (:func:`run`), so
that needs no cli extra.

Python's own SIGINT handler raises KeyboardInterrupt between any two bytecodes, and
SIGTERM's default kills the process on the spot. In an asyncio program the first can
land inside the event loop's shutdown (``shutdown_default_executor`` never awaited),
or cut that shutdown short before it tells a non-daemon worker thread to stop, so the
thread waits on its queue for ever and the interpreter waits for the thread at exit
(the hang), or come after the work is done (a bare KeyboardInterrupt). So a command
never lets either signal raise anything. :data:`interrupts` owns both signals for the
whole life of the process (:func:`own_process`, first thing; :func:`run` installs it
around a run in a process whose handlers are someone else's, as tests do) and turns
each signal into a decision taken on the event loop:

1. the first signal stops the command gracefully: what it registered with
   :meth:`Interrupts.stopping` runs (the backfill commits what it fetched and returns
   its report), or, without one, the command's task is cancelled;
2. the second cancels the command's task: everything unwinds at its next await, and
   the backfill's writer drops what is queued and aborts its statement;
3. the third ends the process at once (``os._exit``): SQLite keeps only committed
   transactions, so a database is resumable even then.

A signal before the command's loop starts keeps the command from starting; one after
its loop has ended is noted (the outcome is already decided) and counts towards the
third; once Python exits (atexit), they are ignored.

The exit code (:attr:`Interrupts.code`, the one rule): 128 + the first signal's number,
130 for SIGINT, 143 for SIGTERM; but a command that runs until it is stopped (a
service: ``sync``, ``changes --follow``, ``events --watch``, the emulator; it says so
with ``until_stopped``) exits 0 at SIGTERM, which is how a service is stopped. Ctrl-C
is 130 everywhere, and the third signal ends any command with 128 + the first.

Before :func:`own_process` runs (the interpreter starting, ``import asyncsports``),
Python's defaults still apply (``asyncsports.__main__`` notes signals meanwhile).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only named: --help need not import asyncio
    import asyncio

__all__ = [
    "INTERRUPTED",
    "SIGNALS",
    "TERMINATED",
    "Interrupts",
    "exit_code",
    "interrupts",
    "own_process",
    "run",
]

log = logging.getLogger("asyncsports.signals")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
INTERRUPTED = 128 + signal.SIGINT
"""130: the exit code of Ctrl-C, as a shell reports a process SIGINT ended."""
TERMINATED = 128 + signal.SIGTERM
"""143: the exit code of SIGTERM, but for a command that runs until stopped (0)."""


def exit_code(first: signal.Signals, *, until_stopped: bool) -> int:
    """The exit code of a command that ``first`` stopped (see the module's docstring)."""
    if until_stopped and first == signal.SIGTERM:
        return 0  # how a service is stopped: its normal end
    return 128 + int(first)


class Interrupts:
    """The process's SIGINT and SIGTERM handler, and what the running command asked for."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []
        self.message = "asyncsports: interrupted"
        """The line printed when the process ends at the third signal."""
        self.until_stopped = False
        """The running command runs until it is stopped: SIGTERM is its normal end."""
        self.during = 0
        """How many signals came before the command's work was over (:meth:`detach`): a
        later one does not change how it ended."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._stop: Callable[[], None] | None = None

    @property
    def code(self) -> int | None:
        """The exit code of a command a signal stopped (:func:`exit_code`), or None."""
        if not self.received:
            return None
        return exit_code(self.received[0], until_stopped=self.until_stopped)

    # ------------------------------------------------------------- installing

    def install(self) -> None:
        """Handle SIGINT and SIGTERM from now on (the main thread only)."""
        for sig in SIGNALS:
            signal.signal(sig, self._handle)

    def installed_here(self) -> bool:
        """Whether this object handles the signals now."""
        return all(signal.getsignal(sig) == self._handle for sig in SIGNALS)

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Handle the signals for the duration, unless already installed (:func:`own_process`).

        Installed here, it starts with no signal received and puts the previous handlers
        back at the end. Outside the main thread, where no handler can be set, it does
        nothing.
        """
        if self.installed_here() or threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
        self.received = []
        self.install()
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def ignore(self) -> None:
        """Ignore the signals from now on: the process is exiting, its exit code is set.

        Python resets signal handlers to the defaults while it finalizes, after atexit;
        a signal then would kill the process (-SIGINT rather than 130). SIG_IGN it
        leaves alone.
        """
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    # ------------------------------------------------- the command's event loop

    def attach(self, task: asyncio.Task[Any]) -> None:
        """Act on signals for ``task``, the command's main task (call it from that task).

        Signals that came before (between the check in :func:`run` and now) are acted on
        as if they came now.
        """
        self._loop = task.get_loop()
        self._task = task
        for n in range(1, len(self.received) + 1):
            self._loop.call_soon(self._act, n)

    def detach(self) -> None:
        """The command's work is over: later signals are only noted."""
        self._loop = self._task = self._stop = None
        self.during = len(self.received)

    @contextmanager
    def stopping(self, stop: Callable[[], None]) -> Iterator[None]:
        """Call ``stop()`` (on the loop) at the first signal, instead of cancelling."""
        self._stop = stop
        try:
            yield
        finally:
            self._stop = None

    # ------------------------------------------------------------ the handler

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Runs in the main thread between two bytecodes, anywhere: it must not raise,
        # and it leaves the decision to the loop (call_soon_threadsafe also wakes it).
        self.received.append(signal.Signals(signum))
        n = len(self.received)
        if n >= 3:
            self._exit_now()
        loop = self._loop
        if loop is not None:
            # A closed loop (RuntimeError): the command is ending anyway.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._act, n)

    def _act(self, n: int) -> None:
        if self._task is None or self._task.done():
            return
        if n == 1 and self._stop is not None:
            self._stop()
        else:
            self._task.cancel()

    def _exit_now(self) -> None:
        try:
            sys.stderr.flush()
            os.write(2, f"{self.message}\n".encode(errors="replace"))
        except Exception:  # a closed or busy stderr: the exit code says it
            pass
        os._exit(128 + int(self.received[0]))  # forced: not a service's clean stop


interrupts = Interrupts()
"""The one handler of the process."""


def own_process(noted: Sequence[signal.Signals] = ()) -> None:
    """Handle SIGINT and SIGTERM from now to the end of the process (an entry point's
    first step); ``noted``: signals received before, as if received now."""
    interrupts.received.clear()  # a test may run an entry point again in its process
    interrupts.install()
    interrupts.received[:0] = noted
    # While Python exits, SIG_IGN: it resets handlers to the defaults as it finalizes.
    atexit.register(interrupts.ignore)


def run(
    main: Callable[[], Awaitable[int | None]],
    *,
    until_stopped: bool = False,
    message: str = "asyncsports: interrupted",
    says_interrupt: bool = False,
) -> int | None:
    """``main()`` on an event loop of its own under :data:`interrupts`; the exit code.

    The loop runs in an :class:`asyncio.Runner`, the signals handled from before it
    starts until after it is closed: no signal can interrupt the loop's own shutdown.
    ``until_stopped``: see :attr:`Interrupts.until_stopped`; ``message``: the line of
    the third signal. The exit code is ``main``'s non-zero result, else, when a signal
    stopped it gently (``main`` returned), :attr:`Interrupts.code`, unless the command
    ``says_interrupt`` itself (it exits with that code after saying more). Raises
    :class:`asyncio.CancelledError` when a signal came before the loop or cancelled
    ``main``; the exit code is then :attr:`Interrupts.code`.
    """
    import asyncio

    with interrupts.installed():
        interrupts.message = message
        interrupts.until_stopped = until_stopped
        if interrupts.received:  # before the loop: do not start at all
            raise asyncio.CancelledError
        with asyncio.Runner() as runner:
            code = runner.run(_attached(main))
    if not code and not says_interrupt and interrupts.during:
        return interrupts.code
    return code


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


def _after_signal_quietly(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of a future nobody read: after a signal, what a cancelled library
    call left (asyncpg 0.29's "unexpected connection_lost() call" when its connect is
    cancelled), logged for --verbose only, not printed after "interrupted"."""
    if not interrupts.received:
        loop.default_exception_handler(context)
        return
    log.debug("after the signal: %s", context.get("message"), exc_info=context.get("exception"))
