"""Recordings are untrusted input (issue 30, part 3): whatever a file holds, a replay
refuses it with one RecordingError (file, line, what) before serving, in time linear in
its bytes and memory bounded by the documented limits; and the replay server answers a
request it cannot make sense of with a 4xx, never an exception."""

from __future__ import annotations

import gzip
import itertools
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import clean_env

from asyncsports._wire.recording.format import encode, position
from asyncsports._wire.recording.reading import MAX_LINE, Lines, read
from asyncsports.cli.exits import EXIT_CODES
from asyncsports.emulator import Emulator
from asyncsports.emulator.__main__ import BAD_RECORDING
from asyncsports.emulator._match import Nearest
from asyncsports.errors import AsyncSportsError, RecordingError

HEAD = {"format": "asyncsports-recording", "version": 1}
GET = {"e": "get", "id": 1, "t": 0, "host": "data", "path": "/a", "query": [["page", "0"]]}
REPLY = {"e": "reply", "id": 1, "t": 0, "status": 200, "headers": {}}
CONNECT = {
    "e": "connect",
    "id": 2,
    "t": 0,
    "host": "live",
    "path": "/f/actions",
    "query": [["startPosition", "0"]],
}
SMALL = "tests/data/replay-small.jsonl.gz"
EMULATOR = [sys.executable, "-m", "asyncsports.emulator"]


def lines(*events: dict[str, Any] | bytes) -> list[bytes]:
    return [encode(HEAD), *(e if isinstance(e, bytes) else encode(e) for e in events)]


def without(event: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != name}


# Each malformed third line (after the header and a request): what crashed read() with
# KeyError, AttributeError, TypeError or ValueError, or went through.
MALFORMED = {
    "not JSON": b'{"e": "reply", "id": 1,',
    "a list for the event": b'[{"e": "reply"}]',
    "a string for the event": b'"reply"',
    "no kind": without(REPLY, "e"),
    "no id": without(REPLY, "id"),
    "no time": without(REPLY, "t"),
    "a kind that is a number": {**REPLY, "e": 3},
    "an id that is a string": {**REPLY, "id": "1"},
    "a time below zero": {**REPLY, "t": -1},
    "a request without a host": without({**GET, "id": 3}, "host"),
    "a request without a path": without({**GET, "id": 3}, "path"),
    "a query that is an object": {**GET, "id": 3, "query": {"page": "0"}},
    "a query value that is a number": {**GET, "id": 3, "query": [["page", 0]]},
    "a query pair of three": {**GET, "id": 3, "query": [["page", "0", "1"]]},
    "a reply without a status": without(REPLY, "status"),
    "a status that is a string": {**REPLY, "status": "200"},
    "a status out of range": {**REPLY, "status": 9999},
    "headers that are a list": {**REPLY, "headers": [["Date", "x"]]},
    "a header value that is a number": {**REPLY, "headers": {"Age": 3}},
    "a reply to a request not recorded": {**REPLY, "id": 7},
    "a startPosition in other digits": {**CONNECT, "query": [["startPosition", "²"]]},
    "a startPosition of 5,000 digits": {**CONNECT, "query": [["startPosition", "9" * 5000]]},
    "a close code that is a string": {"e": "closed", "id": 2, "t": 0, "by": "server", "code": "x"},
}
AFTER_A_REPLY = {
    "a body piece that is not base64": {"e": "body", "id": 1, "t": 0, "b64": "!!!"},
    "a body text that is a number": {"e": "body", "id": 1, "t": 0, "text": 5},
    "complete that is a string": {"e": "end", "id": 1, "t": 0, "complete": "yes"},
}


@pytest.mark.parametrize("bad", MALFORMED.values(), ids=MALFORMED.keys())
def test_each_kind_of_malformed_line_is_a_recording_error_naming_its_line(
    bad: dict[str, Any] | bytes,
) -> None:
    with pytest.raises(RecordingError) as caught:
        read(lines(GET, bad), "rec.jsonl")
    err = caught.value
    assert (err.file, err.line) == ("rec.jsonl", 3) and err.what
    assert str(err) == f"rec.jsonl:3: {err.what}" and "\n" not in str(err)
    assert isinstance(err, AsyncSportsError) and isinstance(err, ValueError)


@pytest.mark.parametrize("bad", AFTER_A_REPLY.values(), ids=AFTER_A_REPLY.keys())
def test_each_kind_of_malformed_body_line_is_a_recording_error(bad: dict[str, Any]) -> None:
    with pytest.raises(RecordingError) as caught:
        read(lines(GET, REPLY, bad), "rec.jsonl")
    assert caught.value.line == 4


