"""A replayed feed looks like the service recorded (issue 29): at any ``startPosition`` it
numbers its packets as the recording shows, and it ends a connection where the recorded
service ended one, and nowhere else."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from support.samples import FIXTURE_ID, action

from asyncsports._wire.recording.format import encode
from asyncsports.emulator import Emulator

SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 8,
    "actions_per_fixture": 30,
}
ABOUT_RECONNECTS = re.compile(r"gap|reconnect|retry|retrying", re.I)


def bare(records: list[Any]) -> list[Any]:
    """Action records without fixtureSeqNum (it counts a connection's packets)."""
    return [
        msgspec.structs.replace(
            r, fixture_action=msgspec.structs.replace(r.fixture_action, fixture_seq_num=0)
        )
        for r in records
    ]


def seqs(records: list[Any]) -> list[int]:
    return [r.fixture_action.fixture_seq_num for r in records]


def about_reconnects(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("asyncsports") and ABOUT_RECONNECTS.search(r.getMessage())
    ]


async def record(
    path: Path, *, fault: str | None = None, starts: tuple[int, ...] = (0,), **options: Any
) -> tuple[Any, list[Any]]:
    """Record a completed basketball fixture's actions feed from the emulator: the
    fixture's id and the records of a feed from 0 (then feeds from ``starts[1:]``)."""
    fast = "fast"  # the fixture is over: all at once, not at its recorded pace
    async with Emulator(**SCALE, **options) as emu, emu.client(record=path) as client:
        fid = (await client.fixtures.list("basketball", status="completed").collect())[0].id
        if fault is not None:
            emu.faults.live(fault, after=10)
        feeds = [
            [r async for r in client.live.actions("basketball", fid, start_position=s, replay=fast)]
            for s in starts
        ]
    return fid, feeds[0]


async def test_a_replay_resumes_at_any_start_position_on_one_connection_and_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "feed.jsonl.gz"
    fid, live = await record(path)  # the emulator numbers from 1 on each connection
    assert live[-1].finished and len(live) > 51
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with Emulator(replay=path) as emu, emu.client() as client:
        for start in (0, 1, 50, len(live) - 1):
            feed = client.live.actions("basketball", fid, start_position=start)
            async with feed:
                got = [r async for r in feed]
            assert bare(got) == bare(live[start:]), start
            assert seqs(got) == list(range(1, len(got) + 1)), start  # as recorded: from 1
            assert feed.connections == 1, start
        assert emu.requests["live.actions"] == 4
    assert about_reconnects(caplog) == []


async def test_a_replay_keeps_a_continuing_servers_numbering(tmp_path: Path) -> None:
    # The recorded service goes on numbering (seq startPosition + 1 at startPosition): the
    # connection at 5 shows it, so the replay numbers so at any position.
    path = tmp_path / "continue.jsonl"
    fid, live = await record(path, starts=(0, 5), live_seq="fixture")
    async with Emulator(replay=path) as emu, emu.client() as client:
        for start in (0, 50):
            got = [r async for r in client.live.actions("basketball", fid, start_position=start)]
            assert bare(got) == bare(live[start:])
            assert seqs(got) == list(range(start + 1, len(live) + 1))


@pytest.mark.parametrize(
    ("fault", "connections"),
    [("drop", 2), ("close_clean", 2), ("close", 1)],  # close: 1011 before any record,
    # not replayed: every connection at that position would end at once
)
async def test_a_replay_ends_a_connection_where_the_recorded_service_did(
    tmp_path: Path, fault: str, connections: int
) -> None:
    path = tmp_path / f"{fault}.jsonl"
    fid, live = await record(path, fault=fault)  # ends the first connection (at 10)
    async with Emulator(replay=path) as emu, emu.client() as client:
        for start, expected in ((0, connections), (1, connections), (20, 1)):
            feed = client.live.actions("basketball", fid, start_position=start)
            async with feed:
                got = [r async for r in feed]
            assert bare(got) == bare(live[start:]), start
            assert feed.connections == expected, start


def hand_recorded(path: Path, ends: list[dict[str, Any]], *, finished: bool = True) -> None:
    """Two connections of a 6-record feed, numbered from 1 each: records 0-2 on the
    first (ended by ``ends[0]``), 3-5 on the second at startPosition 3 (``ends[1]``)."""
    feed = {"host": "live", "path": f"/american-football/fixtures/{FIXTURE_ID}/actions"}
    records = [action(i + 1) for i in range(6)]
    records[-1]["finished"] = finished
    lines: list[dict[str, Any]] = [{"format": "asyncsports-recording", "version": 1}]
    t = 0.0
    for ident, start in ((1, 0), (2, 3)):
        query = [["startPosition", str(start)]]
        lines += [
            {"e": "connect", "id": ident, "t": t, **feed, "query": query},
            {"e": "open", "id": ident, "t": t},
        ]
        for n, r in enumerate(records[start : start + 3], 1):
            r["fixtureAction"]["fixtureSeqNum"] = n
            t += 0.001
            lines.append(
                {"e": "recv", "id": ident, "t": t, "text": msgspec.json.encode(r).decode()}
            )
        lines.append({"e": "closed", "id": ident, "t": t, **ends[ident - 1]})
    path.write_bytes(b"".join(encode(line) for line in lines))


@pytest.mark.parametrize(
    ("first_end", "connections"),
    [
        ({"by": "client", "code": 1001}, 1),  # the client gave up (a stall, a gap)
        ({"by": "server", "code": 1011}, 2),
        ({"by": "server", "code": 1006}, 2),  # dropped without a close frame
        ({"by": "lost", "code": None, "error": "ConnectionResetError"}, 2),
    ],
)
async def test_a_replay_reconnects_only_where_the_recorded_service_ended_a_connection(
    tmp_path: Path, first_end: dict[str, Any], connections: int
) -> None:
    path = tmp_path / "ends.jsonl"
    hand_recorded(path, [first_end, {"by": "client", "code": 1000}])
    async with Emulator(replay=path) as emu, emu.client() as client:
        feed = client.live.actions("american-football", FIXTURE_ID)
        async with feed:
            got = [r async for r in feed]
    assert [int(str(r.fixture_action.action_id)[-12:]) for r in got] == [1, 2, 3, 4, 5, 6]
    expected = [1, 2, 3, 1, 2, 3] if connections == 2 else [1, 2, 3, 4, 5, 6]
    assert seqs(got) == expected  # as the replayed connections number them
    assert feed.connections == connections


async def test_a_recording_that_stopped_while_its_feed_was_open_is_left_open(
    tmp_path: Path,
) -> None:
    # No finishing record, no end by the service: the recording client left. The replay
    # sends what was recorded and does not pretend the service closed: the client hears
    # nothing more and stalls (it once got a close 1000, and reconnected).
    path = tmp_path / "cut.jsonl"
    client_ends = {"by": "client", "code": 1000}
    hand_recorded(path, [client_ends, client_ends], finished=False)
    async with Emulator(replay=path) as emu, emu.client(max_retries=0) as client:
        feed = client.live.actions("american-football", FIXTURE_ID, idle_timeout=0.3)
        got = []
        with pytest.raises(TimeoutError, match="stalled"):
            async with feed:
                async for record in feed:
                    got.append(record)
    assert seqs(got) == [1, 2, 3, 4, 5, 6] and feed.connections == 1
