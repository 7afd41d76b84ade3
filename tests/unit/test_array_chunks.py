"""A streamed array decodes the same however its bytes are cut and padded with blanks,
and a scanner's depth count skips what strings hold."""

from __future__ import annotations

import asyncio
import itertools

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._wire.json.scan import deepest
from asyncsports.errors import DecodeError
from asyncsports.jsonstream import decode_array

DECODER = msgspec.json.Decoder(list[int])


def decoded(parts: list[bytes], key: str | None = None) -> list[int]:
    async def chunks():  # type: ignore[no-untyped-def]
        for part in parts:
            yield part

    async def run() -> list[int]:
        return [x async for batch in decode_array(chunks(), DECODER, key=key) for x in batch]

    return asyncio.run(run())


@pytest.mark.parametrize(
    "parts",
    [
        [b"[1,", b"  ", b"2,3]"],
        [b"[1,2", b"   ", b",3]"],  # a chunk of blanks between an element and its comma
        [b"[1,2,", b"   ", b"   ", b"3,4]"],
        [b"[", b" ", b"1", b" ", b",2]"],
    ],
)
def test_chunks_of_blanks_between_elements(parts: list[bytes]) -> None:
    assert decoded(parts) == msgspec.json.decode(b"".join(parts))


def test_a_comma_after_only_blanks_is_malformed() -> None:
    with pytest.raises(DecodeError, match="expected a value before ','"):
        decoded([b"[1, ", b" ", b",2]"])


def test_a_null_array_under_its_key_is_empty_and_a_number_is_not_an_array() -> None:
    assert decoded([b'{"data": null}'], key="data") == []
    with pytest.raises(DecodeError, match=r"expected an array, an object or null at \$.data"):
        decoded([b'{"data": 5}'], key="data")


@given(
    st.lists(st.integers(-(10**6), 10**6), max_size=8),
    st.lists(st.sampled_from([b"", b" ", b"\n  "]), min_size=20, max_size=20),
    st.lists(st.integers(1, 200), max_size=6),
)
def test_any_cut_of_any_blank_padding_decodes_the_same(
    items: list[int], blanks: list[bytes], cuts: list[int]
) -> None:
    pieces = [b"["]
    for i, item in enumerate(items):
        pieces += [blanks[i % 20], str(item).encode(), blanks[(i + 7) % 20]]
        pieces.append(b"," if i < len(items) - 1 else b"")
    body = b"".join([*pieces, blanks[19], b"]"])
    at = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    parts = [body[a:b] for a, b in itertools.pairwise(at)]
    assert decoded(parts) == items


@pytest.mark.parametrize(
    ("data", "depth"),
    [
        (b"[[],[]]", (2, 1)),  # the second inner list is no deeper than the first
        (b'[{"a":"[[["}]', (2, 1)),  # brackets in a string are not structure
        (b'[["abc', (2, 1)),  # a string that never closes ends the count
        (b"1", (0, 0)),
    ],
)
def test_the_deepest_nesting_and_where_it_is(data: bytes, depth: tuple[int, int]) -> None:
    assert deepest(data) == depth
