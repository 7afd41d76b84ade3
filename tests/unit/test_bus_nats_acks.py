"""The JetStream publisher's ack counting (:class:`asyncsports.bus._nats.Acks`):
pure, over acks as nats-server writes them (2.9: ``"duplicate": true`` with a space)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from asyncsports.bus._nats import Acks


@dataclass
class Msg:
    subject: str
    data: bytes
    headers: dict[str, str] | None = None


def ack(kind: str, seq: int) -> bytes:
    if kind == "stored":
        return b'{"stream":"S", "seq":%d}' % seq
    if kind == "dup":
        return b'{"stream":"S", "seq":%d,"duplicate": true}' % seq
    if kind == "dup-tight":
        return b'{"stream":"S","seq":%d,"duplicate":true}' % seq
    error = {"code": 400, "err_code": 10071, "description": "wrong last sequence: 3"}
    return json.dumps({"error": error, "stream": "S", "seq": 0}).encode()


@given(st.lists(st.sampled_from(["stored", "dup", "dup-tight", "error"]), min_size=1, max_size=30))
def test_acks_count_duplicates_refusals_and_the_last_seq(kinds: list[str]) -> None:
    async def run() -> Acks:
        acks = Acks()
        acks.expect(99, "old")
        reply = acks.expect(len(kinds), "in")
        await acks.take(Msg("in.1", ack("stored", 1)))  # an older batch's: not counted
        for n, kind in enumerate(kinds, start=1):
            assert not acks.done.is_set()
            await acks.take(Msg(reply, ack(kind, 100 + n)))
        return acks

    acks = asyncio.run(run())
    assert acks.done.is_set()
    assert acks.duplicates == sum(k.startswith("dup") for k in kinds)
    assert acks.refused == [i for i, k in enumerate(kinds) if k == "error"]
    if "error" in kinds:
        assert acks.error == (kinds.index("error"), 400, 10071, "wrong last sequence: 3")
    else:
        assert acks.error is None and acks.last == 100 + len(kinds)


def test_a_status_without_a_body_is_jetstream_away() -> None:
    async def run() -> Acks:
        acks = Acks()
        reply = acks.expect(5, "in")
        await acks.take(Msg(reply, b"", {"Status": "503"}))
        return acks

    acks = asyncio.run(run())
    assert acks.done.is_set() and acks.away == "no responders (status 503)"
