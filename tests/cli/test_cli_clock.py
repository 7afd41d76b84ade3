"""The embedded emulator's clock under the command: it runs where a command follows.

`--follow`, `--watch` and `sync` run it at `--emulator-speed` (600 by default for the
first two, so that a live fixture ends within seconds; 1 for sync); every other command
keeps it still, so that the same command shows the same data every time.
"""

from __future__ import annotations

import asyncio
import queue
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest
from support import CLI, TIMEOUT, clean_env, invoke, lines, run

import asyncsports.emulator
from asyncsports.cli.options import FOLLOW_SPEED
from asyncsports.emulator import Emulator

FINISHING = "Post Match Check Complete"
ANY_ID = str(uuid.UUID(int=1))


def records(output: str) -> list[dict[str, Any]]:
    return [msgspec.json.decode(line) for line in output.splitlines()]


def live(sport: str = "basketball") -> list[dict[str, Any]]:
    """The sport's live fixtures by the emulator's still clock, the first to end first."""
    result = invoke("--emulator", "fixtures", sport, "--status", "live")
    assert result.exit_code == 0, result.stderr
    found = records(result.stdout)
    assert found, f"no live {sport} fixture"
    return sorted(found, key=lambda f: f["startDateUTC"])


async def _finished(sport: str, fixture_id: str) -> tuple[str, str]:
    # The same emulator as the command's (seed 0, default scale), its clock past the end.
    async with Emulator() as emu, emu.client() as client:
        emu.clock.advance(6 * 3600)
        actions = await client.actions.list(sport, fixture_id).collect()
    last = actions[-1].fixture_action
    return str(last.action_id), str(last.fixture_action_type)


def finishing(sport: str, fixture_id: str) -> tuple[str, str]:
    """The fixture's finishing action: (action id, type)."""
    return asyncio.run(_finished(sport, fixture_id))


def last_action(changes: list[dict[str, Any]]) -> tuple[str, str]:
    record = changes[-1]["record"]
    assert record["finished"] is True
    action = record["fixtureAction"]
    return action["actionId"], action["fixtureActionType"]


# --------------------------------------------- which speed each command gets


class Stopped(Exception):
    """Raised by the emulator below once its speed is known: nothing else is needed."""


