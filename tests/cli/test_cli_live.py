"""`asyncsports actions --follow` and `statistics --follow`: over the websocket or polling."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from support import Standalone, clean_env, lines, run

pytestmark = pytest.mark.slow  # the command in subprocesses, against a standalone emulator


@pytest.fixture(scope="module")
def server() -> Iterator[dict[str, str]]:
    """A standalone emulator with its clock frozen: the environment a user would export."""
    with Standalone("--frozen") as emu:
        assert emu.info["live URL"].startswith("ws://127.0.0.1:")
        yield clean_env(
            ASYNCSPORTS_BASE_URL=emu.base_url,
            ASYNCSPORTS_TOKEN=emu.info["token"],
            ASYNCSPORTS_LIVE_URL=emu.info["live URL"],
        )


def completed(environ: dict[str, str], sport: str = "basketball") -> str:
    done = lines(run("fixtures", sport, "--status", "completed", "--limit", "1", env=environ))
    return str(done[0]["id"])


@pytest.fixture(scope="module")
def fid(server: dict[str, str]) -> str:
    """A completed basketball fixture of the server."""
    return completed(server)


def keys(changes: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (
            c["change"],
            c["record"]["fixtureAction"]["actionId"],
            c["record"]["fixtureAction"]["sendType"],
        )
        for c in changes
    ]


def test_actions_follow_uses_the_websocket_when_a_live_url_is_set(
    server: dict[str, str], fid: str
) -> None:
    ws = lines(run("actions", "basketball", fid, "--follow", env=server))
    via_ws = lines(run("actions", "basketball", fid, "--follow", "--via", "ws", env=server))
    poll = lines(
        run(
            "actions", "basketball", fid, "--follow", "--via", "poll", "--interval", "1", env=server
        )
    )
    listed = lines(run("actions", "basketball", fid, env=server))
    assert keys(ws) == keys(via_ws) == keys(poll) and ws[-1]["record"]["finished"] is True
    assert len(ws) == len(listed) and ws[0]["record"] == listed[0]


@pytest.mark.parametrize("via", ["ws", "poll"])
def test_follow_stops_after_limit_records(server: dict[str, str], fid: str, via: str) -> None:
    every = lines(run("actions", "basketball", fid, env=server))
    got = lines(
        run(
            "actions",
            "basketball",
            fid,
            "--follow",
            "--via",
            via,
            "--limit",
            "3",
            "--interval",
            "1",
            env=server,
        )
    )
    ids = [a["fixtureAction"]["actionId"] for a in every[:3]]
    assert len(every) > 3 and [c["record"]["fixtureAction"]["actionId"] for c in got] == ids


def test_statistics_follow_ends_with_the_finished_packet(server: dict[str, str]) -> None:
    fid = completed(server, "ice-hockey")
    once = lines(run("statistics", "ice-hockey", fid, env=server))
    ws = lines(run("statistics", "ice-hockey", fid, "--follow", env=server))
    poll = lines(run("statistics", "ice-hockey", fid, "--follow", "--via", "poll", env=server))
    assert len(ws) > 3 and ws[0]["change"] == "new" and {c["change"] for c in ws[1:]} == {"update"}
    assert ws[-1]["record"]["finished"] is True
    assert msgspec.json.decode(msgspec.json.encode(ws[-1]["record"])) == once[0]
    assert [c["record"] for c in poll] == once and poll[0]["change"] == "new"


def test_the_emulator_follows_over_its_websocket() -> None:
    done = lines(
        run("--emulator", "fixtures", "volleyball", "--status", "completed", "--limit", "1")
    )
    fid = str(done[0]["id"])
    got = lines(run("--emulator", "-v", "actions", "volleyball", fid, "--follow"))
    assert got[-1]["record"]["finished"] is True
    assert len(got) == len(lines(run("--emulator", "actions", "volleyball", fid)))


def test_via_ws_without_a_live_url_is_a_configuration_error(
    server: dict[str, str], fid: str
) -> None:
    environ = {k: v for k, v in server.items() if k != "ASYNCSPORTS_LIVE_URL"}
    proc = run("actions", "basketball", fid, "--follow", "--via", "ws", env=environ)
    assert proc.returncode == 3 and proc.stdout == ""
    assert "--live-url" in proc.stderr and "Traceback" not in proc.stderr
    bad = run("--live-url", "ftp://x", "actions", "basketball", fid, "--follow", env=environ)
    assert bad.returncode == 3 and "--live-url" in bad.stderr


def test_a_feed_that_ends_without_the_fixture_s_end_says_so_and_exits_20(
    server: dict[str, str],
) -> None:
    # A postponed fixture: no timeline, the socket closes at once and the service says the
    # fixture is over with nothing to deliver. Not the fixture's end: said, and its own code.
    found = lines(run("fixtures", "soccer", "--status", "postponed", "--limit", "1", env=server))
    fid = str(found[0]["id"])
    proc = run("actions", "soccer", fid, "--follow", env=server)
    assert proc.returncode == 20 and proc.stdout == ""
    assert "without the fixture's finishing record" in proc.stderr
    assert "Postponed" in proc.stderr
    helped = run("--help", env=server)  # the exit codes are listed once, at the top
    assert "20 a live feed that ended without the fixture's finishing record" in " ".join(
        helped.stdout.split()
    )
