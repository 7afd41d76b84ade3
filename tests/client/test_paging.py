"""Paging arithmetic and the AsyncList contract, without a socket."""

import asyncio
import gc
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncsports.paging import AsyncList, Batch, Page, PagingError, ResumeToken, walk


def pager(
    total: int,
    size: int,
    *,
    meta: str = "last",
    lookahead: int = 0,
    concurrency: int = 1,
    resume: str | None = None,
) -> tuple[AsyncList[int], list[int]]:
    """A listing of ``range(total)`` in pages of ``size``; ``calls`` records pages fetched."""
    calls: list[int] = []

    async def fetch(n: int) -> Page[int]:
        calls.append(n)
        items = list(range(n * size, min(total, (n + 1) * size)))
        pages = max(1, -(-total // size))
        if meta == "last":
            return Page(items, n, pages, n + 1 >= pages)
        if meta == "total":
            return Page(items, n, pages)
        return Page(items)

    def source(start: ResumeToken) -> AsyncIterator[Batch[int]]:
        return walk(fetch, start, size=size, lookahead=lookahead, concurrency=concurrency)

    return AsyncList(source, resume), calls


@settings(max_examples=60, deadline=None)
@given(
    total=st.integers(0, 60),
    size=st.integers(1, 9),
    meta=st.sampled_from(["last", "total", "none"]),
)
async def test_walk_yields_everything_once_and_stops(total: int, size: int, meta: str) -> None:
    it, calls = pager(total, size, meta=meta)
    assert await it.collect() == list(range(total))
    pages = max(1, -(-total // size))
    # Without metadata a full last page needs one more (empty) request to be sure.
    extra = 1 if meta == "none" and total and total % size == 0 else 0
    assert calls == list(range(pages + extra))


@settings(max_examples=60, deadline=None)
@given(total=st.integers(0, 50), size=st.integers(1, 7), cut=st.integers(0, 60))
async def test_resume_from_any_point_has_no_gap_and_no_duplicate(
    total: int, size: int, cut: int
) -> None:
    first, _ = pager(total, size)
    seen = []
    async for x in first:
        seen.append(x)
        if len(seen) >= cut:
            break
    token = str(first.resume_token)
    second, calls = pager(total, size, resume=token)
    rest = await second.collect()
    assert seen + rest == list(range(total))
    if rest:
        # Only the page holding the next record is fetched again, never an earlier one.
        parsed = ResumeToken.parse(token)
        assert calls[0] == parsed.page + parsed.index // size


async def test_nothing_is_fetched_until_iterated() -> None:
    it, calls = pager(10, 3)
    assert calls == []
    assert await anext(it) == 0
    assert calls == [0]


async def test_pages_yields_what_is_left_of_the_current_page_first() -> None:
    it, _ = pager(7, 3)
    assert await anext(it) == 0
    assert [list(p) async for p in it.pages()] == [[1, 2], [3, 4, 5], [6]]
    assert it.resume_token == ResumeToken(2, 1)


async def test_a_repeated_page_ends_the_walk_with_an_error() -> None:
    async def fetch(n: int) -> Page[int]:
        return Page([1, 2, 3], None, None, None)

    it = AsyncList(lambda start: walk(fetch, start, size=3))
    with pytest.raises(PagingError, match="repeats"):
        await it.collect()


async def test_a_page_numbered_other_than_asked_is_an_error() -> None:
    async def fetch(n: int) -> Page[int]:
        return Page([n], 0, 5, False)

    it = AsyncList(lambda start: walk(fetch, start, size=1))
    assert await anext(it) == 0
    with pytest.raises(PagingError, match="asked for page 1"):
        await anext(it)


@settings(max_examples=40, deadline=None)
@given(total=st.integers(0, 40), size=st.integers(1, 6), cut=st.integers(0, 45))
async def test_a_whole_body_resumes_by_count(total: int, size: int, cut: int) -> None:
    async def fetch(n: int) -> Page[int]:
        return Page(list(range(total)), whole=True)

    it = AsyncList(lambda start: walk(fetch, start, size=size))
    seen = [x async for x, _ in zip_count(it, cut)]
    rest = await AsyncList(lambda start: walk(fetch, start, size=size), it.resume_token).collect()
    assert seen + rest == list(range(total))


async def zip_count(it: AsyncList[int], n: int) -> AsyncIterator[tuple[int, int]]:
    if n == 0:
        return
    i = 0
    async for x in it:
        yield x, i
        i += 1
        if i >= n:
            return


async def test_a_failing_source_can_be_resumed_where_it_stopped() -> None:
    state = {"fail": True}

    async def source(start: ResumeToken) -> AsyncIterator[Batch[int]]:
        yield Batch(0, start.index, list(range(start.index, 5)))
        if state["fail"]:
            state["fail"] = False
            raise ConnectionError("boom")
        yield Batch(1, 0, [5, 6])

    it = AsyncList(source)
    seen = []
    with pytest.raises(ConnectionError):
        async for x in it:
            seen.append(x)
    seen += await it.collect()  # the same list carries on from its token
    assert seen == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "bad", ["x", "1:y", "-1:0", "", "1:2:", "1:2:XYZ", "1:2:ab:cd", " 1:2", "²:1"]
)
def test_bad_resume_tokens_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="resume"):
        ResumeToken.parse(bad)
    assert ResumeToken.parse("3") == ResumeToken(3, 0)


LISTINGS = st.none() | st.text("0123456789abcdef", min_size=1, max_size=64)


@given(page=st.integers(0, 10**12), index=st.integers(0, 10**12), listing=LISTINGS)
def test_resume_token_text_round_trips(page: int, index: int, listing: str | None) -> None:
    token = ResumeToken(page, index, listing)
    text = str(token)
    assert ResumeToken.parse(text) == token
    assert text == (f"{page}:{index}" if listing is None else f"{page}:{index}:{listing}")


@given(page=st.integers(0, 10**6), index=st.integers(0, 10**6), listing=LISTINGS)
def test_a_token_without_fingerprint_fits_any_listing(
    page: int, index: int, listing: str | None
) -> None:
    here = listing or "0a"
    old = ResumeToken.parse(f"{page}:{index}")  # the text form of backfill checkpoints
    assert old.listing is None
    assert ResumeToken.bind(old, here) == ResumeToken(page, index, here)
    assert ResumeToken.bind(None, here) == ResumeToken(0, 0, here)


@given(
    token=st.builds(ResumeToken, st.integers(0, 99), st.integers(0, 99), LISTINGS),
    here=st.text("0123456789abcdef", min_size=1, max_size=8),
)
def test_a_token_of_another_listing_is_refused(token: ResumeToken, here: str) -> None:
    if token.listing is None or token.listing == here:
        assert ResumeToken.bind(str(token), here).listing == here
    else:
        with pytest.raises(ValueError, match="belongs to another listing"):
            ResumeToken.bind(str(token), here)


async def test_a_list_hands_out_tokens_of_its_own_listing() -> None:
    async def fetch(n: int) -> Page[int]:
        return Page([n * 2, n * 2 + 1], n, 3, n == 2)

    it = AsyncList.paged(fetch, 2, listing="beef")
    assert await anext(it) == 0
    assert str(it.resume_token) == "0:1:beef"
    assert await AsyncList.paged(fetch, 2, "0:1:beef", listing="beef").collect() == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="another listing"):
        AsyncList.paged(fetch, 2, it.resume_token, listing="cafe")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": 65}, "concurrency"),
        ({"lookahead": -1}, "lookahead"),
        ({"size": 0}, "size"),
    ],
)
def test_paged_checks_its_arguments_before_anything_is_fetched(
    kwargs: dict[str, int], name: str
) -> None:
    calls: list[int] = []

    async def fetch(n: int) -> Page[int]:
        calls.append(n)
        return Page([])

    args: dict[str, Any] = {"size": 5, **kwargs}
    with pytest.raises(ValueError, match=name):
        AsyncList.paged(fetch, args.pop("size"), **args)
    assert calls == []


