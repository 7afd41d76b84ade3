"""A listing's position refuses what cannot be one, and ``anext`` steps over empty pages.

Also the service's error message picked from a body, and an array decoded from chunks
that have no ``aclose``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest

from asyncsports.errors import message_of
from asyncsports.jsonstream import decode_array
from asyncsports.paging import AsyncList, Batch, ResumeToken


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"page": -1}, "resume: page and index must be >= 0, got -1:0"),
        ({"index": -2}, "resume: page and index must be >= 0, got 0:-2"),
        ({"listing": "XYZ"}, "resume: not a listing fingerprint: 'XYZ'"),
        ({"listing": ""}, "resume: not a listing fingerprint: ''"),
    ],
)
def test_a_token_that_cannot_be_a_position_is_refused(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ResumeToken(**kwargs)  # type: ignore[arg-type]


async def test_anext_steps_over_empty_pages_and_stops_at_the_end() -> None:
    async def source(start: ResumeToken) -> AsyncIterator[Batch[int]]:
        yield Batch(0, 0, [])
        yield Batch(1, 0, [])
        yield Batch(2, 0, [7])
        yield Batch(3, 0, [])

    listing = AsyncList(source)
    assert await anext(listing) == 7
    assert str(listing.resume_token) == "2:1"
    with pytest.raises(StopAsyncIteration):
        await anext(listing)
    with pytest.raises(StopAsyncIteration):  # and stays ended
        await anext(listing)


@pytest.mark.parametrize(
    ("body", "text", "message"),
    [
        ({"detail": "no such sport"}, "", "no such sport"),
        ({"message": "", "title": "Not Found"}, "", "Not Found"),
        ({"code": 7}, ' {"code": 7} ', '{"code": 7}'),  # no message field: the text as sent
        (None, "{not json}", "not json"),
        (None, "   ", "(empty body)"),
    ],
)
def test_the_message_of_an_error_body(body: object, text: str, message: str) -> None:
    assert message_of(body, text) == message


async def test_chunks_without_aclose_are_decoded_and_left_as_they_are() -> None:
    class Chunks:
        def __init__(self, parts: list[bytes]) -> None:
            self.parts = iter(parts)

        def __aiter__(self) -> Chunks:
            return self

        async def __anext__(self) -> bytes:
            for part in self.parts:
                return part
            raise StopAsyncIteration

    decoder = msgspec.json.Decoder(list[int])
    batches = [b async for b in decode_array(Chunks([b"[1,", b"2]"]), decoder)]
    assert [x for batch in batches for x in batch] == [1, 2]
