"""How the `asyncsports` command fails, run as a user runs it: a 404 says what was looked up,
--emulator with an address is a usage error, Ctrl-C at start-up is no traceback, and
--save says which file it wrote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import asyncsports

CLI = [sys.executable, "-m", "asyncsports"]
TIMEOUT = 60


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCSPORTS_")}
    out.update(extra)
    return out


def run(
    *args: str, environ: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=environ or env(),
                          cwd=cwd, timeout=TIMEOUT)  # fmt: skip


def error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The one error line of a command that failed with ``code``."""
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("asyncsports: error: ")
    return line


# ------------------------------------------------------------ --emulator


@pytest.mark.parametrize(
    ("args", "extra", "said"),
    [
        (["--emulator", "--base-url", "http://127.0.0.1:9", "fixtures", "soccer"], {},
         "'--base-url': not with --emulator, which serves its own address"),
        (["fixtures", "soccer", "--live-url", "ws://127.0.0.1:9", "--emulator"], {},
         "'--live-url': not with --emulator,"),
        (["--streaming-url", "http://127.0.0.1:9", "events"], {"ASYNCSPORTS_EMULATOR": "1"},
         "'--streaming-url': not with --emulator (set by ASYNCSPORTS_EMULATOR),"),
    ],
    ids=["base url", "live url after the command", "emulator from the environment"],
)  # fmt: skip
def test_emulator_with_a_typed_address_is_a_usage_error(
    args: list[str], extra: dict[str, str], said: str
) -> None:
    proc = run(*args, environ=env(COLUMNS="300", **extra))
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_emulator_outranks_an_address_from_the_environment() -> None:
    # A profile that exports the real service's address does not stop a try with --emulator.
    environ = env(ASYNCSPORTS_BASE_URL="http://127.0.0.1:9", ASYNCSPORTS_TOKEN="t")
    proc = run("--emulator", "fixtures", "soccer", "--limit", "2", environ=environ)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 2


# --------------------------------------------------------------- start-up


def script() -> Path:
    """The installed `asyncsports` console script, beside this Python."""
    path = Path(sys.executable).with_name("asyncsports")
    assert path.exists(), f"no console script at {path}: pip install -e ."
    return path


LONG = ["--emulator", "events", "--watch", "--interval", "1"]
SHORT = ["--emulator", "fixtures", "basketball", "--limit", "3"]


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.4])
@pytest.mark.parametrize("args", [SHORT, LONG], ids=["fixtures --limit 3", "events --watch"])
def test_ctrl_c_at_start_up_is_no_traceback(args: list[str], delay: float) -> None:
    proc = subprocess.Popen([script(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env())  # fmt: skip
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if args is SHORT and proc.returncode == 0:  # done before the signal came: all of it
        assert len(out.splitlines()) == 3
    else:
        assert proc.returncode == 130, err
        assert err.strip().endswith("interrupted")


def test_importing_the_package_loads_its_names_on_first_use() -> None:
    # What keeps the console script's start quick enough to take Ctrl-C first.
    code = "import sys, asyncsports; print(sorted({'aiohttp', 'msgspec'} & set(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT)  # fmt: skip
    assert proc.stdout.strip() == "[]", proc.stderr
    for name in asyncsports.__all__:
        assert getattr(asyncsports, name) is not None
    assert asyncsports.errors.NotFoundError is asyncsports.NotFoundError
    with pytest.raises(AttributeError):
        _ = asyncsports.Nothing  # type: ignore[attr-defined]
