"""The `asyncsports` command, run in subprocesses against the emulator.

Most commands talk to one standalone emulator (`asyncsports emulator --frozen`) through
ASYNCSPORTS_* environment variables, as a user's shell would; a few use --emulator.
"""

from __future__ import annotations

import atexit
import base64
import logging
import re
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from support import CLI, TIMEOUT, Standalone, clean_env, invoke, lines, run
from support.cli import run_tty

import asyncsports.emulator
from asyncsports import errors
from asyncsports.cli import main
from asyncsports.cli.exits import OutputFileError, exit_code
from asyncsports.cli.messages import describe
from asyncsports.client import Client
from asyncsports.emulator import Emulator
from asyncsports.models import Action, Fixture, Standings, Statistics, decode


@dataclass(frozen=True)
class Server:
    base_url: str
    streaming_url: str
    token: str

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a user who exported the emulator's settings."""
        exported = {
            "ASYNCSPORTS_BASE_URL": self.base_url,
            "ASYNCSPORTS_TOKEN": self.token,
            "ASYNCSPORTS_STREAMING_URL": self.streaming_url,
            "ASYNCSPORTS_OPERATOR_ID": "1",
            "ASYNCSPORTS_STREAM_AUTH": "emulator-static-auth",
            "ASYNCSPORTS_STREAM_TIMESTAMP": "1385554442935",
            "COLUMNS": "200",
        }
        return clean_env(**(exported | extra))


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The error message: one line on stderr, no traceback, nothing on stdout."""
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("asyncsports: error: ")
    return err


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """A standalone emulator with its clock frozen."""
    with Standalone("--frozen") as emu:
        yield Server(emu.base_url, emu.info["streaming URL"], emu.info["token"])


@pytest.fixture(scope="module")
def ids(server: Server) -> dict[str, Any]:
    """Ids to pass to the commands, found through the command itself."""
    env = server.env()
    done = lines(
        run("fixtures", "american-football", "--status", "completed", "--limit", "1", env=env)
    )
    soccer = lines(run("fixtures", "soccer", "--limit", "1", env=env))
    live = lines(run("events", "--live", "--limit", "1", env=env))
    return {
        "fixture": done[0]["id"],
        "season": soccer[0]["stage"]["season"]["id"],
        "team": soccer[0]["teams"][0]["id"],
        "event": live[0]["id"],
        "tournament": "1000",
    }


# Each command with its arguments (ids filled in from `ids`) and what every JSON line of
# its output must hold.
COMMANDS: dict[str, tuple[list[str], str]] = {
    "fixtures": (["fixtures", "basketball", "--limit", "7"], "startDateUTC"),
    "fixtures --filters": (
        [
            "fixtures",
            "soccer",
            "--date-from",
            "2024-09-01",
            "--date-to",
            "2024-12-31",
            "--coverage-level",
            "inVenue",
            "--sort",
            "startTime,desc",
            "--page-size",
            "3",
            "--limit",
            "7",
        ],
        "coverageLevel",
    ),
    "fixture": (["fixture", "american-football", "{fixture}"], "teams"),
    "squads --season-id": (["squads", "soccer", "--season-id", "{season}"], "players"),
    "squads --team-id": (["squads", "soccer", "--team-id", "{team}"], "players"),
    "actions": (["actions", "american-football", "{fixture}"], "fixtureAction"),
    "standings": (["standings", "soccer", "--season-id", "{season}"], "teamsStatistics"),
    "statistics": (["statistics", "american-football", "{fixture}"], "teamActionAggregates"),
    "snooker tournaments": (["snooker", "tournaments", "--season-id", "2025"], "tournamentName"),
    "snooker matches": (["snooker", "matches", "{tournament}", "--round-number", "1"], "matchId"),
    "snooker ast": (["snooker", "ast", "{tournament}"], "playerAst"),
    "snooker tournament-players": (
        ["snooker", "tournament-players", "{tournament}"],
        "playerSecondName",
    ),
    "snooker tour-players": (["snooker", "tour-players", "--limit", "3"], "playerId"),
    "snooker centuries": (["snooker", "centuries", "{tournament}"], "break"),
    "snooker current-tournament-winner": (
        ["snooker", "current-tournament-winner", "{tournament}"],
        "highestBreak",
    ),
    "snooker previous-tournament-winners": (
        ["snooker", "previous-tournament-winners", "2040"],
        "year",
    ),
    "snooker player-info": (["snooker", "player-info", "163", "{tournament}"], "fileContent"),
    "events": (["events", "--page-size", "3"], "title"),
    "events --restrictions": (["events", "--restrictions", "whitelist"], "countryList"),
    "playback": (["playback", "{event}"], "hlsUrl"),
}


@pytest.fixture(scope="module")
def outputs(server: Server, ids: dict[str, Any]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every command of COMMANDS, run once (in parallel: each is its own process)."""
    env = server.env()
    with ThreadPoolExecutor(4) as pool:
        futures = {
            name: pool.submit(run, *(a.format(**ids) for a in args), env=env)
            for name, (args, _) in COMMANDS.items()
        }
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.slow
def test_each_command_prints_json_lines_of_wire_records(
    name: str, outputs: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    records = lines(outputs[name])
    assert records, f"{name}: no output"
    field = COMMANDS[name][1]
    assert all(field in r for r in records), records[0]
    assert outputs[name].stderr == ""


@pytest.mark.slow
def test_records_are_the_services_json(
    outputs: dict[str, subprocess.CompletedProcess[str]], ids: dict[str, Any]
) -> None:
    fixtures = lines(outputs["fixtures"])
    assert len(fixtures) == 7  # --limit
    assert [decode(Fixture, msgspec.json.encode(f)).id for f in fixtures] == [
        uuid.UUID(f["id"]) for f in fixtures
    ]
    (one,) = lines(outputs["fixture"])
    assert one["id"] == ids["fixture"]
    actions = [decode(Action, msgspec.json.encode(a)) for a in lines(outputs["actions"])]
    assert {str(a.fixture_action.fixture_id) for a in actions} == {ids["fixture"]}
    assert actions[-1].finished  # a completed fixture's timeline ends with the final record
    (packet,) = lines(outputs["statistics"])
    assert str(decode(Statistics, msgspec.json.encode(packet)).fixture_id) == ids["fixture"]
    standings = [decode(Standings, msgspec.json.encode(p)) for p in lines(outputs["standings"])]
    assert [t.rank for t in standings[0].teams_statistics][:3] == [1, 2, 3]
    squads = lines(outputs["squads --team-id"])
    assert {s["team"]["id"] for s in squads} == {ids["team"]}
    (image,) = lines(outputs["snooker player-info"])
    assert base64.b64decode(image["fileContent"]).startswith(b"\x89PNG")
    (address,) = lines(outputs["playback"])
    assert address["eventId"] == ids["event"]
    assert all(e["countryList"] for e in lines(outputs["events --restrictions"]))
    filtered = lines(outputs["fixtures --filters"])
    starts = [f["startDateUTC"][:10] for f in filtered]
    assert len(filtered) == 7 and starts == sorted(starts, reverse=True)
    assert all("2024-09-01" <= day <= "2024-12-31" for day in starts)
    assert {f["coverageLevel"] for f in filtered} == {"In Venue"}


@pytest.mark.slow
def test_a_terminal_gets_a_table_with_whole_ids(server: Server, ids: dict[str, Any]) -> None:
    code, out = run_tty("fixture", "american-football", ids["fixture"], env=server.env())
    assert code == 0
    assert "start (UTC)" in out and "competition" in out
    assert ids["fixture"] in out  # not wrapped or cut, so it can be copied
    assert "{" not in out
    code, out = run_tty(
        "snooker", "matches", "1000", "--round-number", "1", "--json", env=server.env()
    )
    assert code == 0 and out.lstrip().startswith("{")  # --json wins on a terminal too


@pytest.mark.slow
def test_help_names_every_command_and_the_exit_codes() -> None:
    out = run("--help", env=clean_env(COLUMNS="200")).stdout
    for name in (
        "fixtures",
        "fixture",
        "squads",
        "actions",
        "standings",
        "statistics",
        "snooker",
        "events",
        "playback",
        "emulator",
        "backfill",
    ):
        assert re.search(rf"^  {name} ", out, re.MULTILINE), name
    assert "ASYNCSPORTS_BASE_URL" in out
    assert re.search(r"^  4 +refused credentials", out, re.M)
    assert re.search(r"^  10 +timed out, host unreachable", out, re.M)
    out = run("snooker", "--help", env=clean_env(COLUMNS="200")).stdout
    for name in (
        "tournaments",
        "matches",
        "ast",
        "tournament-players",
        "tour-players",
        "centuries",
        "current-tournament-winner",
        "previous-tournament-winners",
        "player-info",
    ):
        assert re.search(rf"^  {name}\b", out, re.MULTILINE), name


@pytest.mark.slow
def test_actions_follow_ends_after_the_finished_record(server: Server, ids: dict[str, Any]) -> None:
    proc = run(
        "actions",
        "american-football",
        ids["fixture"],
        "--follow",
        "--interval",
        "1",
        env=server.env(),
    )
    changes = lines(proc)
    assert {c["change"] for c in changes} <= {"new", "update"}
    assert changes[-1]["record"]["finished"] is True
    ids_seen = [c["record"]["fixtureAction"]["actionId"] for c in changes if c["change"] == "new"]
    assert len(ids_seen) == len(set(ids_seen))


@pytest.mark.slow
def test_events_watch_prints_live_events_until_interrupted() -> None:
    proc = subprocess.Popen(
        [*CLI, "--emulator", "events", "--watch", "--interval", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = msgspec.json.decode(proc.stdout.readline())
        assert first["change"] == "live" and first["record"]["id"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 130
    finally:
        if proc.poll() is None:  # it watches for ever: never left behind
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()


@pytest.mark.slow
def test_global_options_go_before_or_after_the_command(server: Server) -> None:
    env = server.env(ASYNCSPORTS_TOKEN="wrong")
    # Typed on the command line, before the command, it beats the environment ...
    ok = run("--token", server.token, "fixtures", "ice-hockey", "--limit", "1", env=env)
    assert len(lines(ok)) == 1
    # ... and so after it.
    ok = run("fixtures", "ice-hockey", "--limit", "1", "--token", server.token, env=env)
    assert len(lines(ok)) == 1
    # The environment alone is used when nothing is typed.
    assert run("fixtures", "ice-hockey", "--limit", "1", env=env).returncode == 4


# ------------------------------------------------------------------ errors


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["fixtures", "basketball"], 3, "no service address: pass --base-url"),
        (
            ["fixtures", "basketball", "--base-url", "dde-api.example.com", "--token", "t"],
            3,
            "--base-url: expected an http(s) URL",
        ),
        (
            ["fixtures", "basketball", "--base-url", "https://dde-api.example.com"],
            3,
            "no token: pass --token",
        ),
        (
            ["events", "--base-url", "https://dde-api.example.com", "--token", "t"],
            3,
            "no live stream address",
        ),
        (
            ["--emulator", "--emulator-scale", "teams=lots", "fixtures", "soccer"],
            3,
            "--emulator-scale: expected name=number",
        ),
        (["--emulator", "fixtures", "basket/ball"], 2, "sport: expected"),
        (["--emulator", "fixture", "soccer", str(uuid.UUID(int=1))], 5, "404"),
    ],
    ids=[
        "no base url",
        "bad url",
        "no token",
        "no streaming url",
        "bad scale",
        "bad sport",
        "not found",
    ],
)
@pytest.mark.slow
def test_mistakes_give_one_line_and_an_exit_code(args: list[str], code: int, text: str) -> None:
    proc = run(*args)
    assert proc.returncode == code, proc.stderr
    assert text in one_line_error(proc)


@pytest.mark.slow
def test_a_wrong_token_is_exit_4_and_verbose_shows_the_traceback(server: Server) -> None:
    env = server.env(ASYNCSPORTS_TOKEN="not-the-token")
    proc = run("fixtures", "basketball", env=env)
    assert proc.returncode == 4
    err = one_line_error(proc)
    assert "401 The supplied authentication is invalid" in err
    assert "check --token" in err
    verbose = run("fixtures", "basketball", "--verbose", env=env)
    assert verbose.returncode == 4
    assert "Traceback" in verbose.stderr and "AuthenticationError" in verbose.stderr


@pytest.mark.slow
def test_an_unreachable_host_is_exit_10() -> None:
    proc = run(
        "squads",
        "cricket",
        "--team-id",
        str(uuid.UUID(int=2)),
        "--base-url",
        f"http://127.0.0.1:{free_port()}",
        "--token",
        "t",
    )
    assert proc.returncode == 10
    err = one_line_error(proc)
    assert "is the host up" in err and "connect" in err.lower()


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly(server: Server) -> None:
    # `asyncsports fixtures ... | head -1`
    proc = subprocess.Popen(
        [*CLI, "fixtures", "basketball"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server.env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"{")
    proc.stdout.close()
    assert proc.wait(TIMEOUT) == 141  # the output is larger than the pipe buffer
    assert proc.stderr.read() == b""


# ------------------------------------------------------------------ in process
#
# Typer's CliRunner runs commands in this process: quicker than a subprocess, and the
# emulator behind --emulator can be swapped for one with faults.


def faulty(
    monkeypatch: pytest.MonkeyPatch, route: str, client: dict[str, Any], **fault: Any
) -> None:
    """Make --emulator serve with ``fault`` on ``route`` to a client with ``client`` keywords."""

    class Faulty(Emulator):
        def client(self, **kw: Any) -> Client:
            self.faults.add(route, **fault)
            return super().client(**{"max_retries": 0, **client, **kw})

    monkeypatch.setattr(asyncsports.emulator, "Emulator", Faulty)


# One command of each shape the shared runner handles: listings (paged and streamed,
# of each service), single records, a list of records, and a watcher.
EVERY_SHAPE = [
    ["fixtures", "basketball"],
    ["fixture", "soccer", str(uuid.UUID(int=1))],
    ["squads", "soccer", "--team-id", str(uuid.UUID(int=2))],
    ["actions", "soccer", str(uuid.UUID(int=3))],
    ["standings", "soccer", "--season-id", str(uuid.UUID(int=4))],
    ["snooker", "tour-players"],
    ["snooker", "current-tournament-winner", "1000"],
    ["events"],
    ["events", "--watch"],
    ["playback", "1"],
]


@pytest.mark.parametrize("args", EVERY_SHAPE, ids=" ".join)
# Statuses a watcher does not ride out as passing failures (it would poll on).
@pytest.mark.parametrize(("status", "code"), [(400, 6), (401, 4), (404, 5)])
def test_an_error_in_any_command_maps_to_its_exit_code(
    args: list[str],
    status: int,
    code: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    faulty(monkeypatch, "*", {}, status=status)
    result = invoke("--emulator", *args)
    assert result.exit_code == code, result.output
    assert result.stderr.startswith(f"asyncsports: error: {status} ")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("client", "fault", "code", "text"),
    [
        ({"max_body_size": 100}, {"latency": 0.01}, 14, "exceeds max_body_size=100"),
        # "timed out" either way: from errors.TimeoutError, or an older session's text.
        ({"timeout": 0.05}, {"latency": 1.0}, 10, "timed out"),
    ],
    ids=["body too large", "timeout"],
)
@pytest.mark.slow
def test_client_limits_have_their_exit_codes(
    client: dict[str, Any],
    fault: dict[str, Any],
    code: int,
    text: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    faulty(monkeypatch, "fixtures", client, **fault)
    result = invoke("--emulator", "fixtures", "basketball")
    assert result.exit_code == code, result.output
    assert text in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("error", "code", "text"),
    [
        (
            errors.TimeoutError("read timed out", url="http://h:1/x", attempts=3),
            10,
            "timed out waiting for http://h:1 after 3 attempts: the service is slow",
        ),
        (
            errors.TransportError("connection failed: [Connect call failed]", url="http://h:1/x"),
            10,
            "cannot reach http://h:1: Connect call failed: is the host up",
        ),
        (
            errors.BodyTooLargeError("body exceeds max_body_size=9", limit=9),
            14,
            "body exceeds max_body_size=9",
        ),
        (errors.NoRecordError("no record in the body", url="/x"), 15, "no record in the body"),
        (errors.PagingError("page 3 repeats page 2"), 16, "page 3 repeats page 2"),
        (errors.SinkError("cannot use db"), 13, "cannot use db"),
        (OutputFileError("cannot write x.png: Permission denied"), 17, "cannot write x.png"),
        (errors.DecodeError("bad"), 11, "bad"),
        (errors.AsyncSportsError("odd"), 12, "odd"),
        (ValueError("sport: expected"), 2, "sport: expected"),
        (KeyError("x"), 1, "internal error: KeyError"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
def test_each_error_class_has_a_code_and_a_description(
    error: BaseException, code: int, text: str
) -> None:
    assert exit_code(error) == code
    assert text in describe(error)


@pytest.mark.parametrize("where", ["missing/image.png", "a-file/image.png"])
def test_an_unwritable_save_path_is_one_line_naming_it_and_exit_17(
    where: str, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    path = tmp_path / where
    result = invoke("--emulator", "snooker", "player-info", "163", "1000", "--save", str(path))
    assert result.exit_code == 17, result.output
    assert result.stderr.startswith(f"asyncsports: error: cannot write {path}: ")
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    saved = tmp_path / "image.png"
    assert (
        invoke(
            "--emulator", "snooker", "player-info", "163", "1000", "--save", str(saved)
        ).exit_code
        == 0
    )
    assert saved.stat().st_size > 0


def test_the_timeout_wording_comes_from_the_class_not_the_message() -> None:
    assert "cannot reach" in describe(errors.TransportError("timed out", url="http://h:1/"))
    assert "timed out" in describe(errors.TimeoutError("", url="http://h:1/"))


def test_logging_is_set_up_once_per_process() -> None:
    log = logging.getLogger("asyncsports")
    for args in (["--verbose", "fixtures", "soccer"], ["fixtures", "soccer"]) * 2:
        assert invoke(*args).exit_code == 3  # no --base-url: fails after logging is set up
    ours = [h for h in log.handlers if not isinstance(h, logging.NullHandler)]
    assert len(ours) == 1
    assert not log.isEnabledFor(logging.INFO)  # the last command was not --verbose
    assert invoke("--verbose", "fixtures", "soccer").exit_code == 3
    assert log.isEnabledFor(logging.INFO) and log.handlers == ours


def test_main_is_the_app_run_twice_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["asyncsports", "--version"])
    # main() takes SIGINT and SIGTERM for the rest of the process: give them back.
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setattr(atexit, "register", lambda *args: None)
    try:
        for _ in range(2):
            with pytest.raises(SystemExit) as exit:
                main()
            assert exit.value.code == 0
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
