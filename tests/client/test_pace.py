"""Every body is paced (issue 20, point 4): ``Timeout.min_rate`` and ``Timeout.body``.

The arithmetic (:class:`asyncsports._http.config.Pace`) with hypothesis, on times that are
binary fractions so that sums are exact; then whole bodies and listing pages dripped by a
loopback server, against the default ``Timeout``.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable
from typing import Any

import msgspec
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from support.samples import envelope, fixture
from support.stub import Serve

from asyncsports import Client, RetryPolicy, Timeout
from asyncsports._http.config import Pace
from asyncsports.errors import TimeoutError as LibraryTimeout

FID = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"
rates = st.integers(1, 10_000)
windows = st.integers(1, 64).map(lambda w: w / 4)  # 0.25 s to 16 s
gaps = st.integers(1, 256).map(lambda g: g / 64)  # 1/64 s to 4 s between pieces


@given(rate=rates, window=windows, gap=gaps, extra=st.integers(0, 100))
def test_a_body_at_min_rate_or_faster_is_never_cut(
    rate: int, window: float, gap: float, extra: int
) -> None:
    piece = math.ceil(rate * gap) + extra  # at least rate bytes a second
    pace = Pace(rate, window, 0.0)
    for k in range(1, math.ceil(3 * window / gap) + 2):  # three windows and more
        assert pace.late(piece * k, k * gap) is None


@given(piece=st.integers(1, 1000), window=windows, gap=gaps, extra=st.integers(0, 1000))
def test_a_slower_body_is_cut_by_the_first_piece_after_a_window(
    piece: int, window: float, gap: float, extra: int
) -> None:
    rate = math.floor(piece / gap) + 1 + extra  # a piece every gap is below it
    pace = Pace(rate, window, 0.0)
    k = 1
    while k * gap < window:
        assert pace.late(piece * k, k * gap) is None
        k += 1
    why = pace.late(piece * k, k * gap)
    assert why is not None
    assert k * gap < window + gap  # within a window and one gap
    assert why.startswith(f"stalled: the body gave {piece * k} bytes in ")
    assert f"below Timeout.min_rate={rate} bytes a second; {piece * k} bytes so far" in why


@given(
    rate=rates,
    window=windows,
    pieces=st.lists(st.tuples(st.integers(1, 256), st.integers(1, 5000)), max_size=200),
)
def test_a_cut_is_only_ever_a_window_that_fell_short(
    rate: int, window: float, pieces: list[tuple[int, int]]
) -> None:
    pace = Pace(rate, window, 0.0)
    now, size = 0.0, 0
    for gap, n in pieces:
        now, size = now + gap / 64, size + n
        since, mark = pace.since, pace.mark
        why = pace.late(size, now)
        if why is not None:
            # A whole window passed, and the bytes of it are fewer than the rate asks.
            assert now - since >= window
            assert size - mark < rate * (now - since)
            assert f"{size} bytes so far" in why
            return
        assert now - pace.since < window or pace.since == now  # checked, or a new window


@given(seconds=st.integers(1, 400).map(lambda s: s / 4), gap=gaps)
def test_a_whole_body_ends_within_timeout_body(seconds: float, gap: float) -> None:
    pace = Pace(None, 30.0, 100.0, seconds)  # no min_rate: only the deadline
    k = 1
    while 100.0 + k * gap <= 100.0 + seconds:
        assert pace.late(k, 100.0 + k * gap) is None
        k += 1
    why = pace.late(k, 100.0 + k * gap)
    assert (
        why == f"timed out: the body took longer than Timeout.body={seconds:g}s ({k} bytes so far)"
    )


# ------------------------------------------------------- bodies dripped over loopback


class Drip:
    """A fixture (or a listing page of one) whose name is sent at ``rate`` bytes a second,
    ten pieces a second, chunked, for ``seconds``, on the first ``drips`` requests; a
    short name at once after that."""

    def __init__(self, rate: int, seconds: float, *, listing: bool = False, drips: int = 1) -> None:
        record = fixture(0, id=FID, name="NAME")
        body = msgspec.json.encode(envelope([record], 0, 20, 1) if listing else record)
        self.head, self.tail = body.split(b"NAME")
        self.rate, self.seconds, self.drips = rate, seconds, drips
        self.served = 0
        self.cut = 0  # answers the client went away from
        self.gone = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.served += 1
        name = b"x" * int(self.rate * self.seconds) if self.served <= self.drips else b"x"
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        step = max(1, self.rate // 10)
        done = False
        try:
            await response.write(self.head)
            for i in range(0, len(name), step):
                await response.write(name[i : i + step])
                if len(name) > 1:
                    await asyncio.sleep(step / self.rate)
            await response.write(self.tail)
            await response.write_eof()
            done = True
        except ConnectionError:
            pass
        finally:
            # Reset at the next write, or cancelled: either way the client went away.
            if not done:
                self.cut += 1
                self.gone.set()
        return response


async def _timed(call: Awaitable[Any]) -> tuple[float, Any]:
    """How long ``call`` took, and its result or the library's TimeoutError."""
    start = time.monotonic()
    try:
        result = await call
    except LibraryTimeout as exc:
        return time.monotonic() - start, exc
    return time.monotonic() - start, result


