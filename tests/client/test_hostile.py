"""Defects a hostile caller or server could exploit, each pinned by a test (issue 11, part 1)."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import AsyncIterator

import msgspec
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from support.stub import Serve

from asyncsports import Client, RetryPolicy
from asyncsports._http.request import Request, segment, target, uuid_id
from asyncsports._http.sports import sport_name

# ------------------------------------------------------- ids that would change the path

HIDDEN = ["\t", "\n", "\r", " ", "\x00", "\x7f", "\x85", "\u00a0", "\u200b", "\u2028", "\ufeff"]


@pytest.mark.parametrize("char", HIDDEN)
def test_whitespace_and_control_characters_are_refused_in_every_segment(char: str) -> None:
    for value in (f"{char}..", f"ab{char}cd", f"x{char}"):
        with pytest.raises(ValueError, match="name"):
            segment("name", value)
        with pytest.raises(ValueError, match="fixture_id"):
            uuid_id("fixture_id", value + "0" * 30)
    with pytest.raises(ValueError, match="sport"):
        sport_name(f"ice{char}hockey" if char != " " else "ice\thockey")


async def test_a_tab_in_an_id_sends_nothing(serve: Serve) -> None:
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({"data": []})

    url = await serve(handle)
    async with Client(url, token="t", retry=RetryPolicy(max_retries=0)) as c:
        for bad in ("\t..", "ab\tcd", "ab\ncd"):
            with pytest.raises(ValueError, match="tournament"):
                await c.snooker.matches(bad).collect()
            with pytest.raises(ValueError, match="fixture_id"):
                await c.statistics.get("soccer", bad)
    assert seen == []


async def test_the_wire_carries_exactly_the_id_percent_encoded(serve: Serve) -> None:
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({"data": []})

    url = await serve(handle)
    odd = "é:~!$'()*,;@+&="  # no separator, but every character the URL library may touch
    async with Client(url, token="t") as c:
        await c.snooker.matches(odd).collect()
    path = seen[0].partition("?")[0]
    assert path == "/snooker/tvfeed/matches/external/" + urllib.parse.quote(
        odd, safe="-._~!$'()*,;:@"
    )
    assert urllib.parse.unquote(path.rsplit("/", 1)[1]) == odd


@given(
    value=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#%"), min_size=1
    )
)
def test_a_segment_that_passes_is_one_segment_on_the_wire(value: str) -> None:
    try:
        text = segment("id", value)
    except ValueError:
        return
    wire = target(Request(f"/x/{text}"))
    assert wire.count("/") == 2 and urllib.parse.unquote(wire.rsplit("/", 1)[1]) == value
    assert all(c.isascii() and not c.isspace() and c.isprintable() for c in wire)


WORDS = st.text(st.sampled_from("aZ09._~-!$'()*,;:@/?&=% é\t#+"), max_size=5)
PARAMS = st.lists(st.tuples(WORDS, WORDS), max_size=3).map(tuple)


@given(path=WORDS, params=PARAMS, extra=st.tuples(WORDS, WORDS))
def test_the_target_is_every_name_and_value_quoted_whatever_is_left_unquoted(
    path: str, params: tuple[tuple[str, str], ...], extra: tuple[str, str]
) -> None:
    # Text that needs no quoting is sent as it is: the same as quoting all of it.
    def quoted(params: tuple[tuple[str, str], ...]) -> str:
        q = urllib.parse.quote
        query = "&".join(f"{q(k, safe=QUERY_SAFE)}={q(v, safe=QUERY_SAFE)}" for k, v in params)
        return q("/" + path, safe=PATH_SAFE) + (f"?{query}" if params else "")

    req = Request("/" + path, params)
    assert req.target == quoted(params)
    assert Request("/" + path, (*params, extra)).target == quoted((*params, extra))


@given(
    path=WORDS,
    params=PARAMS,
    name=st.sampled_from(["page", "page.page"]),
    number=st.integers(0, 10**9),
)
def test_a_page_request_is_the_same_as_its_params_appended(
    path: str, params: tuple[tuple[str, str], ...], name: str, number: int
) -> None:
    # Request.pages skips the quoting a page number never needs: the same request.
    req = Request("/" + path, params)
    page, slow = req.pages(name)(number), Request("/" + path, (*params, (name, str(number))))
    assert (page.target, page.params, page) == (slow.target, slow.params, slow)


PATH_SAFE = "/-._~!$'()*,;:@"
QUERY_SAFE = "-._~!$'()*,;:@/?"


# ---------------------------------------------------------------------- paging loops


@given(cycle=st.integers(2, 5), size=st.integers(1, 4))
async def test_a_server_cycling_through_pages_is_caught_before_any_repeat(
    cycle: int, size: int
) -> None:
    # Pages A, B, A, B... (or A, B, C, A...): each page full, no metadata, never "last".
    from asyncsports.paging import AsyncList, Page, PagingError, walk

    fetched: list[int] = []

    async def fetch(n: int) -> Page[int]:
        fetched.append(n)
        first = (n % cycle) * size
        return Page(list(range(first, first + size)))

    it = AsyncList(lambda start: walk(fetch, start, size=size, lookahead=0))
    seen: list[int] = []
    with pytest.raises(PagingError, match="repeats an earlier page"):
        async for x in it:
            seen.append(x)
    assert seen == list(range(cycle * size))  # every distinct page once, none twice
    assert len(fetched) == cycle + 1


async def test_a_total_that_grows_with_every_page_cannot_keep_the_walk_going() -> None:
    from asyncsports.paging import AsyncList, Page, walk

    async def fetch(n: int) -> Page[int]:
        return Page([n], n, n + 2, False)  # "there is always one more page"

    assert await AsyncList(lambda start: walk(fetch, start, size=1)).collect() == [0, 1]


# ------------------------------------------------- bodies that break the JSON decoder

DEEP = b"[" * 5000 + b"]" * 5000
BAD_UTF8 = b'{"message": "\xff\xfe"}'


@pytest.mark.parametrize("body", [DEEP, BAD_UTF8, b'{"message": ' * 3000])
async def test_an_error_body_that_cannot_be_parsed_is_still_classified_by_status(
    serve: Serve, body: bytes
) -> None:
    from asyncsports.errors import ServerError

    hits: list[int] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(1)
        status = 500 if len(hits) == 1 else 503
        return web.Response(body=body, status=status, content_type="application/json")

    url = await serve(handle)
    retry = RetryPolicy(max_retries=2, base=0, cap=0)
    async with Client(url, token="t", retry=retry) as c:
        with pytest.raises(ServerError) as info:
            await c.fixtures.get("soccer", "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11")
    assert len(hits) == 3 and info.value.status == 503 and info.value.attempts == 3


@pytest.mark.parametrize("body", [DEEP, b'[{"id": "\xff"}]'])
async def test_a_good_status_with_an_undecodable_body_is_a_decode_error(
    serve: Serve, body: bytes
) -> None:
    from asyncsports.errors import DecodeError

    async def handle(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    url = await serve(handle)
    async with Client(url, token="t") as c:
        for call in (
            lambda: c.fixtures.get("soccer", "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"),
            lambda: c.actions.list("soccer", "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11").collect(),
        ):
            with pytest.raises(DecodeError) as info:
                await call()
            assert info.value.status == 200 and info.value.url.startswith(url)


# ------------------------------------------------------------ what a stream may hold


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


@pytest.mark.parametrize(
    ("key", "parts"),
    [
        (None, [b'[{"a":1},{"b":"', *(b"x" * 65536 for _ in range(40)), b'"}]']),
        ("data", [b'{"x":"', *(b"y" * 65536 for _ in range(40)), b'","data":[1]}']),
        ("data", [b'{"data":{"one":"', *(b"z" * 65536 for _ in range(40)), b'"}}']),
    ],
)
async def test_one_huge_element_or_envelope_is_refused(key: str | None, parts: list[bytes]) -> None:
    from asyncsports.errors import BodyTooLargeError
    from asyncsports.jsonstream import decode_array

    dec = msgspec.json.Decoder(list[msgspec.Raw])
    with pytest.raises(BodyTooLargeError, match="max_element_size=1048576") as info:
        async for _ in decode_array(_chunks(parts), dec, key=key, max_element=1 << 20):
            pass
    assert info.value.limit == 1 << 20


async def test_any_number_of_small_elements_still_passes() -> None:
    from asyncsports.jsonstream import decode_array

    dec = msgspec.json.Decoder(list[msgspec.Raw])
    parts = [b"[", *(b'{"a":1},' * 10_000 for _ in range(100)), b'{"a":1}]']
    n = 0
    async for batch in decode_array(_chunks(parts), dec, max_element=1024):
        n += len(batch)
    assert n == 1_000_001


# ------------------------------------------------------- session: bombs, drips, secrets

FID = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("length", [True, False])
async def test_a_decompression_bomb_is_refused_by_its_inflated_size(
    serve: Serve, encoding: str, length: bool
) -> None:
    import gzip
    import zlib

    from asyncsports.errors import BodyTooLargeError

    inflated = b'{"pad": "' + b"0" * (8 << 20) + b'"}'  # 8 MiB of zeros: ~8 KiB compressed
    packed = gzip.compress(inflated) if encoding == "gzip" else zlib.compress(inflated)
    assert len(packed) < 64 << 10

    async def handle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Encoding": encoding})
        if length:
            response.content_length = len(packed)
        await response.prepare(request)
        await response.write(packed)
        await response.write_eof()
        return response

    url = await serve(handle)
    async with Client(url, token="t", max_body_size=1 << 20) as c:
        with pytest.raises(BodyTooLargeError, match="decoded"):
            await c.fixtures.get("soccer", FID)
        assert c.requests_sent == 1  # refused, not retried
        assert c.connections_in_use() == 0


async def test_a_stream_that_drips_is_stalled_and_resumed(serve: Serve) -> None:
    from support.samples import action

    from asyncsports import Timeout

    body = msgspec.json.encode([action(i) for i in range(4)])
    calls: list[int] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        calls.append(1)
        response = web.StreamResponse()
        await response.prepare(request)
        if len(calls) == 1:  # the first answer drips a byte at a time
            for i in range(len(body)):
                await response.write(body[i : i + 1])
                await asyncio.sleep(0.01)
        else:
            await response.write(body)
        await response.write_eof()
        return response

    url = await serve(handle)
    timeout = Timeout(read=0.2, min_rate=1000)  # 200 bytes per 0.2 s window at least
    retry = RetryPolicy(base=0, cap=0)
    async with Client(url, token="t", timeout=timeout, retry=retry) as c:
        actions = await c.actions.list("soccer", FID).collect()
    assert [a.fixture_action.fixture_seq_num for a in actions] == [0, 1, 2, 3]
    assert len(calls) == 2


@pytest.mark.parametrize("read", [5.0, None], ids=["checked-per-piece", "no-read-timeout"])
async def test_a_whole_body_that_drips_is_bounded_by_timeout_body(
    serve: Serve, read: float | None
) -> None:
    from asyncsports import Timeout
    from asyncsports.errors import TimeoutError as LibraryTimeout

    async def handle(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_length = 1000
        await response.prepare(request)
        for _ in range(1000):  # each byte well within the read timeout
            await response.write(b" ")
            await asyncio.sleep(0.02)
        return response

    url = await serve(handle)
    # Without a read timeout, aiohttp's total timer bounds the body instead of the check.
    timeout = Timeout(read=read, body=0.3)
    words = r"Timeout\.body=0\.3s" if read else "timed out"
    async with Client(url, token="t", timeout=timeout, max_retries=0) as c:
        async with asyncio.timeout(10):  # a guard: a hang fails here
            with pytest.raises(LibraryTimeout, match=words):
                await c.fixtures.get("soccer", FID)


async def test_no_secret_in_an_error_its_causes_or_its_repr(serve: Serve) -> None:
    from asyncsports import StreamingCredentials
    from asyncsports.errors import TransportError

    async def handle(request: web.Request) -> web.StreamResponse:
        # Content-Encoding aiohttp cannot decode: its exception holds the request headers.
        return web.Response(body=b"xx", headers={"Content-Encoding": "br"})

    url = await serve(handle)
    creds = StreamingCredentials(1, "stream-SECRET", 5)
    async with Client(
        url, token="token-SECRET", streaming_url=url, streaming_credentials=creds
    ) as c:
        for call in (
            lambda: c.fixtures.get("soccer", FID),
            lambda: c.events.list().collect(),
        ):
            with pytest.raises(TransportError) as info:
                await call()
            assert info.value.attempts == 1  # an answer it cannot read is not retried
            chain: list[BaseException] = []
            e: BaseException | None = info.value
            while e is not None and e not in chain:
                chain.append(e)
                e = e.__cause__ or e.__context__
            text = "".join(f"{x}{x!r}{vars(x)!r}" for x in chain)
            assert "SECRET" not in text


async def test_a_closed_pooled_connection_is_sent_again_and_counted(serve: Serve) -> None:
    from support.samples import fixture

    body = msgspec.json.encode(fixture())
    sent: list[int] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        sent.append(1)
        response = web.Response(body=body, content_type="application/json")
        # Keep-alive promised, then the server closes right after the answer: the
        # client's next request meets a pooled connection that is already gone.
        await response.prepare(request)
        await response.write_eof()
        assert request.transport is not None
        request.transport.close()
        return response

    url = await serve(handle)
    seen: list[object] = []
    async with Client(url, token="t", on_request=seen.append) as c:
        for _ in range(5):
            await c.fixtures.get("soccer", FID)
        assert c.requests_sent == len(seen) >= len(sent) == 5
