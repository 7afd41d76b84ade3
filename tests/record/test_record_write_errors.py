"""The recorder fails loudly (issue 41, point 6): a recording that cannot be written ends
the command with exit 17 and one line naming the file, no traceback; the file then holds
whole lines only (a replay takes it); opening never blocks (a FIFO, a device is refused
as not a regular file) and one SIGTERM ends a recording command within 2 s.

The faults are the real file system's: a file size limit (``RLIMIT_FSIZE``: EFBIG, for
any user), a 64 KiB tmpfs (ENOSPC, where this process may mount one), ``/dev/full``, a
FIFO nobody reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gzip
import os
import random
import resource
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import TIMEOUT, invoke
from support.cli import CLI
from support.procs import Command, child_env

from asyncsports._http.transports.record import _Writer
from asyncsports._wire.recording.format import encode
from asyncsports.emulator import Emulator
from asyncsports.emulator._replay import load
from asyncsports.errors import AsyncSportsError, RecordingWriteError

RECORDED = 17
LIMIT = 64 * 1024
SCALE = {
    "competitions": 1,
    "seasons": 1,
    "teams": 4,
    "fixtures_per_season": 12,
    "actions_per_fixture": 40,
}


def _limited(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))


def _record(path: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """``asyncsports --emulator --record PATH ARGS`` in a subprocess (files limited to
    ``limit`` bytes)."""
    return subprocess.run(
        [*CLI, "--emulator", "--record", str(path), *args],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=TIMEOUT,
        preexec_fn=None if limit is None else lambda: _limited(limit),
    )


def _lines(path: Path) -> list[bytes]:
    """The file's lines (inflated), each a whole JSON object, or AssertionError."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), data[-200:]
    lines = data.splitlines()
    for line in lines:
        assert isinstance(msgspec.json.decode(line), dict)
    return lines


def _one_line(proc: subprocess.CompletedProcess[str], path: Path, why: str) -> None:
    assert proc.returncode == RECORDED, proc.stderr
    assert "Traceback" not in proc.stderr and "Task exception" not in proc.stderr, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("asyncsports: error: ") and str(path) in line and why in line, line


@pytest.fixture
def tmpfs() -> Iterator[Path]:
    """A 64 KiB tmpfs, unmounted afterwards (skipped where this process may not mount)."""
    where = Path(tempfile.mkdtemp(prefix="asyncsports-full-"))
    try:
        mount = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={LIMIT}", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        why = (mount.stderr.strip() or "mount failed") if mount.returncode else ""
    except OSError as exc:  # no mount command
        why = str(exc)
    if why:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {why}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)
        where.rmdir()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cut.jsonl", "cut.jsonl.gz"])
