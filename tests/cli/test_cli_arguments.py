"""The command takes any argument bytes (issue 41, point 7): an over-long path or name is
a usage error naming the option and its length, or one line with the system's reason;
control characters in what it echoes are shown escaped; the embedded emulator says nothing
of its own on stderr."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import run

from asyncsports._wire.shown import printable

LONG = "a" * 10_000
ESC = "\x1b"
ERROR = "asyncsports: error: "


def one_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    """The one error line of a command that failed with ``code``: no traceback, no raw
    control character, nothing else on stderr but a usage error's pointer to --help."""
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert ESC not in proc.stderr
    lines = proc.stderr.splitlines()
    (line,) = [x for x in lines if x.startswith(ERROR)]
    rest = [x for x in lines if not x.startswith(ERROR)]
    assert rest == [] or (code == 2 and len(rest) == 1 and rest[0].startswith("Try '")), lines
    return line


# ---------------------------------------------------------------- over-long values


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["changes", "--db", LONG], "'--db'"),
        (["sync", "--once", "--emulator", "--db", LONG], "'--db'"),
        (["--emulator", "--record", LONG, "fixtures", "basketball"], "'--record'"),
        (["--emulator", "fixtures", LONG], "'SPORT'"),
        (["sync", "--once", "--emulator", "--sports", LONG], "'--sports'"),
        (["jobs", "--db", LONG], "'--db'"),
        (["worker", "--db", LONG, "--job", "j"], "'--db'"),
    ],
    ids=["changes --db", "sync --db", "--record", "sport", "--sports", "jobs", "worker"],
)
def test_an_over_long_value_is_a_usage_error_naming_the_option_and_its_length(
    args: list[str], option: str
) -> None:
    line = one_error(run(*args), 2)
    assert option in line and "10000 characters" in line, line
    assert LONG not in line  # said, not echoed


@pytest.mark.slow
def test_a_path_the_system_finds_too_long_is_one_line_with_its_reason(tmp_path: Path) -> None:
    """Within the bound, yet a name longer than a directory entry takes: the exit code of
    a database that cannot be opened, the system's reason."""
    line = one_error(run("changes", "--db", str(tmp_path / ("b" * 300))), 13)
    assert "File name too long" in line, line


@pytest.mark.slow
@pytest.mark.parametrize("command", [["jobs"], ["worker", "--job", "j"]], ids=["jobs", "worker"])
def test_a_jobs_database_that_is_no_postgresql_url_is_a_usage_error(command: list[str]) -> None:
    line = one_error(run(*command, "--db", "x.sqlite"), 2)
    assert "'--db'" in line and "postgresql://" in line, line


# ---------------------------------------------------------------- control characters


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "code", "shown"),
    [
        (["changes", "--db", "/nowhere/x\x1b[2Jy"], 13, "x\\x1b[2Jy"),
        (["sync", "--once", "--emulator", "--db", "/nowhere/x\x1b[2Jy"], 13, "x\\x1b[2Jy"),
        (
            ["--emulator", "--record", "/nowhere/x\x1b[2Jy", "fixtures", "basketball"],
            17,
            "x\\x1b[2Jy",
        ),
        (["--emulator", "fixtures", "x\x1b[2Jy"], 2, "x\\x1b[2Jy"),
        # A byte that is not UTF-8, as the shell passes it: the byte, not Python's surrogate.
        (["changes", "--db", os.fsdecode(b"/nowhere/x\xffy")], 13, "x\\xffy"),
    ],
    ids=["changes --db", "sync --db", "--record", "sport", "undecodable byte"],
)
def test_control_characters_echoed_are_shown_escaped(
    args: list[str], code: int, shown: str
) -> None:
    line = one_error(run(*args), code)
    assert shown in line, line


@pytest.mark.slow
def test_the_standalone_emulator_shows_a_replay_file_s_control_characters_escaped(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "x\x1b[2Jy.jsonl"
    bad.write_text("not a recording\n")
    proc = run("emulator", "--replay", str(bad))
    assert proc.returncode == 21 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert ESC not in line and "x\\x1b[2Jy.jsonl:1: " in line, line


@pytest.mark.slow
def test_log_lines_show_a_path_s_control_characters_escaped(tmp_path: Path) -> None:
    """sync's minute-by-minute lines name the database: escaped as the error lines are."""
    db = tmp_path / "m\x1b[2J.sqlite"
    proc = run("sync", "--once", "--emulator", "--db", str(db), "--sports", "basketball")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ESC not in proc.stderr and "m\\x1b[2J.sqlite" in proc.stderr, proc.stderr[-2000:]


# ---------------------------------------------------------------- the embedded emulator


@pytest.mark.slow
def test_the_embedded_emulator_says_nothing_of_its_own_on_stderr() -> None:
    """A request line longer than the emulator's server takes: its 400 is the command's
    one error line; the server's own "Error handling request" traceback is not shown."""
    line = one_error(run("--emulator", "fixtures", "basketball", "--query", f"x={LONG}"), 6)
    assert "400" in line and "Error handling request" not in line, line


# ---------------------------------------------------------------- the one escape


def _escaped(ch: str) -> bool:
    return (
        unicodedata.category(ch) in ("Cc", "Cs")
        or ch in "\u061c\u200e\u200f\u2028\u2029"
        or ("\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069")
    )


# Any character, surrogates included (argv's undecodable bytes), controls more often.
ANY = st.characters(exclude_categories=()) | st.sampled_from("\x1b\x00\n\x85\u202e\udcff")


@given(st.text(ANY))
def test_printable_escapes_every_control_character_and_keeps_the_rest(text: str) -> None:
    shown = printable(text)
    assert not any(map(_escaped, shown))
    assert shown == "".join(printable(ch) for ch in text)  # character by character
    if not any(map(_escaped, text)):
        assert shown == text


@given(st.characters(categories=["Cc", "Cs"]) | st.sampled_from("\u202e\u2066\u2028"))
def test_printable_writes_a_control_character_as_a_python_escape(ch: str) -> None:
    shown = printable(ch)
    if "\udc80" <= ch <= "\udcff":  # a byte that was not UTF-8, as Python decodes argv
        assert shown == f"\\x{ord(ch) - 0xDC00:02x}"
    else:
        assert shown == repr(ch)[1:-1] and shown.startswith("\\")
