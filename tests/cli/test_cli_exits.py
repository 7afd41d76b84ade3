"""Exit codes a script can trust (issue 32, point 1): ``sync --once`` fails when its pass
could not complete, as backfill does, and a running mirror's ``/healthz`` names the tasks
that keep failing."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support import TIMEOUT, clean_env, invoke, run, until
from support.cli import serving_metrics
from support.servers import free_port

from asyncsports import Client
from asyncsports._http.sports import KNOWN_SPORTS
from asyncsports.cli.app import Root
from asyncsports.cli.exits import (
    EXIT_CODES,
    INTERRUPTED,
    MISSING_EXTRA,
    PIPE_CLOSED,
    TERMINATED,
    WORKER_KILLED,
    code_for,
    exit_code_table,
)
from asyncsports.cli.messages import CAUSES_CAP, describe
from asyncsports.cli.names import check_sport, slip_of
from asyncsports.emulator import Emulator
from asyncsports.errors import SinkError, TransportError
from asyncsports.sync import Mirror
from asyncsports.sync._metrics import HEALTHY_WITHIN, healthy

UNREACHABLE = code_for(TransportError)


def _error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith("asyncsports: error: ")]
    return line


@pytest.mark.slow  # the command in subprocesses, each waiting out its retries
@pytest.mark.parametrize("command", ["sync --once", "backfill"])
def test_an_unreachable_service_fails_sync_once_and_backfill_alike(
    command: str, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    db = str(tmp_path / "m.sqlite")
    args = [*command.split(), "--db", db, "--sports", "soccer", "--rate-limit", "0"]
    proc = run("--base-url", url, "--token", "x", *args)
    assert proc.returncode == UNREACHABLE, proc.stderr
    line = _error_line(proc.stderr)
    assert f"cannot reach {url} after 4 attempts" in line
    if command == "sync --once":  # backfill stops at its first listing; sync tries all
        first = "asyncsports: error: 2 tasks failed, first (window|fixtures):soccer: "
        assert re.match(first, line), line
        assert line.endswith("run the same command again to retry them")
    assert "\N{SOCCER BALL}" not in proc.stderr  # "fixtures:soccer:" is no emoji code


async def test_healthz_names_the_tasks_that_keep_failing(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with Client(url, token="x", max_retries=0) as client:
        mirror = Mirror(client, tmp_path / "m.sqlite", sports=["soccer"], live=False)
        await mirror.once()
    assert set(mirror.failing) == {"fixtures:soccer", "window:soccer"}
    since = max(at for at, _ in mirror.failing.values())
    # One failure the next turn may mend: healthy yet, and named.
    ok, state = healthy(mirror, since + 1)
    assert ok is True
    failing = state["failing"]
    assert isinstance(failing, dict) and set(failing) == {"fixtures:soccer", "window:soccer"}
    assert "127.0.0.1" in failing["fixtures:soccer"]["error"]
    ok, state = healthy(mirror, since + HEALTHY_WITHIN + 1)
    assert ok is False and state["ok"] is False


# ------------------------------------------------------ names and usage errors


def _usage_error(*args: str) -> str:
    """The error line of a command that is a usage error: exit 2, plain lines, no box."""
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    first, *rest = result.stderr.splitlines()
    assert first.startswith("asyncsports: error: "), result.stderr
    assert rest == [] or (len(rest) == 1 and rest[0].startswith("Try 'asyncsports ")), rest
    assert "╭" not in result.stderr and "Traceback" not in result.stderr
    return first


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["sync", "--sports", "basketbal", "--once"], "'--sports': unknown sport 'basketbal'"),
        (["backfill", "-s", "basketbal"], "'--sports': unknown sport 'basketbal'"),
        (["load", "-s", "basketbal"], "'--sports': unknown sport 'basketbal'"),
        (["fixtures", "basketbal"], "'SPORT': unknown sport 'basketbal'"),
        (["actions", "Basket-Bal", "x"], "'SPORT': unknown sport 'Basket-Bal'"),
    ],
    ids=["sync", "backfill", "load", "fixtures", "actions, another spelling"],
)
def test_a_sport_typo_is_a_usage_error_with_the_same_suggestion(args: list[str], said: str) -> None:
    line = _usage_error("--emulator", *args)
    assert said in line and line.endswith(": did you mean basketball?")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--status", "complete"],
            "'--status': unknown status 'complete': did you mean completed?",
        ),
        (["--sort", "nam,asc"], "'--sort': unknown sort field 'nam': did you mean name?"),
        (["--type", "oficial"], "'--type': unknown type 'oficial': did you mean official?"),
        (
            ["--coverage-level", "In Venu"],
            "unknown coverage level 'In Venu': did you mean inVenue?",
        ),
    ],
)
def test_other_names_are_checked_the_same_way(args: list[str], said: str) -> None:
    assert said in _usage_error("--emulator", "fixtures", "soccer", *args)


def test_names_unlike_any_known_are_left_to_the_service() -> None:
    # An open vocabulary: a sport or status the client does not know yet is sent.
    assert slip_of("curling", KNOWN_SPORTS) is None
    assert slip_of("basketball-3x3", KNOWN_SPORTS) is None
    assert slip_of("hockey", KNOWN_SPORTS) is None  # a 404 suggests ice-hockey then
    assert check_sport("v2/basketbal") == "v2/basketbal"  # a versioned path, as written
    assert check_sport("Ice Hockey") == "Ice Hockey"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--db", "mysql://u@h/x", "--once"], "'--db': unknown URL scheme 'mysql://'"),
        (["--every", "bogus=5", "--once"], "'--every': expected kind=seconds with kind one of"),
    ],
)
def test_sync_configuration_errors_are_usage_errors_naming_the_option(
    args: list[str], said: str
) -> None:
    assert said in _usage_error("--emulator", "sync", *args)


@pytest.mark.parametrize("command", ["backfill", "changes", "export --parquet out"])
def test_every_db_option_refuses_an_unknown_scheme(command: str) -> None:
    args = [*command.split(), "--db", "mysql://u@h/x"]
    assert "'--db': unknown URL scheme 'mysql://'" in _usage_error(*args)


def test_a_missing_argument_is_one_plain_line_too() -> None:
    assert _usage_error("fixtures").endswith("Missing argument 'SPORT'.")


@pytest.mark.parametrize("group", [[], ["snooker"]], ids=["asyncsports", "snooker"])
def test_a_group_without_its_command_prints_its_help_as_a_usage_error(group: list[str]) -> None:
    """typer 0.29 / click 8.2 on raise NoArgsIsHelpError, which the one-line error style
    skipped: bare ``asyncsports`` said nothing at all, exit 2."""
    asked = invoke(*group, "--help")
    assert asked.exit_code == 0
    result = invoke(*group)
    assert result.exit_code == 2  # the table's "usage": no command given
    assert result.stdout == ""  # stdout is for what was asked for
    assert result.stderr == asked.stdout
    assert result.stderr.startswith(f"Usage: asyncsports {' '.join(group)}".rstrip())


@pytest.mark.slow  # the command in a subprocess
def test_bare_asyncsports_prints_its_help_in_a_process_too() -> None:
    proc = run()
    assert proc.returncode == 2, proc.stderr
    usage = proc.stderr.splitlines()[0]  # `python -m asyncsports.cli`: its own prog name
    assert usage.startswith("Usage: ") and usage.endswith(" [OPTIONS] COMMAND [ARGS]...")
    assert "Exit codes" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["sync", "changes"])
@pytest.mark.slow  # the command in a subprocess
def test_a_metrics_port_in_use_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """``changes --to`` once ran its loop its own way, and said "internal error", exit 1."""
    db = tmp_path / "m.sqlite"
    db.write_bytes(b"")  # changes reads a mirror that is there; the port fails first
    args = {
        "sync": ["--emulator", "sync", "--once"],
        "changes": ["changes", "--to", "redis://127.0.0.1:9"],
    }[command]
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = run(*args, "--db", str(db), "--metrics-port", str(port))
    assert proc.returncode == 2, proc.stderr
    line = _error_line(proc.stderr)
    assert line.startswith(
        f"asyncsports: error: Invalid value for '--metrics-port': cannot listen on {port}: "
    )
    assert "address already in use" in line


# ------------------------------------------------------------------ causes


def test_an_error_line_says_its_causes_once_and_short() -> None:
    try:
        try:
            try:
                raise OSError(2, "No such file or directory")
            except OSError as exc:
                raise RuntimeError(
                    "the actual reason given is: [Errno 2] No such file "
                    "or directory\n\nmore text nobody needs"
                ) from exc
        except RuntimeError as exc:
            group = ExceptionGroup("step failed with exception:", [exc])
            raise SinkError("could not load into x") from group
    except SinkError as exc:
        line = describe(exc)
    assert line == (
        "could not load into x: step failed with exception: (1 sub-exception): "
        "[Errno 2] No such file or directory"
    )
    long = SinkError("could not")
    long.__cause__ = ValueError("y" * 1000)
    assert len(describe(long)) == CAUSES_CAP and describe(long).endswith("…")


@pytest.mark.slow  # dlt in a subprocess
@pytest.mark.parametrize("where", ["database", "pipelines"])
def test_load_says_why_a_destination_cannot_be_written(where: str, tmp_path: Path) -> None:
    pytest.importorskip("dlt")
    pytest.importorskip("duckdb")
    afile = tmp_path / "afile"  # a file where a directory must be: unwritable, even for root
    afile.write_text("")
    env = clean_env(
        DESTINATION__DUCKDB__CREDENTIALS=str(
            afile / "x.duckdb" if where == "database" else tmp_path / "x.duckdb"
        )
    )
    pipelines = afile / "p" if where == "pipelines" else tmp_path / "p"
    proc = run(
        "--emulator",
        "load",
        "--destination",
        "duckdb",
        "-s",
        "soccer",
        "--pipelines-dir",
        str(pipelines),
        env=env,
    )
    assert proc.returncode == code_for(SinkError), proc.stderr
    line = _error_line(proc.stderr)
    assert line.startswith("asyncsports: error: dlt could not load into duckdb: ")
    assert "Not a directory" in line and str(afile) in line


# ------------------------------------------------------------------ the table


def test_one_table_holds_every_code_the_command_uses() -> None:
    table = exit_code_table()
    codes = [code for code, _, _ in table]
    assert codes == sorted(set(codes))  # one row a code
    wanted = {0, 1, 2, INTERRUPTED, PIPE_CLOSED, TERMINATED, WORKER_KILLED, MISSING_EXTRA}
    assert wanted | {code for _, code, _ in EXIT_CODES} == set(codes)
    assert all(text and used for _, text, used in table)
    # The reference's table is this one (docs/_hooks/cli.py), and so are --help's rows.
    page = (Path(__file__).parents[2] / "docs" / "reference" / "cli.md").read_text()
    assert "<!-- exit-codes -->" in page
    assert Root.tables["Exit codes"] == [(str(code), text) for code, text, _ in table]
    assert [code for code, _, _ in table[:2]] == [0, 1]
    assert table[0][1].startswith("done")  # and what else ends with 0 (test_cli_signals)
    assert table[1][1].startswith("internal error")


def _get(url: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of a GET, a 503 included (a standby not yet elected)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.slow  # the command in a subprocess, waiting out its retries
def test_a_running_sync_names_its_failing_tasks_on_healthz_and_in_its_log(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    args = [
        "--base-url",
        url,
        "--token",
        "x",
        "--rate-limit",
        "0",
        "sync",
        "--db",
        str(tmp_path / "m.sqlite"),
        "--sports",
        "soccer",
        "--metrics-port",
        "0",
    ]
    with serving_metrics(*args) as (proc, base):
        deadline = time.monotonic() + TIMEOUT
        while True:  # until both listings have failed after their retries
            status, state = _get(base + "/healthz")
            if set(state.get("failing", ())) == {"fixtures:soccer", "window:soccer"}:
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.1)
        # Failing for less than HEALTHY_WITHIN: still up, and saying what fails.
        assert status == 200 and state["ok"] is True
        assert f"cannot connect to host 127.0.0.1:{url.rsplit(':', 1)[1]}" in (
            state["failing"]["fixtures:soccer"]["error"].lower()
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(TIMEOUT) == 0  # a service stopped as services are
        assert proc.stderr is not None
        log = proc.stderr.read()
    assert "mirror: fixtures:soccer failed (" in log and "trying again later" in log


async def test_a_task_that_works_again_leaves_failing_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with Emulator(seed=1, fixtures_per_season=4) as emu, emu.client(max_retries=0) as c:
        emu.faults.add("fixtures", status=500, times=2)  # both listings' first turn
        mirror = Mirror(
            c, tmp_path / "m.sqlite", sports=["soccer"], live=False, every={"retry": 0.2}
        )
        with caplog.at_level(logging.INFO, "asyncsports.sync"):
            running = asyncio.create_task(mirror.run())
            await until(lambda: len(mirror.failing) == 2)
            await until(lambda: not mirror.failing)
            mirror.stop()
            await running
    said = [r.getMessage() for r in caplog.records]
    assert "mirror: fixtures:soccer works again" in said
    assert "mirror: window:soccer works again" in said


@pytest.mark.parametrize("command", [["jobs"], ["export", "--parquet", "out"]])
@pytest.mark.slow  # the command in a subprocess
def test_a_command_waiting_on_its_database_stops_at_sigterm(
    tmp_path: Path, command: list[str]
) -> None:
    """jobs and export ran their loop with a bare asyncio.run: a signal was only noted,
    and the command waited out its --connect-timeout, then said the database failed."""
    import subprocess

    from support import CLI

    with socket.socket() as silent:  # a "database" that accepts and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        silent.settimeout(TIMEOUT)
        url = f"postgresql://u@127.0.0.1:{silent.getsockname()[1]}/x"
        args = [*CLI, *command, "--db", url, "--connect-timeout", str(TIMEOUT)]
        proc = subprocess.Popen(
            args, cwd=tmp_path, stderr=subprocess.PIPE, text=True, env=clean_env()
        )
        try:
            conn, _ = silent.accept()  # the command is waiting on its database now
            with conn:
                proc.send_signal(signal.SIGTERM)
                _, err = proc.communicate(timeout=TIMEOUT / 2)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == TERMINATED, err
    assert err.strip().splitlines()[-1] == "asyncsports: interrupted"