@pytest.mark.parametrize(
    "first",
    [b"", b"not json", b"[]", msgspec.json.encode({**HEAD, "version": 2})],
    ids=["empty", "not JSON", "a list", "version 2"],
)
def test_a_file_that_is_not_a_recording_is_refused_at_its_first_line(first: bytes) -> None:
    with pytest.raises(RecordingError) as caught:
        read([first], "x.jsonl")
    assert caught.value.line == 1


def test_a_body_over_the_limit_is_refused_at_the_piece_that_passes_it() -> None:
    piece = {"e": "body", "id": 1, "t": 0, "text": "x" * 100}
    with pytest.raises(RecordingError) as caught:
        read(lines(GET, REPLY, *[piece] * 5), "rec.jsonl", max_body=450)
    assert caught.value.line == 8 and "longer than 450" in caught.value.what


def test_a_line_over_the_limit_is_refused_before_it_is_held_whole() -> None:
    taken = 0

    def endless() -> Iterator[bytes]:  # a gzip bomb of one line, as read in chunks
        nonlocal taken
        yield encode(HEAD)
        while True:
            taken += 1
            yield b"x" * 1024 * 1024

    with pytest.raises(RecordingError) as caught:
        read(Lines(endless(), "bomb.jsonl.gz"))
    assert caught.value.line == 2 and f"longer than {MAX_LINE}" in caught.value.what
    assert taken <= MAX_LINE // (1024 * 1024) + 1


def test_the_whole_is_refused_past_its_limit_and_blank_lines_are_counted() -> None:
    with pytest.raises(RecordingError) as caught:
        list(Lines(iter([b"a\n\n\n", b"b\n" * 10]), "f", total=10))
    assert caught.value.line == 4  # a, two blank lines, then the one being read
    many = Lines(iter([encode(HEAD) + b"\n" * 100_000 + b"{}\n"]), "f")
    with pytest.raises(RecordingError) as caught:
        read(many)
    assert caught.value.line == 100_002  # the blank lines skipped, and counted


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded CI machine
@given(
    data=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=10),
)
def test_lines_cut_anywhere_are_the_lines_of_the_whole(data: bytes, cuts: list[int]) -> None:
    bounds = [0, *sorted(c for c in cuts if c < len(data)), len(data)]
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    assert list(Lines(iter(chunks))) == [line for line in data.split(b"\n") if line]


def test_a_start_position_is_ascii_digits_and_bounded() -> None:
    assert [position(p) for p in ("0", "12", "9" * 18)] == [0, 12, 10**18 - 1]
    for bad in ("", "-1", "²", "\u0661\u0662", "1.5", " 1", "9" * 19, "9" * 5000):
        assert position(bad) is None


# --------------------------------------------------------------------------- fuzzed

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
VALID = [
    GET,
    REPLY,
    {"e": "body", "id": 1, "t": 0.5, "text": "[1,"},
    {"e": "end", "id": 1, "t": 1, "complete": True},
    CONNECT,
    {"e": "open", "id": 2, "t": 1},
    {"e": "recv", "id": 2, "t": 1, "text": '{"fixtureAction": {"fixtureSeqNum": 1}}'},
    {"e": "closed", "id": 2, "t": 2, "by": "server", "code": 1000},
]
FIELDS = sorted({k for e in VALID for k in e} | {"b64", "error"})


@st.composite
def mutated(draw: st.DrawFn) -> list[bytes]:
    """A valid recording with lines replaced, keys dropped or set to any JSON, cut short."""
    events: list[dict[str, Any] | bytes] = [dict(e) for e in VALID]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        i = draw(st.integers(min_value=0, max_value=len(events) - 1))
        how = draw(st.sampled_from(["set", "drop", "bytes", "cut", "json"]))
        event = events[i]
        if how == "bytes":
            events[i] = draw(st.binary(max_size=40)).replace(b"\n", b"")
        elif how == "json":
            events[i] = msgspec.json.encode(draw(JSON))
        elif isinstance(event, dict):
            name = draw(st.sampled_from(FIELDS))
            if how == "set":
                event[name] = draw(JSON)
            elif how == "drop":
                event.pop(name, None)
            else:
                events[i] = encode(event)[: draw(st.integers(min_value=0, max_value=30))]
    return lines(*events)