def test_a_file_size_limit_ends_the_command_with_one_line_and_whole_lines(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    limit = LIMIT if name.endswith(".jsonl") else 8 * 1024
    proc = _record(path, "fixtures", "basketball", limit=limit)
    _one_line(proc, path, os.strerror(errno.EFBIG))
    lines = _lines(path)
    assert b'"format":"asyncsports-recording"' in lines[0]
    assert len(lines) > 1 or name.endswith(".gz")
    load(path)  # a replay takes what was written


def _live_fixture() -> str:
    found = invoke(
        "--emulator", "fixtures", "basketball", "--status", "live", "--limit", "1", "--json"
    )
    return str(msgspec.json.decode(found.stdout.splitlines()[0])["id"])


@pytest.mark.slow
def test_a_file_size_limit_ends_a_live_follow_too(tmp_path: Path) -> None:
    # The live connection open when the writer fails is dropped; its reconnect raises.
    path = tmp_path / "live.jsonl"
    proc = _record(path, "actions", "basketball", _live_fixture(), "--follow", limit=LIMIT // 2)
    _one_line(proc, path, os.strerror(errno.EFBIG))
    assert any(b'"e":"recv"' in line for line in _lines(path))
    load(path)


@pytest.mark.slow
def test_a_full_disk_ends_the_command_with_one_line_and_whole_lines(tmpfs: Path) -> None:
    path = tmpfs / "full.jsonl"
    for _ in range(3):
        path.unlink(missing_ok=True)
        proc = _record(path, "fixtures", "basketball")
        _one_line(proc, path, os.strerror(errno.ENOSPC))
        assert len(_lines(path)) > 1
        load(path)


@pytest.mark.slow
@pytest.mark.parametrize("once", [True, False], ids=["once", "follow"])
def test_a_full_disk_ends_sync_with_one_error_line(tmpfs: Path, tmp_path: Path, once: bool) -> None:
    # The mirror retries a failed request later: not one that cannot be recorded.
    path = tmpfs / "sync.jsonl"
    args = ["sync", "--db", str(tmp_path / "m.sqlite"), "-s", "basketball"]
    proc = _record(path, *args, *(["--once"] if once else []))
    assert proc.returncode == RECORDED, proc.stderr
    assert "Traceback" not in proc.stderr and "Task exception" not in proc.stderr, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    assert str(path) in line and os.strerror(errno.ENOSPC) in line, line
    _lines(path)


@pytest.mark.slow
def test_a_device_is_refused_as_not_a_regular_file() -> None:
    proc = _record(Path("/dev/full"), "fixtures", "basketball")
    _one_line(proc, Path("/dev/full"), "not a regular file")
    assert proc.stdout == ""


@pytest.mark.slow
def test_a_fifo_nobody_reads_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = _record(fifo, "fixtures", "basketball")  # before: blocked in open() for ever
    _one_line(proc, fifo, "not a regular file")
    assert proc.stdout == ""


@pytest.mark.slow
def test_a_fifo_read_by_someone_who_never_reads_is_refused_too(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opened, never read
    try:
        proc = _record(fifo, "fixtures", "basketball")
        _one_line(proc, fifo, "not a regular file")
    finally:
        os.close(reader)


def test_the_command_in_process_says_one_line_for_a_device() -> None:
    result = invoke("--emulator", "--record", "/dev/full", "fixtures", "basketball", "--limit", "1")
    assert result.exit_code == RECORDED, result.stderr
    assert result.stderr.splitlines() == [
        "asyncsports: error: --record: cannot write /dev/full: not a regular file"
    ]


@pytest.mark.slow
def test_one_sigterm_ends_a_recording_follow_within_two_seconds(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    fid = _live_fixture()
    cmd = Command(
        [
            *CLI,
            "--emulator",
            "--emulator-speed",
            "1",
            "--record",
            str(path),
            "actions",
            "basketball",
            fid,
            "--follow",
        ]
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while b'"e":"recv"' not in (path.read_bytes() if path.exists() else b""):
            assert cmd.proc.poll() is None, cmd.drain()
            assert time.monotonic() < deadline, "nothing recorded"
            time.sleep(0.05)
        sent = time.monotonic()
        cmd.proc.send_signal(signal.SIGTERM)
        code = cmd.proc.wait(TIMEOUT)
        took = time.monotonic() - sent
    finally:
        cmd.kill()
    said = cmd.drain()
    assert code == 143 and said == ["asyncsports: interrupted\n"], said
    assert took < 2, took
    assert any(b'"e":"closed"' in line for line in _lines(path))
    load(path)


# ------------------------------------------------------------------ the library


@contextlib.contextmanager
def _file_limit(size: int) -> Iterator[None]:
    """Files of this process limited to ``size`` bytes for the duration."""
    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)


async def test_a_client_raises_the_write_error_from_its_next_request_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lib.jsonl"
    async with Emulator(**SCALE) as emu:
        client = emu.client(record=path)
        await client.open()
        with _file_limit(LIMIT):
            with pytest.raises(RecordingWriteError) as caught:
                for _ in range(50):  # until the writer meets the limit
                    await client.fixtures.list("basketball").collect()
            with pytest.raises(RecordingWriteError):
                await client.fixtures.list("basketball").collect()
            await client.aclose()  # said already: not again
    error = caught.value
    assert isinstance(error, AsyncSportsError) and not isinstance(error, OSError)
    assert error.errno == errno.EFBIG and error.filename == str(path)
    assert str(error) == f"cannot write the recording {path}: {os.strerror(errno.EFBIG)}"
    _lines(path)
    load(path)


async def test_the_write_error_is_raised_once_by_the_request_or_else_by_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "close.jsonl"
    said: list[RecordingWriteError] = []
    async with Emulator(**SCALE) as emu:
        client = emu.client(record=path)
        await client.open()
        with _file_limit(4096):
            try:  # the body goes to the file as it is read, or just after
                await client.fixtures.list("basketball").collect()
            except RecordingWriteError as exc:
                said.append(exc)
            try:
                await client.aclose()
            except RecordingWriteError as exc:
                said.append(exc)
    assert [e.errno for e in said] == [errno.EFBIG]
    _lines(path)


@pytest.mark.parametrize("make", ["fifo", "device"])
async def test_a_client_refuses_what_is_not_a_regular_file_when_it_opens(
    tmp_path: Path, make: str
) -> None:
    path = tmp_path / "fifo" if make == "fifo" else Path("/dev/null")
    if make == "fifo":
        os.mkfifo(path)
    async with Emulator(**SCALE) as emu:
        client = emu.client(record=path, record_overwrite=True)
        with pytest.raises(RecordingWriteError) as caught:
            await client.open()  # never blocks: nobody reads the FIFO
        assert not client.is_open
        await client.aclose()
    assert caught.value.filename == str(path)
    assert str(caught.value) == f"cannot write the recording {path}: not a regular file"


# ------------------------------------------------------------------ the cut, any size


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=80_000), min_size=1, max_size=30),
    share=st.floats(min_value=0, max_value=1.1),
    gz=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32),
)
@example(sizes=[60_000] * 12, share=0.3, gz=True, seed=0)  # cut after a whole member
@example(sizes=[60_000] * 12, share=0.5, gz=False, seed=0)
def test_whatever_the_limit_the_file_holds_a_prefix_of_whole_lines(
    sizes: list[int], share: float, gz: bool, seed: int
) -> None:
    # Text that does not compress, so that a gzip file too is cut anywhere: in the
    # header, in a member, between members (of MEMBER bytes of lines).
    rng = random.Random(seed)
    lines = [
        encode({"e": "x", "id": i, "t": 0.0, "text": rng.randbytes(n // 2).hex()})
        for i, n in enumerate(sizes)
    ]
    limit = int(sum(map(len, lines)) * share)
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / ("w.jsonl.gz" if gz else "w.jsonl")

        async def record() -> RecordingWriteError | None:
            writer = _Writer(path)
            writer.open(lines[0])
            for line in lines[1:]:
                writer.write(line)
                await asyncio.sleep(0)  # batches of any size
            try:
                await writer.close()
            except RecordingWriteError as exc:
                return exc
            return None

        with _file_limit(limit):
            error = asyncio.run(record())
        opener = gzip.open if gz else open
        with opener(path, "rb") as f:
            kept = f.read()
    whole = b"".join(lines)
    assert whole.startswith(kept) and (not kept or kept.endswith(b"\n"))
    if sizes == [60_000] * 12 and share < 1:  # the examples: cut, but not at the start
        assert error is not None and kept.count(b"\n") > 1
    assert (error is None) == (kept == whole)
    if error is not None:
        assert error.errno == errno.EFBIG and error.filename == str(path)
