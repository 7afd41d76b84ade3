"""The backfill: its SQLite sink without a network, then whole runs against the emulator,
in process and as the `asyncsports backfill` command killed with SIGKILL and run again."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec
import pytest
from support import CLI, clean_env, invoke
from support.rows import When
from support.samples import FIXTURE_ID, STATISTICS, action, fixture
from support.sqlite import sqlite

from asyncsports.backfill import Backfill, Scope, first_missing, requests_needed, started
from asyncsports.emulator import Emulator
from asyncsports.errors import AuthenticationError, ServerError
from asyncsports.models import Action, Fixture, Statistics, decode
from asyncsports.store._backfill import TABLES
from asyncsports.store._rows import action_row, fixture_row, statistics_row
from asyncsports.store._sqlite import SinkError, connect

# ------------------------------------------------------------------ rows


def test_fixture_row_keeps_key_columns_and_the_wire_json() -> None:
    wire = fixture(3, status="Live", fixtureDeleted=True)
    f = decode(Fixture, msgspec.json.encode(wire))
    row = dict(zip(TABLES["fixtures"], fixture_row("basketball", f), strict=True))
    assert row["id"] == str(f.id)
    assert row["sport"] == "basketball"
    assert row["season_id"] == wire["stage"]["season"]["id"]
    assert (
        row["start_date_utc"].endswith("Z")
        and row["start_date_utc"][:10] == wire["startDateUTC"][:10]
    )
    assert (row["status"], row["name"], row["deleted"]) == ("Live", "Home 3 v Away 3", 1)
    assert decode(Fixture, row["json"]) == f
    assert msgspec.json.decode(row["json"])["fixtureDeleted"] is True


def test_action_and_statistics_rows_decode_back_to_the_record() -> None:
    a = decode(Action, msgspec.json.encode(action(7)))
    row = action_row("american-football", FIXTURE_ID, a)
    assert row[:6] == (
        FIXTURE_ID,
        str(a.fixture_action.action_id),
        "american-football",
        7,
        "Start Clock",
        "Confirmed",
    )
    assert decode(Action, row[-1]) == a
    packet = decode(Statistics, msgspec.json.encode(STATISTICS))
    srow = statistics_row("snooker", FIXTURE_ID, packet)
    assert srow[:3] == (FIXTURE_ID, "snooker", 412)
    assert msgspec.json.decode(srow[-1])["traceId"] == "abc-123"


# ------------------------------------------------------------------ sink
# (the engine-neutral tests of the sink, against SQLite and PostgreSQL: tests/storage/test_sinks.py)


def test_a_file_that_is_not_ours_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, just text " * 100)
    with pytest.raises(SinkError, match="cannot use"):
        connect(junk)
    other = tmp_path / "other.sqlite"
    with sqlite(other) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    with pytest.raises(SinkError, match=r"not an asyncsports database .*invoices"):
        connect(other)
    with sqlite(other) as db:  # nothing was written to it
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["invoices"]
    connect(tmp_path / "fresh.sqlite").close()
    connect(tmp_path / "fresh.sqlite").close()  # ours: opens again


# ------------------------------------------------------------------ scope


def test_the_job_key_is_the_same_for_the_same_scope_in_any_order() -> None:
    a = Scope(("soccer", "basketball"), ("s2", "s1"), dt.date(2024, 1, 1), None, 50)
    b = Scope(("basketball", "soccer", "soccer"), ("s1", "s2"), dt.date(2024, 1, 1), None, 50)
    assert a.key == b.key == "sports=basketball,soccer seasons=s1,s2 from=2024-01-01 size=50"
    assert Scope(("basketball",), page_size=20).key != Scope(("basketball",)).key
    assert a.listings() == [
        ("soccer", "s2"),
        ("soccer", "s1"),
        ("basketball", "s2"),
        ("basketball", "s1"),
    ]
    assert Scope(("ice-hockey",)).listings() == [("ice-hockey", None)]


def test_helpers() -> None:
    assert first_missing(set()) == 0
    assert first_missing({0, 1, 2, 4}) == 3
    assert first_missing({1, 2}) == 0
    assert started("Completed", False) and started("Live", False) and started(None, False)
    assert not started("Scheduled", False)
    assert not started("postponed", False)
    assert not started("Completed", True)


# ------------------------------------------------------------------ whole runs

# Small enough for seconds, big enough for several pages per sport and a few hundred units.
SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 8,
    "actions_per_fixture": 30,
}
SCALE_ARG = ",".join(f"{k}={v}" for k, v in SCALE.items())


def command(db: Path, *extra: str) -> list[str]:
    """The backfill command a user would type, on the small emulator, summary as JSON."""
    return [
        *CLI,
        "--emulator",
        "--emulator-scale",
        SCALE_ARG,
        "backfill",
        "--db",
        str(db),
        "--page-size",
        "5",
        "--json",
        *extra,
    ]


def backfill(db: Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        command(db, *extra), capture_output=True, text=True, env=clean_env(), timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    summary: dict[str, Any] = msgspec.json.decode(proc.stdout)
    return summary


def snapshot(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, in a stable order, without the times of day."""
    with sqlite(db) as conn:
        tables = {t: sorted(conn.execute(f"SELECT * FROM {t}")) for t in (*TABLES, "job_fixtures")}
        tables["checkpoints"] = sorted(conn.execute("SELECT job, unit, rows FROM checkpoints"))
        tables["jobs"] = sorted(conn.execute("SELECT job, finished_at IS NOT NULL FROM jobs"))
    return tables


