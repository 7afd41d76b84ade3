"""decode_array takes a decoder of a bare ``list`` (no element type): its target is "list"."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest

from asyncsports.errors import DecodeError
from asyncsports.jsonstream import decode_array


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_a_bare_list_decoder() -> None:
    out = [b async for b in decode_array(chunks(b"[1,", b'"a"]'), msgspec.json.Decoder(list))]
    assert [x for b in out for x in b] == [1, "a"]
    with pytest.raises(DecodeError) as info:
        async for _ in decode_array(chunks(b"[1,"), msgspec.json.Decoder(list)):
            pass
    assert info.value.target == "list"
