"""How the `asyncsports` command fails, run as a user runs it: a 404 says what was looked up,
--emulator with an address is a usage error, Ctrl-C at start-up is no traceback, and
--save says which file it wrote."""

from __future__ import annotations

import asyncio
import base64
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import msgspec
import pytest
from aiohttp import web
from support import TIMEOUT, clean_env
from support.stub import Serve

import asyncsports
from asyncsports import errors
from asyncsports._http.sports import KNOWN_SPORTS
from asyncsports.cli.messages import describe
from asyncsports.cli.names import sport_hint

pytestmark = pytest.mark.slow  # the command in subprocesses

CLI = [sys.executable, "-m", "asyncsports"]


def run(
    *args: str, environ: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        env=environ or clean_env(),
        cwd=cwd,
        timeout=TIMEOUT,
    )


def error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The one error line of a command that failed with ``code``."""
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("asyncsports: error: ")
    return line


# ------------------------------------------------------------------------ 404

NOWHERE = str(uuid.UUID(int=1))


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        # A slip of a known name is a usage error (test_cli_exits.py); this one is not.
        (
            ["fixture", "football", NOWHERE],
            f"check sport football (not a known sport: did you mean american-football?) and fixture {NOWHERE}",
        ),
        (["fixture", "basketball", NOWHERE], f": check sport basketball and fixture {NOWHERE}"),
        (
            ["fixtures", "hockey", "--season-id", NOWHERE],
            f"check sport hockey (not a known sport: did you mean ice-hockey?) and season {NOWHERE}",
        ),
        (["squads", "soccer", "--team-id", NOWHERE], f": check sport soccer and team {NOWHERE}"),
        (["statistics", "basketball", NOWHERE], f": check sport basketball and fixture {NOWHERE}"),
        (["playback", "999"], ": check event 999"),
        (["snooker", "player-info", "326", "99"], ": check player 326 and tournament 99"),
    ],
    ids=["unknown sport", "fixture", "season", "team", "statistics", "playback", "snooker ids"],
)
def test_a_404_names_what_was_looked_up(args: list[str], hint: str) -> None:
    line = error(run("--emulator", *args), 5)
    assert line.endswith(hint)


def test_a_sport_nothing_is_close_to_gets_the_known_names() -> None:
    line = error(run("--emulator", "actions", "curling", NOWHERE), 5)
    assert "check sport curling (not a known sport; known: american-football, basketball" in line


def test_statistics_of_a_fixture_not_ended_say_there_are_none_yet() -> None:
    listed = run("--emulator", "fixtures", "basketball", "--status", "scheduled", "--limit", "1")
    fixture = msgspec.json.decode(listed.stdout.splitlines()[0])["id"]
    line = error(run("--emulator", "statistics", "basketball", fixture), 5)
    assert line.endswith(": the fixture has not ended (Scheduled): no statistics until it has")


@pytest.mark.parametrize(
    "args",
    [["events", "--vendor-data-id"], ["snooker", "tour-players"]],
    ids=["events", "snooker tour-players"],
)
async def test_a_404_of_a_command_that_looks_up_no_id_blames_the_address(
    args: list[str], serve: Serve
) -> None:
    async def nothing(request: web.Request) -> web.Response:
        return web.json_response({"message": "Nothing here"}, status=404)

    url = await serve(nothing)
    proc = await asyncio.create_subprocess_exec(
        *CLI,
        *args,
        "--base-url",
        url,
        "--token",
        "t",
        "--streaming-url",
        url,
        "--operator-id",
        "1",
        "--stream-auth",
        "a",
        "--stream-timestamp",
        "1",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert out == b""
    line = error(subprocess.CompletedProcess(args, proc.returncode, "", err.decode()), 5)
    assert line.startswith("asyncsports: error: 404 Nothing here (GET ")
    assert line.endswith("): the service has nothing at that address")  # not "vendor data"


def test_notes_go_with_the_error_and_stand_in_for_a_404s_hint() -> None:
    refused = errors.AuthenticationError(401, "refused", url="http://h/x")
    refused.add_note("live actions feed of fixture F")
    assert describe(refused) == (
        "401 refused (GET http://h/x) (live actions feed of fixture F): check --token "
        "(ASYNCSPORTS_TOKEN) or the streaming credentials"
    )
    gone = errors.NotFoundError(404, "gone", url="http://h/x")
    assert describe(gone, [("sport", "soccer")]) == "404 gone (GET http://h/x): check sport soccer"
    gone.add_note("the fixture has not ended")
    assert describe(gone, [("sport", "soccer")]).endswith("): the fixture has not ended")


def test_sport_hints_suggest_and_never_refuse() -> None:
    spellings = ["Ice Hockey", "ICE_HOCKEY", "Basket Ball", "v2/volleyball", "Table Tennis"]
    for known in [*KNOWN_SPORTS, *spellings]:
        assert sport_hint(known) == "", known
    assert sport_hint("Basketbal") == " (not a known sport: did you mean basketball?)"
    assert "did you mean american-football?" in sport_hint("football")
    assert sport_hint("curling").startswith(" (not a known sport; known: american-football, ")


# ------------------------------------------------------------ --emulator


@pytest.mark.parametrize(
    ("args", "extra", "said"),
    [
        (
            ["--emulator", "--base-url", "http://127.0.0.1:9", "fixtures", "soccer"],
            {},
            "'--base-url': not with --emulator, which serves its own address",
        ),
        (
            ["fixtures", "soccer", "--live-url", "ws://127.0.0.1:9", "--emulator"],
            {},
            "'--live-url': not with --emulator,",
        ),
        (
            ["--streaming-url", "http://127.0.0.1:9", "events"],
            {"ASYNCSPORTS_EMULATOR": "1"},
            "'--streaming-url': not with --emulator (set by ASYNCSPORTS_EMULATOR),",
        ),
    ],
    ids=["base url", "live url after the command", "emulator from the environment"],
)
def test_emulator_with_a_typed_address_is_a_usage_error(
    args: list[str], extra: dict[str, str], said: str
) -> None:
    proc = run(*args, environ=clean_env(COLUMNS="300", **extra))
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_emulator_outranks_an_address_from_the_environment() -> None:
    # A profile that exports the real service's address does not stop a try with --emulator.
    environ = clean_env(ASYNCSPORTS_BASE_URL="http://127.0.0.1:9", ASYNCSPORTS_TOKEN="t")
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
TRIES = 5


def taken_over(pid: int) -> bool:
    """Whether the process handles SIGTERM, which Python leaves at its default: then
    asyncsports.__main__ has taken both signals (SIGINT first). Before it, the
    interpreter is still starting (its own modules, the console script's `import re`),
    where no code of the package can run yet."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # gone already: well past its start
        return True
    if any(line.startswith("State:") and "Z" in line for line in status.splitlines()):
        return True  # ended, not yet reaped (its signal mask reads 0 then): done, all of it
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.4])
@pytest.mark.parametrize("args", [SHORT, LONG], ids=["fixtures --limit 3", "events --watch"])
def test_ctrl_c_at_start_up_is_no_traceback(args: list[str], delay: float) -> None:
    # On a loaded machine the interpreter's own start can outlast `delay`: such a try
    # says nothing of the package and is made again, a little later each time (CI runs
    # two legs on two cores); a start that never reaches the package in time (heavy
    # imports before its handler) fails.
    for attempt in range(TRIES):
        proc = subprocess.Popen(
            [script(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        time.sleep(delay * 2**attempt)
        ours = taken_over(proc.pid)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            # A SIGINT in the interpreter's own start (before any of the package ran) may
            # be printed and swallowed by Python ("Failed checking if argv[0] is an import
            # path entry"): the command then runs on. That says nothing of the package.
            proc.kill()
            proc.communicate()
            if ours:
                raise
            continue
        # All of its output and exit 0: it was done, exiting (its handlers given back, a
        # signal mask of 0) when the signal came: well past its start.
        if ours or (args is SHORT and proc.returncode == 0 and len(out.splitlines()) == 3):
            break
    else:
        pytest.fail(f"{TRIES} tries: never had the signals {delay} s after it started")
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if args is SHORT and proc.returncode == 0:  # done before the signal came: all of it
        assert len(out.splitlines()) == 3
    else:
        assert proc.returncode == 130, err
        assert err.strip().endswith("interrupted")


def test_importing_the_package_loads_its_names_on_first_use() -> None:
    # What keeps the console script's start quick enough to take Ctrl-C first.
    code = "import sys, asyncsports; print(sorted({'aiohttp', 'msgspec'} & set(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert proc.stdout.strip() == "[]", proc.stderr
    for name in asyncsports.__all__:
        assert getattr(asyncsports, name) is not None
    assert asyncsports.errors.NotFoundError is asyncsports.NotFoundError
    with pytest.raises(AttributeError):
        _ = asyncsports.Nothing  # type: ignore[attr-defined]


# ------------------------------------------------------------------ --save


def test_save_reports_the_file_it_wrote_where_it_was_asked(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for given in ("p.png", "sub/q.png"):
        proc = run(
            "--emulator", "snooker", "player-info", "326", "2046", "--save", given, cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        image = base64.b64decode(msgspec.json.decode(proc.stdout)["fileContent"])
        assert proc.stderr == f"saved {given} ({len(image):,} bytes)\n"
        assert (tmp_path / given).read_bytes() == image
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["p.png", "q.png", "sub"]
