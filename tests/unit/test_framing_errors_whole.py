"""A framing error says all of it, however the body is chunked: the reason, the JSON path,
the byte offset, a snippet of the body around that byte, and the target, URL and status."""

from __future__ import annotations

import pytest

from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer

CASES = [
    (None, b"[,1]", "JSON is malformed: expected a value before ','", "$", 1),
    (None, b"[1,]", "JSON is malformed: trailing comma in array", "$", 2),
    (None, b"[1}", "JSON is malformed: expected ',' or ']'", "$", 2),
    (None, b"[1]x", "JSON is malformed: trailing characters", "$", 3),
    (None, b"x[1]", "JSON is malformed: expected '['", "$", 0),
    (None, b"[1", "JSON is truncated: the array is not closed", "$", 2),
    (None, b'["abc', "JSON is truncated: the array is not closed", "$", 5),
    (None, b"", "JSON is truncated", "$", 0),
    ("data", b'{"data":5}', "expected an array, an object or null at $.data", "$", 8),
    ("data", b'{"data":5', "expected an array, an object or null at $.data", "$", 8),
    ("data", b'{"data":"x"}', "expected an array, an object or null at $.data", "$", 8),
    ("data", b'{"data":[1],"data":[2]}', "duplicate key 'data'", "$", 12),
    ("data", b'{"data":[1]]', "JSON is malformed: expected ',' or '}'", "$", 11),
    ("data", b'{"x":tru,"data":[]}', "JSON is malformed: invalid value", "$", 5),
    ("data", b'{"x":[1}],"data":[]}', "JSON is malformed: mismatched bracket", "$", 7),
    ("data", b'{"data" 1}', "JSON is malformed: expected ':'", "$", 8),
    ("data", b'{"data":{"a":1}', "JSON is truncated", "$.data", 15),
    ("data", b'{"x":1', "JSON is truncated", "$", 6),
    ("data", b'{"data":null', "JSON is truncated", "$.data", 12),
    ("data", b'{"data":null,"data":[1]}', "duplicate key 'data'", "$", 13),
    ("data", b"{1:2}", "JSON is malformed: expected '\"'", "$", 1),
    ("data", b'{"x":}', "JSON is malformed: invalid character", "$", 5),
    ("data", b'{"x":@,"data":[]}', "JSON is malformed: invalid character", "$", 5),
    ("data", b'{"x":1 "data":[]}', "JSON is malformed: expected ',' or '}'", "$", 7),
    ("data", b'{"data":[1,]}', "JSON is malformed: trailing comma in array", "$.data", 10),
    ("data", b'{"data":[,1]}', "JSON is malformed: expected a value before ','", "$.data", 9),
    ("data", b'{"data":[1}', "JSON is malformed: expected ',' or ']'", "$.data", 10),
    ("data", b'{"data":[1,2', "JSON is truncated: the array is not closed", "$.data", 12),
    ("data", b"[1]", "JSON is malformed: expected '{'", "$", 0),
    ("data", b'{"x":1}  x', "JSON is malformed: trailing characters", "$", 9),
]


def fail(framer: ArrayFramer, parts: list[bytes]) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        for part in parts:
            framer.feed(part)
        framer.close()
    return info.value


@pytest.mark.parametrize(("key", "body", "reason", "path", "offset"), CASES)
def test_every_field_of_a_framing_error(
    key: str | None, body: bytes, reason: str, path: str, offset: int
) -> None:
    for size in (1, 3, 64):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        err = fail(ArrayFramer(key, target="Rec", url="http://h/x", status=200), parts)
        assert (err.reason, err.path, err.offset) == (reason, path, offset)
        assert (err.target, err.url, err.status) == ("Rec", "http://h/x", 200)
        # The snippet is the body's own bytes around the offset (as much as was held).
        # (a trailing comma's offset is the comma's, its snippet starts at the closer).
        snip = err.snippet.encode()
        assert snip or not body, err
        starts = [a for a in range(len(body) + 1) if body.startswith(snip, a)]
        assert any(a - 1 <= offset <= a + len(snip) for a in starts), (snip, body)


def test_an_empty_element_found_by_a_guessed_cut() -> None:
    # Chunks this small keep several pieces in the carry when the cut is found.
    body = b"[1,2,3,  ,4]"
    for size in (1, 2, 3):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        err = fail(ArrayFramer(), parts)
        assert (err.reason, err.offset) == ("JSON is malformed: expected a value before ','", 9)
        assert err.snippet.encode() in body, err.snippet


def test_an_empty_element_at_the_start_of_a_chunk() -> None:
    # The fast path learned the head "," and cuts the second chunk at its comma.
    err = fail(ArrayFramer(), [b"[1,2,", b"  ,4]"])
    assert (err.reason, err.offset) == ("JSON is malformed: expected a value before ','", 7)


@pytest.mark.parametrize(
    ("key", "body", "snippet"),
    [
        (None, b"[1,,2]", ",2]"),
        (None, b"[1}", "1}"),
        (None, b"[1,]", "]"),
        ("data", b'{"x":}', '{"x":}'),
        ("data", b'{"x":1', '{"x":1'),
        ("data", b'{"x":"' + b"a" * 100, "a" * 80),
        ("data", b'{"x":1 "data":[]}', '{"x":1 "data":[]}'),
    ],
)
def test_the_snippet_of_a_body_in_one_chunk(key: str | None, body: bytes, snippet: str) -> None:
    assert fail(ArrayFramer(key), [body]).snippet == snippet


def test_a_long_body_s_snippet_is_the_bytes_around_the_offset() -> None:
    keyed = b'{"pad":"' + b"p" * 100 + b'","x":@,"data":[]}'
    err = fail(ArrayFramer("data"), [keyed])
    at = keyed.index(b"@")
    assert (err.offset, err.snippet) == (at, keyed[at - 40 : at + 60].decode())


def test_a_number_cut_by_a_chunk_is_read_whole() -> None:
    framer = ArrayFramer("data")
    assert framer.feed(b'{"x":12') is None
    assert framer.feed(b'34,"data":[1]}') == b"[1]"
    assert framer.close() is None
    framer = ArrayFramer("data")
    assert framer.feed(b'{"data":nu') is None
    assert framer.feed(b"ll}") is None
    assert framer.close() is None


def test_members_before_the_array_do_not_hold_it_back() -> None:
    framer = ArrayFramer("data")
    assert framer.feed(b'{"x":1, "y":"s", "data":[1,2,') == b"[1,2]"
    assert framer.feed(b"3]}") is None
    assert framer.close() == b"[3]"


def test_a_wrong_value_is_refused_as_soon_as_it_ends() -> None:
    with pytest.raises(DecodeError, match="expected an array, an object or null"):
        ArrayFramer("data").feed(b'{"data":"x"')
    with pytest.raises(DecodeError, match="invalid character"):
        ArrayFramer("data").feed(b'{"x":,')