@pytest.mark.slow
async def test_every_body_is_paced_with_the_default_timeout(serve: Serve) -> None:
    """One 1-byte-a-second drip on ``fixtures.get`` and one on a listing page fail within
    ``Timeout.read`` + 5 s; a body at twice min_rate for longer than a window succeeds;
    with the default retries a stalled body is asked for again. Run side by side: about
    the 30 s of one window."""
    read = Timeout().read
    assert read == 30.0
    drips = {
        "get": Drip(1, 120),
        "page": Drip(1, 120, listing=True),
        "fast": Drip(2048, read + 3),  # twice min_rate, for more than a window
        "again": Drip(1, 120, drips=1),
    }
    urls = {name: await serve(d.handle) for name, d in drips.items()}
    none = RetryPolicy(max_retries=0)
    async with (
        Client(urls["get"], token="t", retry=none) as get,
        Client(urls["page"], token="t", retry=none) as page,
        Client(urls["fast"], token="t", retry=none) as fast,
        Client(urls["again"], token="t", retry=RetryPolicy(base=0, cap=0)) as again,
    ):
        async with asyncio.timeout(3 * read):  # a guard: a hang fails here
            results = await asyncio.gather(
                _timed(get.fixtures.get("soccer", FID)),
                _timed(page.fixtures.list("soccer").collect()),
                _timed(fast.fixtures.get("soccer", FID)),
                _timed(again.fixtures.get("soccer", FID)),
            )
        for client in (get, page, fast, again):
            assert client.connections_in_use() == 0
    (t_get, e_get), (t_page, e_page), (t_fast, got), (t_again, retried) = results
    words = (
        r"stalled: the body gave \d+ bytes in 3\d\.\d s \(\d(\.\d+)? a second\), "
        r"below Timeout\.min_rate=1024 bytes a second; \d+ bytes so far"
    )
    for took, error in ((t_get, e_get), (t_page, e_page)):
        assert isinstance(error, LibraryTimeout), error
        assert read <= took < read + 5
        assert re.search(words, str(error)), str(error)
        assert error.attempts == 1
    async with asyncio.timeout(5):  # the server sees the client go at its next write
        for name in ("get", "page", "again"):
            await drips[name].gone.wait()
            assert drips[name].cut == 1
    assert not isinstance(got, BaseException), got
    assert got.name == "x" * int(2048 * (read + 3))
    assert t_fast > read  # a window passed, and was checked
    assert not isinstance(retried, BaseException), retried
    assert retried.name == "x"
    assert drips["again"].served == 2
    assert read <= t_again < read + 5