@given(recording=mutated() | st.lists(st.binary(max_size=60), max_size=6))
def test_whatever_the_lines_hold_read_raises_nothing_but_a_recording_error(
    recording: list[bytes],
) -> None:
    try:
        read(recording, "fuzz.jsonl")
    except RecordingError as exc:
        assert exc.file == "fuzz.jsonl" and exc.line >= 1 and "\n" not in str(exc)


# --------------------------------------------------------------------------- files

BOMB_MEMBER = 16 * 1024 * 1024


def bomb(path: Path, gib: int = 3) -> None:
    """A header then one line of ``gib`` GiB of ``x``: gzip members of 16 MiB each, so
    the file is made in a moment (about 16 KB a member) and inflates as one stream."""
    member = gzip.compress(b"x" * BOMB_MEMBER, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(encode(HEAD)))
        for _ in range(gib * 1024 * 1024 * 1024 // BOMB_MEMBER):
            f.write(member)


def truncated(path: Path) -> None:
    data = Path(SMALL).read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_gzip_bomb_a_cut_gzip_and_a_bad_line_refuse_the_emulator_before_it_serves(
    tmp_path: Path,
) -> None:
    bomb(path := tmp_path / "bomb.jsonl.gz", gib=1)
    assert path.stat().st_size < 2_000_000
    with pytest.raises(RecordingError) as caught:
        Emulator(replay=path)
    assert caught.value.line == 2 and "longer than" in caught.value.what
    truncated(cut := tmp_path / "cut.jsonl.gz")
    with pytest.raises(RecordingError) as caught:
        Emulator(replay=cut)
    assert "cut short" in caught.value.what and str(cut) == caught.value.file
    (plain := tmp_path / "plain.jsonl.gz").write_bytes(b"".join(lines(GET)))
    with pytest.raises(RecordingError, match="not gzip"):
        Emulator(replay=plain)
    (bad := tmp_path / "bad.jsonl").write_bytes(b"".join(lines(GET, without(REPLY, "status"))))
    with pytest.raises(RecordingError, match=r"bad\.jsonl:3: reply: status is required"):
        Emulator(replay=bad)


# --------------------------------------------------------------------------- serving


def test_a_miss_is_named_from_the_neighbours_of_its_path_or_its_host() -> None:
    keys = [f"data /basketball/fixtures/{i:05}/actions" for i in range(1000)]
    keys += [
        "data /basketball/fixtures?page=0&size=5",
        "data /basketball/fixtures?page=1&size=5",
        "live /basketball/fixtures/1/actions",
    ]
    index = Nearest(keys)
    assert index.find("data /basketball/fixtures?page=1&size=6") == keys[1001]
    assert index.find("data /basketball/fixtures/00500/statistics") == keys[500]
    assert index.find("live /basketball/fixtures/2/actions") == keys[-1]
    assert index.find("streaming /x") is None


async def test_a_bad_start_position_is_a_400_before_the_upgrade_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with Emulator(replay=SMALL) as emu, aiohttp.ClientSession() as http:
        assert emu._replay is not None
        (feed,) = emu._replay.recording.feeds
        url = emu.live_url + feed.partition(" ")[2]
        for bad in ("²", "9" * 5000, "-1", "1.5", "", "\u0661"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
                await http.ws_connect(url, params={"startPosition": bad})
            assert caught.value.status == 400, bad
        async with http.ws_connect(url, params={"startPosition": "3", "speed": "fast"}) as ws:
            await ws.send_str('{"authToken": "any"}')
            assert (await ws.receive()).type == aiohttp.WSMsgType.TEXT
    problems = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert problems == []


# --------------------------------------------------------------------------- measured

CAP = 512 * 1024 * 1024


def limited() -> None:  # in the child, before it starts: what the cap was
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


@pytest.mark.parametrize("kind", ["bomb", "cut", "line"])
def test_the_command_exits_with_its_code_and_one_line_under_a_512_mb_cap(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / f"{kind}.jsonl.gz"
    if kind == "bomb":
        bomb(path)  # 3 GiB in one line
    elif kind == "cut":
        truncated(path)
    else:
        path.write_bytes(gzip.compress(b"".join(lines(GET, {**REPLY, "headers": []}))))
    started = time.monotonic()
    done = subprocess.run(
        [*EMULATOR, "--port", "0", "--replay", str(path)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=30,
        preexec_fn=limited,
    )
    took = time.monotonic() - started
    assert done.returncode == BAD_RECORDING, done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"asyncsports-emulator: --replay: {path}:")
    assert took < 5, took
    assert dict((cls, code) for cls, code, _ in EXIT_CODES)[RecordingError] == BAD_RECORDING


def body_recording(path: Path, mib: int, piece: int = 64 * 1024) -> None:
    """One request whose body is ``mib`` MiB in pieces of 64 KiB, as the recorder writes."""
    text = "x" * piece
    with open(path, "wb") as f:
        f.write(b"".join(lines(GET, REPLY)))
        line = encode({"e": "body", "id": 1, "t": 0.5, "text": text})
        for _ in range(mib * 1024 * 1024 // piece):
            f.write(line)
        f.write(encode({"e": "end", "id": 1, "t": 1, "complete": True}))


def load_time(path: Path) -> float:
    from asyncsports.emulator._replay import load

    started = time.process_time()
    rec = load(path)
    took = time.process_time() - started
    (answers,) = rec.exchanges.values()
    assert len(answers[0].body) == path.stat().st_size // 1024 // 1024 * 1024 * 1024
    return took


@pytest.mark.slow
def test_loading_is_linear_in_the_bytes_of_a_body(tmp_path: Path) -> None:
    body_recording(small := tmp_path / "25.jsonl", 25)
    body_recording(large := tmp_path / "100.jsonl", 100)
    a, b = load_time(small), load_time(large)
    print(f"loaded 25 MiB of body pieces in {a:.2f} s, 100 MiB in {b:.2f} s (CPU)")
    # Joined once: 4 times the bytes, about 4 times the time (+= took 5.7 s and 113 s).
    assert b < 10, b
    assert b < 8 * a + 0.5, (a, b)


def connections(n: int) -> list[bytes]:
    """One feed recorded over ``n`` connections of 10 records each, each cut by the service."""
    events: list[dict[str, Any]] = []
    for c in range(n):
        query = [["startPosition", str(c * 10)]]
        events += [{**CONNECT, "id": c, "t": c, "query": query}, {"e": "open", "id": c, "t": c}]
        for i in range(10):
            text = msgspec.json.encode({"fixtureAction": {"fixtureSeqNum": i + 1}}).decode()
            events.append({"e": "recv", "id": c, "t": c + i / 10, "text": text})
        events.append({"e": "closed", "id": c, "t": c + 1, "by": "server", "code": 1006})
    return lines(*events)


@pytest.mark.slow
def test_loading_is_linear_in_the_connections_of_a_feed() -> None:
    took = []
    for n in (750, 3000):
        recording = connections(n)
        started = time.process_time()
        (feed,) = read(recording).feeds.values()
        took.append(time.process_time() - started)
        assert feed.length == n * 10 and len(feed.ends) == n
    print(f"a feed of 750 connections loaded in {took[0]:.2f} s, of 3,000 in {took[1]:.2f} s")
    # The records seen kept across connections: 3,000 took 2.2 s when gathered for each.
    assert took[1] < 8 * took[0] + 0.2, took


def many_requests(path: Path, n: int) -> None:
    """``n`` requests, each of its own path, answered 200."""
    with open(path, "wb") as f:
        f.write(encode(HEAD))
        for i in range(n):
            get = {**GET, "id": i, "path": f"/basketball/fixtures/{i:08}/actions", "query": []}
            f.write(encode(get) + encode({**REPLY, "id": i}))
            f.write(encode({"e": "end", "id": i, "t": 0, "complete": True}))


@pytest.mark.slow
async def test_a_miss_against_100000_recorded_requests_is_answered_within_50_ms(
    tmp_path: Path,
) -> None:
    path = tmp_path / "many.jsonl"
    many_requests(path, 100_000)
    async with Emulator(replay=path) as emu, aiohttp.ClientSession() as http:
        took = []
        for wanted in (
            "/basketball/fixtures/00050000/statistics",
            "/soccer/fixtures",
            "/basketball/fixtures/x/actions",
            "/basketball/fixtures/00000007/actions?a=1",
        ):
            started = time.perf_counter()
            async with http.get(emu.base_url + wanted) as response:
                said = await response.text()
            took.append(time.perf_counter() - started)
            assert response.status == 404 and "the nearest recorded: /basketball/" in said
    print(f"misses against 100,000 requests: {', '.join(f'{t * 1000:.1f} ms' for t in took)}")
    assert max(took) < 0.05, took
