"""One AsyncList read by anext and by pages in turn: each record handed out once, in order,
and no empty page for a batch already handed out whole."""

from __future__ import annotations

import pytest

from asyncsports.paging import AsyncList, Page, ResumeToken


async def three_pages(n: int) -> Page[int]:
    return Page([3 * n, 3 * n + 1, 3 * n + 2], n, 3, n == 2)


async def test_pages_after_a_whole_page_was_taken_start_at_the_next() -> None:
    listing = AsyncList.paged(three_pages, 3, lookahead=0)
    assert [await anext(listing) for _ in range(3)] == [0, 1, 2]
    assert [list(p) async for p in listing.pages()] == [[3, 4, 5], [6, 7, 8]]


async def test_anext_after_pages_took_the_rest_of_a_batch_goes_on_from_there() -> None:
    listing = AsyncList.paged(three_pages, 3, lookahead=0)
    assert await anext(listing) == 0
    async for page in listing.pages():
        assert list(page) == [1, 2]
        break
    assert await anext(listing) == 3
    async for page in listing.pages():
        assert list(page) == [4, 5]
        break
    assert await listing.collect() == [6, 7, 8]


async def test_anext_after_pages_took_a_whole_batch_goes_on_to_the_next() -> None:
    listing = AsyncList.paged(three_pages, 3, lookahead=0)
    async for page in listing.pages():
        assert list(page) == [0, 1, 2]
        break
    assert await anext(listing) == 3


async def test_a_walk_resumed_mid_page_ends_with_a_token_past_its_last_record() -> None:
    listing = AsyncList.paged(three_pages, 3, resume="2:1", lookahead=0)
    assert await listing.collect() == [7, 8]
    assert str(listing.resume_token) == "2:3"


def test_a_token_with_a_negative_part_is_refused_with_both() -> None:
    for page, index in ((-1, 0), (0, -1)):
        with pytest.raises(ValueError) as raised:
            ResumeToken(page, index)
        assert str(raised.value) == f"resume: page and index must be >= 0, got {page}:{index}"
    with pytest.raises(ValueError) as raised:
        ResumeToken(0, 0, "zz!")
    assert str(raised.value) == "resume: not a listing fingerprint: 'zz!'"
