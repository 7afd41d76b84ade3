"""A member nested too deeply for msgspec is reported at its own deepest bracket, not at
a deeper one further on in the same chunk."""

from __future__ import annotations

import pytest

from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer


def test_the_deep_member_is_the_one_reported() -> None:
    n = 50_000
    x = b"[" * n + b"]" * n
    y = b"[" * (n + 50) + b"]" * (n + 50)
    body = b'{"x":' + x + b',"y":' + y + b',"data":[]}'
    with pytest.raises(DecodeError) as info:
        ArrayFramer("data").feed(body)
    assert info.value.reason == f"JSON is nested too deeply ({n} levels)"
    assert info.value.offset == 5 + n - 1
