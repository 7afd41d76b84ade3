"""Tables on a terminal at any width (issue 32, point 2): the command in a subprocess with
its stdout on a pseudo-terminal, against the embedded emulator (--emulator)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from support import clean_env, lines, run
from support.cli import run_tty

pytestmark = pytest.mark.slow  # subprocesses

SPORT = "basketball"
HEADERS = ("start (UTC)", "status", "fixture", "competition", "id")


def tty(width: int, *args: str) -> list[str]:
    """The lines a terminal ``width`` columns wide shows for ``asyncsports --emulator ARGS``."""
    # TERM: rich 14 takes a dumb terminal (CI's) to be 80 columns, whatever COLUMNS says
    env = clean_env(COLUMNS=str(width), TERM="xterm")
    code, out = run_tty("--emulator", *args, env=env)
    assert code == 0, out
    return out.rstrip("\n").split("\n")


@pytest.fixture(scope="module")
def fixtures() -> list[dict[str, Any]]:
    """The listing's records, as the service writes them (piped: JSON Lines)."""
    return lines(run("--emulator", "fixtures", SPORT))


def starts(fixture: dict[str, Any]) -> tuple[str, str]:
    """A fixture's start as a table shows it: whole, or without its year."""
    when = dt.datetime.fromisoformat(fixture["startDateUTC"])
    return when.strftime("%Y-%m-%d %H:%M"), when.strftime("%m-%d %H:%M")


def header(rows: list[str]) -> list[str]:
    """The headers of a table: the line above its rule, split where two spaces part them."""
    rule = next(i for i, line in enumerate(rows) if line.startswith("──"))
    return re.split(r"\s{2,}", rows[rule - 1].strip())


@pytest.mark.parametrize("width", [80, 60])
def test_fixtures_show_every_name_and_date_whole(
    width: int, fixtures: list[dict[str, Any]]
) -> None:
    rows = tty(width, "fixtures", SPORT)
    assert max(map(len, rows)) <= width
    assert header(rows)[:1] == ["start (UTC)"]  # the date kept, in its place
    for f in fixtures:
        # the id whole or a prefix, as git shortens a hash; names repeat, ids do not
        at = next((i for i, r in enumerate(rows) if f["id"][:8] in r), None)
        assert at is not None, f"{f['id']} not shown at {width} columns"
        line = rows[at]
        # at 60 a name may wrap (the dates keep their years: the rows span three)
        words = iter(w for r in rows[at : at + 2] for w in r.split())
        wrapped = all(w in words for w in f["name"].split())  # in order, on two lines
        assert f["name"] in line if width == 80 else wrapped, f"{f['name']!r} at {width}"
        assert any(form in line for form in starts(f)), (line, starts(f))


def test_no_column_is_one_character_wide_at_60(fixtures: list[dict[str, Any]]) -> None:
    rows = tty(60, "fixtures", SPORT)
    shown = header(rows)
    assert set(shown) <= set(HEADERS) and len(shown) >= 3, shown  # headers whole, none cut
    cells = [re.split(r"\s{2,}", r.strip()) for r in rows if re.match(r"\d\d(\d\d-)?", r)]
    assert len(cells) == len(fixtures)
    assert all(len(cell) > 1 for row in cells for cell in row)
    assert "--wide for whole ids" in rows[-1]


def test_wide_shows_every_column_and_whole_ids(fixtures: list[dict[str, Any]]) -> None:
    rows = tty(120, "fixtures", SPORT, "--limit", "5", "--wide")
    assert header(rows) == list(HEADERS)
    text = "\n".join(rows)
    assert all(f["id"] in text for f in fixtures[:5])


def test_columns_picks_by_name_in_its_order(fixtures: list[dict[str, Any]]) -> None:
    rows = tty(80, "fixtures", SPORT, "--limit", "3", "--columns", "id,Status")
    assert header(rows) == ["id", "status"]
    assert [r.split()[0] for r in rows[2:5]] == [f["id"] for f in fixtures[:3]]
    # --columns leaves JSON Lines as the service wrote them
    piped = run("--emulator", "fixtures", SPORT, "--limit", "3", "--columns", "id")
    assert lines(piped) == fixtures[:3]


@pytest.mark.parametrize("terminal", [True, False])
def test_columns_refuses_an_unknown_name_listing_the_known(terminal: bool) -> None:
    args = ("--emulator", "fixtures", SPORT, "--limit", "1", "--columns", "fixture,nope")
    if terminal:
        code, out = run_tty(*args, env=clean_env(COLUMNS="80"))
        assert (code, out) == (2, "")
        return
    proc = run(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "asyncsports: error: --columns: no column 'nope' in this table; "
        "its columns: start, status, fixture, competition, id"
    )


