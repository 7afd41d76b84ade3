"""The command's long-running processes (``sync``, ``changes --follow``) as tests drive
them: their stderr lines kept with when each came, their ``/metrics`` and ``/healthz``
read, stopped by a signal or killed -9.

A :class:`Command` runs the package this process imports (its directory first on the
child's ``PYTHONPATH``), with none of the ``ASYNCSPORTS_*`` variables of the shell.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import asyncsports
from support.cli import clean_env

ROOT = str(Path(asyncsports.__file__).resolve().parents[1])
"""Where the package the tests import lives: what a child process must import too."""


def child_env() -> dict[str, str]:
    """:func:`~support.cli.clean_env` with this process's package first on the path."""
    path = os.environ.get("PYTHONPATH")
    return clean_env(PYTHONPATH=ROOT if not path else f"{ROOT}{os.pathsep}{path}")


class Command:
    """An ``asyncsports`` process whose stderr lines are kept with when they came."""

    def __init__(
        self, args: list[str], *, out: bool = False, env: dict[str, str] | None = None
    ) -> None:
        """``out``: keep its stdout's lines too (:meth:`wait_for_out`); else discarded.
        ``env``: variables set for it on top of :func:`child_env`."""
        self.args = args
        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE if out else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**child_env(), **(env or {})},
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.out: queue.Queue[tuple[float, str]] = queue.Queue()
        self.seen: list[str] = []
        self.line = ""  # the last line waited for
        self.metrics = ""
        threading.Thread(
            target=self._read, args=(self.proc.stderr, self.lines), daemon=True
        ).start()
        if out:  # read as it comes: a child never blocks on a full pipe
            threading.Thread(
                target=self._read, args=(self.proc.stdout, self.out), daemon=True
            ).start()

    @staticmethod
    def _read(stream: Any, into: queue.Queue[tuple[float, str]]) -> None:
        for line in stream:
            into.put((time.monotonic(), line))

    def wait_for_out(self, text: str, timeout: float) -> str:
        """The first line on stdout holding ``text`` (waiting up to ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                _, line = self.out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                said = self.drain()
                raise AssertionError(
                    f"no {text!r} on stdout within {timeout:g} s: {said}"
                ) from None
            if text in line:
                return line

    def wait_for(self, text: str, timeout: float) -> float:
        """When a line holding ``text`` came (waiting up to ``timeout`` seconds for it)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                at, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout:g} s: {self.seen}") from None
            self.seen.append(line)
            if "metrics on " in line:
                self.metrics = line.split("metrics on ")[1].strip().removesuffix("/metrics")
            if text in line:
                self.line = line
                return at

    def drain(self) -> list[str]:
        """Every line said so far (those not waited for yet taken in too)."""
        while True:
            try:
                self.seen.append(self.lines.get_nowait()[1])
            except queue.Empty:
                return self.seen

    def health(self) -> dict[str, Any]:
        try:
            with urllib.request.urlopen(f"{self.metrics}/healthz", timeout=10) as r:
                return dict(json.loads(r.read()))
        except urllib.error.HTTPError as exc:
            return dict(json.loads(exc.read()))

    def scrape(self) -> list[str]:
        with urllib.request.urlopen(f"{self.metrics}/metrics", timeout=10) as r:
            return r.read().decode().splitlines()

    def value(self, name: str) -> float:
        """The value of the metric ``name`` (one with no labels)."""
        [line] = [x for x in self.scrape() if x.startswith(f"{name} ")]
        return float(line.split()[1])

    def role(self, metric: str = "asyncsports_sync_role") -> str:
        """The role the labelled gauge ``metric`` says is this process's."""
        return next(
            line.split('"')[1]
            for line in self.scrape()
            if line.startswith(f"{metric}{{") and line.endswith(" 1.0")
        )

    def budget_used(self) -> float:
        return self.value("asyncsports_sync_budget_used")

    def signal(self, sig: signal.Signals, timeout: float = 30) -> int:
        """Send ``sig``, and the exit status (-9: killed, not ended within ``timeout``)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def stop(self) -> int:
        """SIGTERM, and the exit status (-9: killed, not stopped within 30 s). It never
        raises: a test's ``finally`` stops every process and the proxy after it."""
        return self.signal(signal.SIGTERM)

    def kill(self) -> float:
        """SIGKILL (at once, if it still runs); when it was sent."""
        at = time.monotonic()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        return at