@pytest.fixture
def speeds(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The clock speed of each emulator the command makes (which then stops it)."""
    seen: list[float] = []

    class Clocked(Emulator):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            seen.append(self.clock.speed)
            raise Stopped

    monkeypatch.setattr(asyncsports.emulator, "Emulator", Clocked)
    return seen


@pytest.mark.parametrize(
    ("args", "env", "speed"),
    [
        (["fixtures", "basketball"], {}, 0),
        (["actions", "basketball", ANY_ID], {}, 0),
        # Not a following command: still, whatever the option or the environment says.
        (["fixtures", "basketball", "--emulator-speed", "60"], {}, 0),
        (["statistics", "basketball", ANY_ID], {"ASYNCSPORTS_EMULATOR_SPEED": "60"}, 0),
        (["actions", "basketball", ANY_ID, "--follow"], {}, FOLLOW_SPEED),
        (["actions", "basketball", ANY_ID, "--follow", "--via", "poll"], {}, FOLLOW_SPEED),
        (["actions", "basketball", ANY_ID, "-f", "--emulator-speed", "60"], {}, 60),
        (["--emulator-speed", "7", "statistics", "basketball", ANY_ID, "-f"], {}, 7),
        (["events", "--watch"], {}, FOLLOW_SPEED),
        (["events", "--watch"], {"ASYNCSPORTS_EMULATOR_SPEED": "90"}, 90),
        (["actions", "basketball", ANY_ID, "-f", "--emulator-speed", "0"], {}, 0),
        (["sync"], {}, 1),
        (["sync", "--once"], {}, 0),
        (["sync", "--emulator-speed", "60"], {}, 60),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_the_clock_runs_where_the_command_follows(
    args: list[str], env: dict[str, str], speed: float, speeds: list[float], tmp_path: Path
) -> None:
    if args[0] == "sync":
        args = [*args, "--db", str(tmp_path / "m.sqlite")]
    result = invoke("--emulator", *args, **env)
    assert result.exit_code == 1 and "Stopped" in result.stderr, result.output
    assert speeds == [speed]


def test_sync_speed_is_the_global_option_under_its_old_name(
    speeds: list[float], tmp_path: Path
) -> None:
    result = invoke("--emulator", "sync", "--speed", "60", "--db", str(tmp_path / "m.sqlite"))
    assert result.exit_code == 1 and "Stopped" in result.stderr, result.output
    assert speeds == [60]
    assert "sync --speed is deprecated: use --emulator-speed" in result.stderr


def test_emulator_speed_refuses_a_negative_speed() -> None:
    result = invoke("--emulator", "actions", "basketball", ANY_ID, "-f", "--emulator-speed", "-1")
    assert result.exit_code == 2 and "--emulator-speed" in result.stderr


def test_the_option_and_its_default_are_in_the_help() -> None:
    # A global option: listed once, in the top-level help.
    result = invoke("--help", COLUMNS="300", NO_COLOR="1", TERM="dumb")
    text = " ".join(result.stdout.split())
    assert "--emulator-speed" in text and "ASYNCSPORTS_EMULATOR_SPEED" in text
    assert f"default {FOLLOW_SPEED:g}" in text


# ---------------------------------------------- following to the fixture's end


@pytest.mark.parametrize("via", ["ws", "poll"])
def test_actions_follow_ends_with_the_fixture_s_finishing_action(via: str) -> None:
    fixture = live()[-1]["id"]  # the live fixture with the most left to play
    # About an hour and a half of the match left: a fraction of a second at this speed.
    result = invoke(
        "--emulator",
        "--emulator-speed",
        "20000",
        "actions",
        "basketball",
        fixture,
        "--follow",
        "--via",
        via,
        "--interval",
        "1",
    )
    assert result.exit_code == 0, result.stderr
    changes = records(result.stdout)
    assert last_action(changes) == finishing("basketball", fixture)
    assert last_action(changes)[1] == FINISHING


def test_statistics_follow_ends_with_the_finished_packet() -> None:
    fixture = live("ice-hockey")[-1]["id"]
    result = invoke(
        "--emulator", "statistics", "ice-hockey", fixture, "--follow", "--emulator-speed", "20000"
    )
    assert result.exit_code == 0, result.stderr
    packets = records(result.stdout)
    assert packets[-1]["record"]["finished"] is True
    assert {p["record"]["finished"] for p in packets[:-1]} <= {False}


@pytest.mark.slow  # subprocesses, and seconds of a running clock by design
def test_the_defaults_follow_a_live_fixture_to_its_end_in_seconds() -> None:
    """The command as a user types it, with the default speed: the first fixture to end."""
    found = lines(run("--emulator", "fixtures", "basketball", "--status", "live"))
    fixture = min(found, key=lambda f: f["startDateUTC"])["id"]
    started = time.monotonic()
    proc = run("--emulator", "actions", "basketball", fixture, "--follow")
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert last_action(lines(proc)) == finishing("basketball", fixture)
    assert took < 20, took  # about 25 minutes of the match left at 600: 2.5 s, and start-up


@pytest.mark.slow  # a subprocess watched until the clock has ended an event
def test_events_watch_sees_events_end_as_the_clock_runs() -> None:
    proc = subprocess.Popen(
        [*CLI, "--emulator", "--emulator-speed", "7200", "events", "--watch", "--interval", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    out: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in proc.stdout or ():
            out.put(line)
        out.put(None)  # its output ended

    threading.Thread(target=read, daemon=True).start()
    kinds: list[str] = []
    try:
        # Two hours a poll: events of 90 to 180 minutes end within a poll or two.
        while not kinds or kinds[-1] != "ended":
            line = out.get(timeout=TIMEOUT)
            if line is None:
                proc.wait(TIMEOUT)
                pytest.fail(f"exit {proc.returncode} after {kinds}: {proc.stderr.read()}")
            kinds.append(msgspec.json.decode(line)["change"])
        assert kinds[0] == "live", kinds
        proc.send_signal(signal.SIGINT)
        assert proc.wait(TIMEOUT) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_events_watch_stops_after_limit_changes() -> None:
    from asyncsports.cli.events import events

    # It ignored --limit, and watched until interrupted.
    assert events(watch=True, limit=2).limit == 2
    result = invoke("--emulator", "events", "--watch", "--limit", "2")
    assert result.exit_code == 0, result.stderr
    assert [c["change"] for c in records(result.stdout)] == ["live", "live"]