async def test_awaiting_a_list_says_how_to_use_it() -> None:
    it, calls = pager(3, 2)
    with pytest.raises(TypeError, match=r"async for.*collect\(\)"):
        await it
    assert calls == []


def slow_pager(
    total_pages: int, *, delay: float = 0.01, lookahead: int = 1, concurrency: int = 1
) -> tuple[AsyncList[int], dict[str, Any]]:
    """Pages of one record each that take ``delay`` to arrive; tracks what is in flight."""
    state: dict[str, Any] = {"now": 0, "peak": 0, "started": [], "cancelled": 0}

    async def fetch(n: int) -> Page[int]:
        state["started"].append(n)
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        try:
            await asyncio.sleep(delay * (1 + (n % 3)))  # out-of-order arrival
        except asyncio.CancelledError:
            state["cancelled"] += 1
            raise
        finally:
            state["now"] -= 1
        return Page([n], n, total_pages, n + 1 >= total_pages)

    def source(start: ResumeToken) -> AsyncIterator[Batch[int]]:
        return walk(fetch, start, size=1, lookahead=lookahead, concurrency=concurrency)

    return AsyncList(source), state


async def test_the_next_page_is_on_its_way_while_the_caller_works() -> None:
    it, state = slow_pager(5)
    assert await anext(it) == 0
    await asyncio.sleep(0)
    assert state["started"] == [0, 1]  # page 1 requested before the caller asked
    assert await it.collect() == [1, 2, 3, 4]