def checkpoints(db: Path) -> int:
    try:
        with sqlite(db) as conn:
            return int(conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def start_and_stop(db: Path, sig: signal.Signals, after: int) -> subprocess.Popen[str]:
    """Start a slow (rate-limited) backfill and send it ``sig`` once ``after`` units are in."""
    proc = subprocess.Popen(
        command(db, "--rate-limit", "40"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        deadline = time.monotonic() + 30
        while checkpoints(db) < after:
            assert proc.poll() is None, "the backfill ended before it could be stopped"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(sig)
        proc.wait(30)
    finally:
        if proc.poll() is None:  # a failure above: no backfill left running
            proc.kill()
            proc.wait()
    return proc


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A backfill run from start to end without interruption: the reference."""
    db = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    return db, backfill(db)


@pytest.mark.slow
def test_a_clean_run_fills_every_table_and_says_so(clean: tuple[Path, dict[str, Any]]) -> None:
    db, summary = clean
    tables = snapshot(db)
    assert summary["finished"] is True and summary["resumed"] is False
    assert summary["rows"] == {t: len(tables[t]) for t in TABLES}
    per_sport = Counter(row[1] for row in tables["fixtures"])
    assert per_sport == {
        sport: SCALE["seasons"] * SCALE["fixtures_per_season"]
        for sport in (
            "american-football",
            "basketball",
            "cricket",
            "ice-hockey",
            "snooker",
            "soccer",
            "volleyball",
        )
    }
    assert tables["statistics"] and tables["actions"]
    # Fixtures not yet started get no actions or statistics units; started ones without
    # statistics (404: not finished) are counted, not failed.
    with sqlite(db) as conn:
        scheduled = conn.execute("SELECT count(*) FROM fixtures WHERE status = 'Scheduled'")
        assert scheduled.fetchone()[0] > 0
        (orphans,) = conn.execute(
            "SELECT count(*) FROM actions WHERE fixture_id IN "
            "(SELECT id FROM fixtures WHERE status = 'Scheduled')"
        ).fetchone()
        assert orphans == 0
    assert summary["without_statistics"] > 0 and summary["failed"] == []
    assert summary["requests"] >= summary["units"] - summary["without_statistics"]


@pytest.mark.slow
def test_killed_with_sigkill_then_run_again_ends_with_the_clean_rows(
    clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "killed.sqlite"
    proc = start_and_stop(db, signal.SIGKILL, after=40)
    assert proc.returncode == -signal.SIGKILL
    partial = snapshot(db)
    assert 40 <= len(partial["checkpoints"]) < len(snapshot(clean[0])["checkpoints"])
    assert partial["jobs"] == [(clean[1]["job"], 0)]  # unfinished
    summary = backfill(db)
    assert summary["resumed"] is True and summary["finished"] is True
    assert summary["skipped"] >= 40
    assert snapshot(db) == snapshot(clean[0])


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_says_how_to_resume_and_exits_130(
    clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "interrupted.sqlite"
    proc = start_and_stop(db, signal.SIGINT, after=20)
    assert proc.returncode == 130
    assert proc.stdout is not None and proc.stderr is not None
    stopped = msgspec.json.decode(proc.stdout.read())
    assert stopped["interrupted"] is True and stopped["finished"] is False
    err = proc.stderr.read()
    assert "run the same command again to resume" in err and "Traceback" not in err
    # What was fetched before the stop is committed: every checkpointed unit's rows are in.
    assert len(snapshot(db)["checkpoints"]) >= 20
    assert backfill(db)["resumed"] is True
    assert snapshot(db) == snapshot(clean[0])


@pytest.mark.slow
def test_running_a_finished_job_again_upserts_the_same_rows(
    clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "again.sqlite"
    shutil.copy(clean[0], db)
    summary = backfill(db)
    assert summary["resumed"] is False and summary["skipped"] == 0
    assert summary["written"] == summary["rows"] == clean[1]["rows"]
    assert snapshot(db) == snapshot(clean[0])


@pytest.mark.slow
def test_sport_season_and_dates_narrow_the_job(
    clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    with sqlite(clean[0]) as conn:
        season, _, last = conn.execute(
            "SELECT season_id, min(start_date_utc), max(start_date_utc) FROM fixtures "
            "WHERE sport = 'basketball' GROUP BY season_id ORDER BY 2 LIMIT 1"
        ).fetchone()
        dates = sorted(
            {
                r[0][:10]
                for r in conn.execute(
                    "SELECT start_date_utc FROM fixtures WHERE season_id = ?", (season,)
                )
            }
        )
    since = dates[1]  # leave the first day out
    db = tmp_path / "narrow.sqlite"
    summary = backfill(
        db,
        "--sports",
        "basketball",
        "--season-id",
        season,
        "--date-from",
        since,
        "--date-to",
        last[:10],
    )
    assert (
        summary["job"] == f"sports=basketball seasons={season} from={since} to={last[:10]} size=5"
    )
    with sqlite(db) as conn:
        got = sorted(conn.execute("SELECT * FROM fixtures"))
    with sqlite(clean[0]) as conn:
        want = sorted(
            conn.execute(
                "SELECT * FROM fixtures WHERE season_id = ? AND substr(start_date_utc, 1, 10) >= ?",
                (season, since),
            )
        )
    assert got == want and 0 < len(got) < SCALE["fixtures_per_season"]
    narrowed = snapshot(db)
    reference = snapshot(clean[0])
    ids = {row[0] for row in got}
    assert narrowed["actions"] == [r for r in reference["actions"] if r[0] in ids]
    assert narrowed["statistics"] == [r for r in reference["statistics"] if r[0] in ids]


@pytest.mark.slow
def test_a_bad_db_file_is_one_line_and_exit_13(tmp_path: Path) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("my notes, not a database\n" * 200)
    proc = subprocess.run(command(db), capture_output=True, text=True, env=clean_env(), timeout=60)
    assert proc.returncode == 13
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"cannot use {db}" in proc.stderr
    assert db.read_text().startswith("my notes")


UNKNOWN_SEASON = "00000000-0000-0000-0000-000000000001"


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (
            ["--sports", "curling"],
            5,
            "not found (404): sport curling (not a known sport; known: american-football, ",
        ),
        (
            # A slip of a known name ("baskteball") is a usage error: test_cli_exits.py.
            ["--sports", "soccer", "--sports", "hockey"],
            5,
            "not found (404): sport hockey (not a known sport: did you mean ice-hockey?):",
        ),
        (["--season-id", UNKNOWN_SEASON], 5, f"not found (404): season {UNKNOWN_SEASON}:"),
        (["--sports", "soccer", "--season-id", UNKNOWN_SEASON], 5, "sport soccer, season"),
        # An empty date range is an answer: nothing to copy, nothing wrong.
        (["--sports", "soccer", "--date-from", "1990-01-01", "--date-to", "1990-01-31"], 0, ""),
    ],
    ids=["unknown sport", "one unknown sport", "unknown season", "season of no sport", "dates"],
)
def test_a_run_that_finds_nothing_asked_for_exits_5_and_says_why(
    args: list[str], code: int, said: str, tmp_path: Path
) -> None:
    db = tmp_path / "nothing.sqlite"
    result = invoke(
        "--emulator",
        "--emulator-scale",
        "fixtures_per_season=2",
        "backfill",
        "--db",
        str(db),
        "--json",
        *args,
    )
    assert result.exit_code == code, result.output
    assert msgspec.json.decode(result.stdout)["finished"] is True
    if said:
        assert result.stderr.count("\n") == 1 and said in result.stderr
    else:
        assert result.stderr == ""


def test_requests_needed_counts_pages_and_two_requests_per_started_fixture() -> None:
    assert requests_needed([0, 1, 1000, 1001], 7, 1000) == 1 + 1 + 1 + 2 + 14


@pytest.mark.emulator(**SCALE)
@pytest.mark.parametrize("page_size", [1000, 5])
async def test_a_backfill_asks_for_no_request_it_does_not_need(
    sports_emulator: Emulator, tmp_path: Path, page_size: int
) -> None:
    """Under a rate budget every request counts: no page past the end, none twice."""
    db = tmp_path / "needed.sqlite"
    scope = Scope(("basketball", "soccer", "curling"), page_size=page_size)
    async with sports_emulator.client() as client:
        report = await Backfill(client, db, scope).run()
        sent = client.requests_sent
    assert report.finished and report.not_found == ["curling"]
    with sqlite(db) as conn:
        counts = dict(conn.execute("SELECT sport, count(*) FROM fixtures GROUP BY sport"))
        rows = conn.execute("SELECT status, deleted FROM fixtures").fetchall()
    begun = sum(started(status, bool(deleted)) for status, deleted in rows)
    listings = [counts.get(sport, 0) for sport in scope.sports]
    assert counts["basketball"] > 5 and begun > 0
    assert sent == requests_needed(listings, begun, page_size)


@pytest.mark.emulator(**SCALE)
async def test_a_resumed_run_still_reports_the_listings_that_answered_404(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    db = tmp_path / "resumed.sqlite"
    scope = Scope(("curling", "soccer"), page_size=5)

    async with sports_emulator.client() as client:
        work = Backfill(client, db, scope, progress=When("actions", lambda: work.stop()))
        first = await work.run()
        assert first.interrupted and first.not_found == ["curling"]
        again = await Backfill(client, db, scope).run()
    assert again.resumed and again.finished
    assert again.not_found == ["curling"]  # from the first run's checkpoint, not asked again


# ------------------------------------------------------------------ failures, in process


@pytest.mark.emulator(**SCALE)
@pytest.mark.slow
async def test_units_that_fail_are_retried_by_the_next_run(
    sports_emulator: Emulator, clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "faults.sqlite"
    scope = Scope(page_size=5)
    sports_emulator.faults.add(route="statistics", status=500, times=5)
    async with sports_emulator.client(max_retries=0) as client:
        report = await Backfill(client, db, scope, concurrency=4).run()
    assert len(report.failed) == 5 and not report.finished
    assert all(unit.startswith("statistics ") for unit, _ in report.failed)
    assert isinstance(report.failed[0][1], ServerError)
    async with sports_emulator.client() as client:
        again = await Backfill(client, db, scope).run()
    assert again.resumed and again.finished
    assert again.requests == 5  # only the failed units
    assert snapshot(db) == snapshot(clean[0])


@pytest.mark.emulator(**SCALE)
async def test_an_auth_failure_stops_the_run_and_keeps_what_is_done(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    db = tmp_path / "auth.sqlite"
    sports_emulator.faults.add(route="actions", status=401, skip=10)
    async with sports_emulator.client(max_retries=0) as client:
        with pytest.raises(AuthenticationError):
            await Backfill(client, db, Scope(page_size=5), concurrency=2).run()
    done = snapshot(db)
    assert done["jobs"][0][1] == 0  # unfinished: the next run resumes
    assert sum(1 for _, unit, _ in done["checkpoints"] if unit.startswith("actions ")) >= 10


@pytest.mark.emulator(**SCALE)
async def test_stop_ends_the_run_with_a_report(sports_emulator: Emulator, tmp_path: Path) -> None:
    db = tmp_path / "stop.sqlite"

    async with sports_emulator.client() as client:
        stop = When("actions", lambda: work.stop(), after=30)
        work = Backfill(client, db, Scope(page_size=5), progress=stop)
        report = await work.run()
    assert report.interrupted and not report.finished
    assert report.rows["actions"] > 0 and report.units < 200
    assert snapshot(db)["jobs"][0][1] == 0


@pytest.mark.emulator(**SCALE)
@pytest.mark.slow
async def test_a_run_cancelled_from_outside_stays_resumable_and_leaves_no_thread(
    sports_emulator: Emulator, clean: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    db = tmp_path / "cancelled.sqlite"

    async with sports_emulator.client() as client:
        with anyio.CancelScope() as scope:
            cancel = When("actions", scope.cancel)
            await Backfill(client, db, Scope(page_size=5), progress=cancel).run()
        assert scope.cancelled_caught
        assert not [t for t in threading.enumerate() if t.name == "asyncsports-writer"]
        assert snapshot(db)["jobs"][0][1] == 0  # unfinished: the next run resumes it
        again = await Backfill(client, db, Scope(page_size=5)).run()
    assert again.resumed and again.finished
    assert snapshot(db) == snapshot(clean[0])


# ------------------------------------------------------------------ signals at any moment

# What a user (Ctrl-C, once or in a hurry) or a supervisor (SIGTERM) sends: the gap
# before each signal, in seconds.
SIGINT, SIGTERM = signal.SIGINT, signal.SIGTERM
SEQUENCES: list[tuple[tuple[float, signal.Signals], ...]] = [
    ((0, SIGINT),),
    ((0, SIGINT), (0.05, SIGINT)),
    ((0, SIGINT), (0.3, SIGINT)),
    ((0, SIGTERM),),
    ((0, SIGINT), (0.1, SIGTERM)),
    ((0, SIGINT), (0.02, SIGINT), (0.02, SIGINT)),
    ((0, SIGTERM), (0.1, SIGTERM)),
]
# From the moment the command handles signals to about the end of a run (two sports,
# slowed down by the rate limit), each delay with the next sequence.
DELAYS = [round(i * 2.0 / 13, 3) for i in range(14)]
SIGNALED = ("--sports", "basketball", "--sports", "soccer", "--rate-limit", "20")
# All a signal may add to stderr: the first one's notice, and the line saying how to resume.
NOTICES = ("asyncsports: stopping: saving what is fetched", "asyncsports: interrupted")


def handles_sigterm(pid: int) -> bool:
    """Whether the process catches SIGTERM: the command has installed its handler
    (before that, Python's defaults apply: the process is still importing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


@dataclass
class Signaled:
    db: Path
    sent: list[signal.Signals]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    """From the last signal to the end of the process."""


def send_signals(
    db: Path, delay: float, sequence: tuple[tuple[float, signal.Signals], ...], working: bool
) -> Signaled:
    """Run the command and send it ``sequence`` ``delay`` seconds after it handles signals
    (``working``: after its first unit is in, so that on a loaded machine, where starting
    takes longer than every delay, some signals still land in the work itself)."""
    proc = subprocess.Popen(
        command(db, *SIGNALED),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    deadline = time.monotonic() + 60
    while not handles_sigterm(proc.pid):
        assert proc.poll() is None, "the command ended without ever handling SIGTERM"
        assert time.monotonic() < deadline, "the command never installed its handler"
        time.sleep(0.002)
    while working and not checkpoints(db) and proc.poll() is None:
        assert time.monotonic() < deadline, "the command never finished a unit"
        time.sleep(0.002)
    time.sleep(delay)
    sent = []
    for gap, sig in sequence:
        time.sleep(gap)
        if proc.poll() is None:
            proc.send_signal(sig)
            sent.append(sig)
    last = time.monotonic()
    try:
        # Generous: it only turns a hang into a failure.
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"hung after {[s.name for s in sent]} at {delay} s; stderr: {err}")
    return Signaled(db, sent, proc.returncode, out, err, time.monotonic() - last)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/PID/status")
@pytest.mark.emulator(**SCALE)
@pytest.mark.slow
async def test_any_signals_at_any_moment_end_the_command_quickly_and_resumably(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    # Every other case waits for the first unit before its delay: the phases below are
    # reached whatever the machine's load.
    cases = [
        (tmp_path / f"signaled-{i}.sqlite", delay, SEQUENCES[i % len(SEQUENCES)], i % 2 == 1)
        for i, delay in enumerate(DELAYS)
    ]

    def send_all() -> list[Signaled]:
        # Four at a time: on two cores, more would all still be starting when signaled.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda case: send_signals(*case), cases))

    results = await anyio.to_thread.run_sync(send_all)
    scope = Scope(("basketball", "soccer"), page_size=5)  # the command's job
    async with sports_emulator.client() as client:
        reference = await Backfill(client, tmp_path / "clean.sqlite", scope).run()
        phases: Counter[str] = Counter()
        for (_, delay, _, _), got in zip(cases, results, strict=True):
            what = f"{[s.name for s in got.sent]} at {delay} s: {got.stderr!r}"
            assert not [line for line in got.stderr.splitlines() if not line.startswith(NOTICES)], (
                what
            )
            assert got.seconds < 20, what  # a few seconds: generous for a loaded machine
            if got.returncode == 0:  # the run ended before the signal could stop it
                assert msgspec.json.decode(got.stdout)["finished"] is True, what
                phases["after the end"] += 1
            else:
                assert got.sent and got.returncode == 128 + got.sent[0], what
                assert "asyncsports: interrupted" in got.stderr, what
                if got.stdout:  # stopped gracefully: the summary says so
                    assert msgspec.json.decode(got.stdout)["interrupted"] is True, what
                done = checkpoints(got.db)
                phases["before any unit" if done == 0 else "partial"] += 1
            again = await Backfill(client, got.db, scope).run()
            assert again.finished, what
            assert snapshot(got.db) == snapshot(reference.db), what
    # The delays did reach into the work itself, not just its start.
    assert phases["partial"] >= 1, phases


@pytest.mark.emulator(**SCALE)
async def test_every_row_keeps_the_record_exactly_as_the_service_sent_it(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    db = tmp_path / "raw.sqlite"
    async with sports_emulator.client() as client:
        await Backfill(client, db, Scope(sports=("soccer",), page_size=5)).run()
        with sqlite(db) as con:
            fid, action_json = con.execute(
                "SELECT fixture_id, json FROM actions ORDER BY fixture_id, seq LIMIT 1"
            ).fetchone()
            (stored,) = con.execute("SELECT json FROM fixtures WHERE id = ?", (fid,)).fetchone()
        _, sent = await client.with_json.fixtures.get("soccer", fid)
        (first, *_) = await client.with_json.actions.list("soccer", fid).collect()
    # Byte for byte what was sent: a field the models do not know (the emulator
    # sends updateCount, rules...) is in the database as it came.
    assert msgspec.json.decode(stored) == msgspec.json.decode(sent)
    assert msgspec.json.decode(action_json) == msgspec.json.decode(first.json)
    assert "updateCount" in msgspec.json.decode(stored)
