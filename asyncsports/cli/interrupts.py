"""SIGINT and SIGTERM: how every command stops, at any moment, within seconds.

Python's own SIGINT handler raises KeyboardInterrupt between any two bytecodes, and
SIGTERM's default kills the process on the spot. In an asyncio program the first can
land inside the event loop's shutdown (``shutdown_default_executor`` never awaited),
or cut that shutdown short before it tells a non-daemon worker thread to stop, so the
thread waits on its queue for ever and the interpreter waits for the thread at exit
(the hang), or come after the work is done (a bare KeyboardInterrupt). So a command
never lets either signal raise anything. :data:`interrupts` owns both signals for the
whole life of the process (``main()`` installs it first thing; :func:`~.running.run_async`
installs it around a command run in a process whose handlers are someone else's, as
tests do) and turns each signal into a decision taken on the event loop:

1. the first signal stops the command gracefully: what it registered with
   :meth:`Interrupts.stopping` runs (the backfill commits what it fetched and returns
   its report), or, without one, the command's task is cancelled;
2. the second cancels the command's task: everything unwinds at its next await, and
   the backfill's writer drops what is queued and aborts its statement;
3. the third ends the process at once (``os._exit``): SQLite keeps only committed
   transactions, so a database is resumable even then.

A signal before the command's loop starts keeps the command from starting; one after
its loop has ended is noted (the outcome is already decided) and counts towards the
third; once Python exits (atexit), they are ignored. The exit code of an interrupted
command is 128 + the first signal's number: 130 for SIGINT, 143 for SIGTERM.

Before ``main()`` runs (the interpreter starting, ``import asyncsports``), Python's
defaults still apply.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only named: --help need not import asyncio
    import asyncio

__all__ = ["SIGNALS", "Interrupts", "interrupts"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """The process's SIGINT and SIGTERM handler, and what the running command asked for."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []
        self.message = "asyncsports: interrupted"
        """The line printed when the process ends at the third signal."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._stop: Callable[[], None] | None = None

    @property
    def code(self) -> int | None:
        """The exit code of an interrupted command: 128 + the first signal, or None."""
        return 128 + int(self.received[0]) if self.received else None

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
        """Handle the signals for the duration, unless already installed (by ``main()``).

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

        Signals that came before (between the check in ``run_async`` and now) are acted on
        as if they came now.
        """
        self._loop = task.get_loop()
        self._task = task
        for n in range(1, len(self.received) + 1):
            self._loop.call_soon(self._act, n)

    def detach(self) -> None:
        """The command's work is over: later signals are only noted."""
        self._loop = self._task = self._stop = None

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
        os._exit(self.code or 130)


interrupts = Interrupts()
"""The one handler of the process."""