def starts_of(line: str) -> list[int]:
    """Where each cell of a line starts: after two spaces or more, or at the line's start."""
    return [m.start() for m in re.finditer(r"(?:^|(?<=\s\s))\S", line)]


def test_a_followed_stream_shows_the_columns_that_fit() -> None:
    live = lines(run("--emulator", "fixtures", SPORT, "--status", "live", "--limit", "1"))
    rows = tty(60, "actions", SPORT, live[0]["id"], "--follow", "--limit", "6")
    assert header(["", *rows[:1], "──"])[:2] == ["change", "seq"] and "action" in rows[0]
    assert "send" not in rows[0]  # the lowest priority, dropped at 60 columns
    assert len(rows) == 7 and all(r.startswith("new ") for r in rows[1:])
    assert max(map(len, rows)) <= 60
    wide = tty(60, "actions", SPORT, live[0]["id"], "--follow", "--limit", "6", "--wide")
    assert wide[0].rstrip().endswith("  send")


@pytest.mark.parametrize("width", [80, 60])
def test_a_followed_streams_rows_line_up_under_its_header(width: int) -> None:
    # Issue 43, point 8: rows came parted by " | ", each as wide as its own cells.
    live = lines(run("--emulator", "fixtures", SPORT, "--status", "live", "--limit", "1"))
    rows = tty(width, "actions", SPORT, live[0]["id"][:8], "--follow", "--limit", "12")
    assert max(map(len, rows)) <= width
    heads = starts_of(rows[0])
    assert len(heads) >= 4, rows[0]
    for row in rows[1:]:
        # no cell crosses into the gap before a column (numbers align right, under theirs)
        assert all(row[h - 2 : h].strip() == "" for h in heads[1:]), "\n".join([rows[0], row])
        assert all(row[h - 1] == " " or h in starts_of(row) for h in heads[2:] if h < len(row))


@pytest.mark.parametrize("width", [80, 60])
def test_dates_of_another_year_keep_their_year(width: int, fixtures: list[dict[str, Any]]) -> None:
    # Issue 43, point 8: completed fixtures of 2024 showed 08-08 19:00 at 80 columns.
    this_year = dt.datetime.now(dt.UTC).year
    done = [f for f in fixtures if f["status"] == "Completed"]
    assert any(starts(f)[0][:4] != str(this_year) for f in done)  # so every row keeps it
    rows = tty(width, "fixtures", SPORT, "--status", "completed")
    shown = [r for r in rows if re.match(r"\d\d", r)]
    assert len(shown) == len(done) and max(map(len, rows)) <= width, "\n".join(rows)
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d ", r) for r in shown), "\n".join(rows)


@pytest.mark.parametrize("asked", ["id,name", "ID, Name", "startDateUTC,name"])
def test_columns_takes_the_json_field_name(asked: str, fixtures: list[dict[str, Any]]) -> None:
    # Issue 43, point 8: --columns id,name failed: the column is called fixture.
    rows = tty(80, "fixtures", SPORT, "--limit", "2", "--columns", asked)
    wanted = {"id": "id", "name": "fixture", "startdateutc": "start (UTC)"}
    assert header(rows) == [wanted[n.strip().lower()] for n in asked.split(",")]
    assert all(f["name"] in "\n".join(rows) for f in fixtures[:2])


@pytest.mark.parametrize(
    "args",
    [
        ["squads", SPORT, "--season-id", "{season}"],
        ["actions", SPORT, "{fixture}"],
        ["standings", SPORT, "--season-id", "{season}"],
        ["statistics", SPORT, "{fixture}"],
        ["events"],
        ["snooker", "tournaments"],
        ["snooker", "matches", "1000", "--round-number", "1"],
        ["snooker", "centuries", "1000"],
        ["snooker", "ast", "1000"],
    ],
    ids=lambda args: " ".join(a for a in args if "{" not in a),
)
def test_every_view_fits_60_columns_with_its_headers_whole(
    args: list[str], fixtures: list[dict[str, Any]]
) -> None:
    done = next(f for f in fixtures if f["status"] == "Completed")
    ids = {"fixture": done["id"], "season": done["stage"]["season"]["id"]}
    rows = tty(60, *(a.format(**ids) for a in args))
    assert max(map(len, rows)) <= 60, "\n".join(rows)
    shown = header(rows)
    assert len(shown) >= 2 and all(len(h) > 1 or h in "PWDL" for h in shown), shown
