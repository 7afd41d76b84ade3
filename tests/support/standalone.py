"""``python -m asyncsports.emulator`` in a subprocess, and what its banner says."""

from __future__ import annotations

import signal
import subprocess
import sys
from types import TracebackType

from support.cli import clean_env


class Standalone:
    """A standalone emulator on a free port (``args`` as on its command line); ``info``
    maps each banner line's name to its value (``base URL``, ``live URL``, ``token``...).
    A context manager: leaving it stops the process and checks it exited 0."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "asyncsports.emulator", "--port", "0", *args],
            stdout=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        self.info: dict[str, str] = {}
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                if line.startswith("Try:"):
                    break
                name, _, value = line.strip().partition("  ")
                if value:
                    self.info[name] = value.strip()
            assert "base URL" in self.info, self.info  # it started (or the banner changed)
        except BaseException:
            self.stop()  # no emulator left behind a failed start
            raise

    @property
    def base_url(self) -> str:
        return self.info["base URL"]

    def peak_rss(self) -> int | None:
        """The process's peak resident memory in bytes (Linux only)."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return None

    def stop(self) -> int:
        """Stop it as a service is stopped, SIGTERM (exit 0; Ctrl-C: 130); its exit code
        (-9: killed, not stopped within 10 s)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(timeout=10)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code

    def __enter__(self) -> Standalone:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self.stop() == 0
