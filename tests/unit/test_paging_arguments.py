"""AsyncList.paged's argument bounds and messages, and closing a list in every state."""

from __future__ import annotations

import asyncio

import pytest

from asyncsports.paging import AsyncList, Page, ResumeToken


async def pages_of(n: int) -> Page[int]:
    return Page([n], n, 3, n == 2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": 0}, r"^size: 0 is outside 1\.\.inf$"),
        ({"size": 1, "concurrency": 0}, r"^concurrency: 0 is outside 1\.\.64$"),
        ({"size": 1, "concurrency": 65}, r"^concurrency: 65 is outside 1\.\.64$"),
        ({"size": 1, "lookahead": -1}, r"^lookahead: -1 is outside 0\.\.64$"),
        ({"size": 1, "lookahead": 65}, r"^lookahead: 65 is outside 0\.\.64$"),
    ],
)
def test_a_bound_passed_is_refused_by_name(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AsyncList.paged(pages_of, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 1},
        {"size": 1, "lookahead": 0},
        {"size": 1, "lookahead": 64, "concurrency": 64},
        {"size": 1, "concurrency": 1},
    ],
)
async def test_the_bounds_themselves_are_taken(kwargs: dict[str, int]) -> None:
    assert await AsyncList.paged(pages_of, **kwargs).collect() == [0, 1, 2]


async def test_lookahead_reaches_the_walk() -> None:
    asked: list[int] = []
    gate = asyncio.Event()

    async def fetch(n: int) -> Page[int]:
        asked.append(n)
        if n:
            await gate.wait()
        return Page([n], n, 4, n == 3)

    # Four pages ahead asked while the caller holds the first record: the walk took
    # lookahead=3 (its own default is one).
    listing = AsyncList.paged(fetch, 1, lookahead=3)
    it = aiter(listing)
    assert await anext(it) == 0
    for _ in range(200):
        if len(asked) == 4:
            break
        await asyncio.sleep(0.005)
    assert asked == [0, 1, 2, 3]
    gate.set()
    assert [x async for x in it] == [1, 2, 3]


def test_a_resume_that_is_not_text_is_refused_by_type() -> None:
    with pytest.raises(TypeError, match=r"^resume: expected a ResumeToken or its text, got int$"):
        ResumeToken.parse(3)  # type: ignore[arg-type]


def test_awaiting_a_list_says_how_to_read_it() -> None:
    listing = AsyncList.paged(pages_of, 1)
    with pytest.raises(TypeError) as raised:
        listing.__await__()
    assert str(raised.value) == (
        "an AsyncList is not awaitable: iterate it with 'async for x in ...' "
        "or gather it with 'await ....collect()'"
    )


async def test_a_list_never_read_closes() -> None:
    listing = AsyncList.paged(pages_of, 1)
    await listing.aclose()
    assert await listing.collect() == []


def test_a_token_of_another_listing_is_refused_with_both_fingerprints() -> None:
    with pytest.raises(ValueError) as raised:
        ResumeToken.bind("2:1:aaaa", "bbbb")
    assert str(raised.value) == (
        "resume: the token '2:1:aaaa' belongs to another listing (fingerprint aaaa, this "
        "listing is bbbb): resume a listing with the same arguments as the one the token "
        "came from"
    )


async def test_concurrency_reaches_the_walk() -> None:
    in_flight: set[int] = set()
    most = 0
    gate = asyncio.Event()

    async def fetch(n: int) -> Page[int]:
        nonlocal most
        if n:
            in_flight.add(n)
            most = max(most, len(in_flight))
            await gate.wait()
            in_flight.discard(n)
        return Page([n], n, 6, n == 5)

    # The first page tells the total: three pages go at once after it (the walk's own
    # default is one at a time).
    it = aiter(AsyncList.paged(fetch, 1, concurrency=3, lookahead=0))
    assert await anext(it) == 0
    task = asyncio.ensure_future(anext(it))
    for _ in range(400):
        if most >= 3:
            break
        await asyncio.sleep(0.005)
    assert most == 3
    gate.set()
    assert await task == 1
    assert [x async for x in it] == [2, 3, 4, 5]