@pytest.mark.parametrize(("work", "ahead"), [(0.0, False), (3.0, True)])
async def test_pages_are_fetched_ahead_only_while_the_caller_works_long_enough(
    work: float, ahead: bool
) -> None:
    # Pages take 2 ticks of the walk's clock to come. A caller that works 3 ticks a page
    # has the next one fetched meanwhile, by another task; one that works not at all
    # fetches each in its own task (a hand-over between tasks would save it no time).
    me = asyncio.current_task()
    fetched_by: dict[int, bool] = {}
    now = 0.0

    async def fetch(n: int) -> Page[int]:
        nonlocal now
        fetched_by[n] = asyncio.current_task() is me
        await asyncio.sleep(0)
        now += 2
        return Page([n], n, 8, n + 1 >= 8)

    it = AsyncList(lambda start: walk(fetch, start, size=1, lookahead=1, clock=lambda: now))
    async for _ in it:
        now += work
    assert sorted(fetched_by) == list(range(8))
    assert fetched_by[1] is False  # before the caller's pace is known: ahead
    later = [fetched_by[n] for n in range(3, 8)]
    assert later == [not ahead] * 5


@pytest.mark.parametrize("k", [1, 2, 4])
async def test_concurrency_bounds_pages_in_flight_and_keeps_order(k: int) -> None:
    it, state = slow_pager(12, concurrency=k)
    assert await it.collect() == list(range(12))
    assert state["peak"] == k
    assert sorted(state["started"]) == list(range(12))  # each page once


async def no_other_tasks() -> bool:
    for _ in range(3):
        await asyncio.sleep(0)
    return asyncio.all_tasks() == {asyncio.current_task()}


async def test_break_inside_async_with_cancels_requests_in_flight() -> None:
    it, state = slow_pager(50, concurrency=4)
    async with it:
        async for x in it:
            if x == 2:
                break
    assert state["now"] == 0 and state["cancelled"] >= 1
    assert await no_other_tasks()


async def test_an_exception_in_the_loop_leaves_nothing_running() -> None:
    it, state = slow_pager(50, concurrency=4)
    with pytest.raises(KeyError):
        async with it:
            async for x in it:
                if x == 1:
                    raise KeyError(x)
    assert state["now"] == 0
    assert await no_other_tasks()


async def test_a_dropped_list_is_finalised_by_the_loop() -> None:
    it, state = slow_pager(50, concurrency=4)
    async for x in it:
        if x == 1:
            break
    del it
    gc.collect()
    for _ in range(5):
        await asyncio.sleep(0)
    assert state["now"] == 0
    assert await no_other_tasks()


async def test_cancelling_the_consumer_cancels_the_walk() -> None:
    it, state = slow_pager(50, delay=0.05, concurrency=4)

    started = asyncio.Event()

    async def consume() -> None:
        async for _ in it:
            started.set()

    task = asyncio.ensure_future(consume())
    await started.wait()  # the walk is under way, pages in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert state["now"] == 0
    assert await no_other_tasks()


async def test_an_empty_page_marked_not_last_still_ends_the_walk() -> None:
    calls: list[int] = []

    async def fetch(n: int) -> Page[int]:
        calls.append(n)
        return Page([], n, None, False)

    it = AsyncList(lambda start: walk(fetch, start, size=5))
    assert await it.collect() == []
    assert calls == [0]


async def test_a_known_total_ends_the_walk_whatever_last_says() -> None:
    async def fetch(n: int) -> Page[int]:
        return Page([n], n, 3, False)

    it = AsyncList(lambda start: walk(fetch, start, size=1, concurrency=4))
    assert await it.collect() == [0, 1, 2]


