"""Every command that takes a fixture id takes the id a table prints (issue 43, point 2):
the prefix that tells the table's ids apart, looked up as git looks up a short hash.
Against the embedded emulator (--emulator), the table on a pseudo-terminal."""

from __future__ import annotations

import collections

import pytest
from support import clean_env, lines, run
from support.cli import invoke, run_tty

SPORT = "basketball"
# Enough fixtures that two share their first 4 hex digits (the emulator's ids are fixed).
CROWD = ("--emulator-scale", "fixtures_per_season=200")


def table_ids(width: int, *args: str) -> list[str]:
    """The ids column of ``asyncsports --emulator fixtures SPORT ARGS`` on a terminal."""
    env = clean_env(COLUMNS=str(width), TERM="xterm")
    code, out = run_tty("--emulator", "fixtures", SPORT, *args, env=env)
    assert code == 0, out
    rows = out.rstrip("\n").split("\n")
    rule = next(i for i, line in enumerate(rows) if line.startswith("──"))
    assert rows[rule - 1].split()[-1] == "id", rows[rule - 1]
    return [row.split()[-1] for row in rows[rule + 1 : -1]]


@pytest.fixture(scope="module")
def shown() -> dict[str, tuple[str, str]]:
    """A live and a completed fixture: (the id a table at 80 columns shows, the whole id)."""
    picked = {}
    for status in ("live", "completed"):
        whole = lines(run("--emulator", "fixtures", SPORT, "--status", status, "--limit", "1"))
        short = table_ids(80, "--status", status, "--limit", "1")
        assert len(short) == 1 and short[0] != whole[0]["id"], short  # a prefix: shortened
        assert whole[0]["id"].startswith(short[0])
        picked[status] = (short[0], whole[0]["id"])
    return picked


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize(
    ("status", "args"),
    [
        ("live", ["fixture"]),
        ("live", ["actions"]),
        ("completed", ["statistics"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_command_takes_the_prefix_a_table_prints(
    status: str, args: list[str], shown: dict[str, tuple[str, str]]
) -> None:
    short, whole = shown[status]
    by_prefix = run("--emulator", args[0], SPORT, short)
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert lines(by_prefix) == lines(run("--emulator", args[0], SPORT, whole))


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("command", ["actions", "statistics"])
@pytest.mark.parametrize("via", ["ws", "poll"])
def test_following_takes_the_prefix_a_table_prints(
    command: str, via: str, shown: dict[str, tuple[str, str]]
) -> None:
    short, whole = shown["live"]
    args = [command, SPORT, short, "--follow", "--via", via, "--interval", "1"]
    if command == "actions":
        args += ["--limit", "2"]
    proc = run("--emulator", *args)
    changes = lines(proc)
    assert changes and changes[0]["change"] == "new", proc.stdout
    if command == "statistics":
        assert changes[-1]["record"]["fixtureId"] == whole


@pytest.mark.slow  # subprocesses
def test_a_prefix_two_fixtures_share_is_a_usage_error_naming_both() -> None:
    every = lines(run("--emulator", *CROWD, "fixtures", SPORT, "--page-size", "1000"))
    firsts = collections.Counter(f["id"][:4] for f in every)
    prefix = next(p for p, n in firsts.items() if n == 2)
    proc = run("--emulator", *CROWD, "fixture", SPORT, prefix)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert f"fixture id {prefix!r} is ambiguous: 2 fixtures" in proc.stderr
    for f in every:
        if f["id"].startswith(prefix):
            assert f"{f['id']} ({f['name']}, {f['status']}," in proc.stderr
    # one digit more tells them apart
    longer = next(f["id"][:5] for f in every if f["id"].startswith(prefix))
    assert lines(run("--emulator", *CROWD, "fixture", SPORT, longer))[0]["id"].startswith(longer)


@pytest.mark.slow  # subprocesses
def test_a_prefix_no_fixture_has_is_not_found() -> None:
    listed = lines(run("--emulator", "fixtures", SPORT, "--page-size", "1000"))
    taken = {f["id"][:5] for f in listed}
    prefix = next(p for p in (f"{n:05x}" for n in range(16**5)) if p not in taken)
    proc = run("--emulator", "actions", SPORT, prefix)
    assert (proc.returncode, proc.stdout) == (5, ""), proc.stderr
    assert proc.stderr.strip() == (
        f"asyncsports: error: no fixture of {SPORT} has an id starting {prefix!r}"
    )


@pytest.mark.parametrize(
    "given",
    ["abc", "27eb-", "xyz12345", "27ebbfa9ad38", "27ebbfa9-ad38-4310-a438-d4280d40b95f0", ""],
)
def test_what_is_neither_an_id_nor_its_prefix_is_a_usage_error(given: str) -> None:
    result = invoke("--emulator", "fixture", SPORT, given)
    assert (result.exit_code, result.stdout) == (2, "")
    assert "expected a fixture id (UUID) or its first 4 hex digits or more" in result.stderr


@pytest.mark.parametrize(
    ("given", "taken"),
    [
        ("27EBBFA9", "27ebbfa9"),
        ("27eb", "27eb"),
        ("27ebbfa9-a", "27ebbfa9-a"),
        ("27EBBFA9AD384310A438D4280D40B95F", "27ebbfa9-ad38-4310-a438-d4280d40b95f"),
        ("27ebbfa9-ad38-4310-a438-d4280d40b95f", "27ebbfa9-ad38-4310-a438-d4280d40b95f"),
    ],
)
def test_an_id_or_its_prefix_is_taken_in_canonical_lower_case(given: str, taken: str) -> None:
    from asyncsports.cli.ids import fixture_id

    assert fixture_id(given) == taken
