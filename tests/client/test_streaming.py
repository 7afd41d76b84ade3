"""Streamed listings over loopback: element-by-element decode, mid-body breaks, resume."""

from __future__ import annotations

import tracemalloc

import msgspec
import pytest
from aiohttp import web
from support.samples import FIXTURE_ID, MATCH, action
from support.stub import Serve

from asyncsports import Client, RetryPolicy
from asyncsports.errors import DecodeError, TransportError

PATH = f"/american-football/fixtures/{FIXTURE_ID}/actions"


def actions_body(n: int) -> bytes:
    return msgspec.json.encode([action(i) for i in range(n)])


class Breaking:
    """Serves ``body`` in 16 KiB pieces; the first ``breaks`` responses stop after ``cut`` bytes."""

    def __init__(self, body: bytes, *, breaks: int = 0, cut: int = 0) -> None:
        self.body = body
        self.breaks = breaks
        self.cut = cut
        self.served = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.served += 1
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.content_length = len(self.body)
        await resp.prepare(request)
        end = self.cut if self.served <= self.breaks else len(self.body)
        for i in range(0, end, 16384):
            await resp.write(self.body[i : min(end, i + 16384)])
        if end < len(self.body):
            assert request.transport is not None
            request.transport.close()  # a reset mid-body
            return resp
        await resp.write_eof()
        return resp


@pytest.fixture
async def breaking(serve: Serve) -> tuple[Breaking, str]:
    handler = Breaking(actions_body(3000), breaks=2, cut=300_000)
    return handler, await serve(handler.handle)


async def test_a_body_broken_midway_is_resumed_with_nothing_lost_or_repeated(
    breaking: tuple[Breaking, str],
) -> None:
    handler, url = breaking
    async with Client(url, token="t", retry=RetryPolicy(base=0, cap=0)) as c:
        seqs = [
            a.fixture_action.fixture_seq_num
            async for a in c.actions.list("american-football", FIXTURE_ID)
        ]
        assert c.retries == 2
    assert seqs == list(range(3000))
    assert handler.served == 3


async def test_out_of_retries_a_broken_body_raises_and_the_token_resumes(
    breaking: tuple[Breaking, str],
) -> None:
    _, url = breaking
    async with Client(url, token="t", retry=RetryPolicy(max_retries=1, base=0, cap=0)) as c:
        it = c.actions.list("american-football", FIXTURE_ID)
        seen = []
        with pytest.raises(TransportError, match="broke off"):
            async for a in it:
                seen.append(a.fixture_action.fixture_seq_num)
        assert 0 < len(seen) < 3000
        rest = [
            a.fixture_action.fixture_seq_num
            async for a in c.actions.list("american-football", FIXTURE_ID, resume=it.resume_token)
        ]
    assert seen + rest == list(range(3000))


async def test_resume_token_of_a_stream_counts_elements(breaking: tuple[Breaking, str]) -> None:
    handler, url = breaking
    handler.breaks = 0
    async with Client(url, token="t") as c:
        it = c.actions.list("american-football", FIXTURE_ID)
        async with it:
            async for a in it:
                if a.fixture_action.fixture_seq_num == 1233:
                    break
        token = it.resume_token
        assert (token.page, token.index) == (0, 1234) and token.listing
        assert str(token) == f"0:1234:{token.listing}"
        rest = await c.actions.list("american-football", FIXTURE_ID, resume=str(token)).collect()
        # A token without a fingerprint (the older text form) is still taken.
        old = await c.actions.list("american-football", FIXTURE_ID, resume="0:1234").collect()
    assert [a.fixture_action.fixture_seq_num for a in rest] == list(range(1234, 3000))
    assert old == rest


async def test_a_malformed_element_names_its_index_and_bytes(serve: Serve) -> None:
    body = actions_body(50).replace(b'"fixtureSeqNum":37', b'"fixtureSeqNum":"x"')
    async with Client(await serve(Breaking(body).handle), token="t") as c:
        got = []
        with pytest.raises(DecodeError) as info:
            async for a in c.actions.list("american-football", FIXTURE_ID):
                got.append(a)
    assert info.value.path == "$[37].fixtureAction.fixtureSeqNum"
    assert "Action" in str(info.value)
    assert len(got) <= 37


async def test_snooker_data_array_is_streamed(serve: Serve) -> None:
    body = msgspec.json.encode({"data": [dict(MATCH, matchId=i) for i in range(500)]})
    url = await serve(Breaking(body, breaks=1, cut=len(body) // 2).handle)
    async with Client(url, token="t", retry=RetryPolicy(base=0)) as c:
        ids = [m.match_id async for m in c.snooker.matches(7)]
    assert ids == list(range(500))


async def test_streaming_keeps_memory_bounded(serve: Serve) -> None:
    n = 20_000  # about 16 MB of JSON
    body = actions_body(n)
    async with Client(await serve(Breaking(body).handle), token="t") as c:
        tracemalloc.start()
        count = 0
        async for _ in c.actions.list("american-football", FIXTURE_ID):
            count += 1
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert count == n
    # The whole body decoded at once would take several times the body's size.
    assert peak < len(body) / 4, (peak, len(body))