async def test_one_task_fetches_ahead_while_the_caller_keeps_up() -> None:
    # A task per page fetched ahead would be 49 tasks; one task takes page after page.
    # The walk's clock is the test's: each page takes a tick to come and the caller a
    # tick to use it, so fetching ahead pays on every page whatever the machine's load
    # (on the real clock a caller descheduled for a moment turned it off and on again).
    loop = asyncio.get_running_loop()
    created = 0
    create_task = loop.create_task
    now = 0.0
    started: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal created
        created += 1
        return create_task(*args, **kwargs)

    async def fetch(n: int) -> Page[int]:
        nonlocal now
        started.append(n)
        await asyncio.sleep(0)
        now += 1
        return Page([n], n, 50, n + 1 >= 50)

    it = AsyncList(lambda start: walk(fetch, start, size=1, clock=lambda: now))
    got = []
    loop.create_task = counting  # type: ignore[method-assign]
    try:
        async for n in it:
            got.append(n)
            now += 1
    finally:
        del loop.create_task
    assert got == list(range(50))
    assert created == 1
    assert sorted(started) == list(range(50))


async def test_a_page_not_fetched_ahead_is_fetched_in_the_callers_task() -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def fetch(n: int) -> Page[int]:
        tasks.append(asyncio.current_task())
        return Page([n], n, None, n == 4)

    it = AsyncList(lambda start: walk(fetch, start, size=1, lookahead=0))
    assert await it.collect() == [0, 1, 2, 3, 4]
    assert tasks == [asyncio.current_task()] * 5


async def test_a_loop_left_early_is_resumed_by_the_next_one_and_closed_by_aclose() -> None:
    it, _ = pager(9, 3)
    async for x in it:
        if x == 4:
            break
    assert it.resume_token == ResumeToken(1, 2)
    assert [x async for x in it] == [5, 6, 7, 8]
    it2, calls2 = pager(9, 3)
    async for _ in it2:
        break
    await it2.aclose()
    # What was fetched is still handed out; nothing more is fetched.
    assert [x async for x in it2] == [1, 2]
    assert calls2 == [0]
    assert await no_other_tasks()


class Inner(msgspec.Struct):
    tags: list[str]


class Rec(msgspec.Struct):
    id: int
    name: str | None
    inner: Inner


async def test_records_that_are_structs_repeat_by_their_scalar_fields() -> None:
    def page_of(n: int) -> list[Rec]:
        return [Rec(n % 2, f"r{n % 2}", Inner([str(n)])), Rec(99, None, Inner([]))]

    async def cycling(n: int) -> Page[Rec]:
        return Page(page_of(n), n, None, False)  # A, B, A... (nested parts differ)

    with pytest.raises(PagingError, match="page 2 repeats"):
        await AsyncList(lambda start: walk(cycling, start, size=2)).collect()

    async def moving(n: int) -> Page[Rec]:
        return Page([Rec(0, f"r{n}", Inner([])), Rec(1, None, Inner([]))], n, 4, n == 3)

    assert len(await AsyncList(lambda start: walk(moving, start, size=2)).collect()) == 8


async def test_a_page_that_fails_ahead_fails_the_walk_there_after_the_pages_before_it() -> None:
    async def fetch(n: int) -> Page[int]:
        await asyncio.sleep(0.001 * (n % 3))  # out-of-order arrival
        if n == 5:
            raise ConnectionError(f"page {n}")
        return Page([n], n, 12, n == 11)

    it = AsyncList(lambda start: walk(fetch, start, size=1, concurrency=4))
    seen: list[int] = []
    with pytest.raises(ConnectionError, match="page 5"):
        async for x in it:
            seen.append(x)
    assert seen == [0, 1, 2, 3, 4]
    assert it.resume_token == ResumeToken(4, 1)
    assert await no_other_tasks()


async def test_wrap_reads_every_walk_through_the_hook_and_closes_it() -> None:
    it, _ = pager(7, 3)
    seen: list[int] = []
    closed: list[bool] = []

    async def around(batches: AsyncIterator[Batch[int]]) -> AsyncIterator[Batch[int]]:
        try:
            async for batch in batches:
                seen.append(len(batch.items))
                yield batch
        finally:
            closed.append(True)

    it.wrap(around)
    assert [await anext(it) for _ in range(4)] == [0, 1, 2, 3]
    await it.aclose()
    assert seen == [3, 3] and closed == [True]
    again = AsyncList(it._source, it.resume_token)  # a new walk from the token: wrapped too
    assert await again.collect() == [4, 5, 6] and seen == [3, 3, 2, 1] and len(closed) == 2
