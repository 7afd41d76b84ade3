"""The framer's byte scanner agrees with a plain byte-by-byte JSON reader, however the
bytes are chunked: top-level commas, the closer, nesting depth, element spans, heads."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asyncsports._wire.json.scan import Skim, bad_utf8, deepest, learn_head, spans

text = st.text(alphabet=st.sampled_from([*'[]{}",:\\ a', "é"]), max_size=6)
values = st.recursive(
    st.one_of(st.none(), st.integers(-100, 100), text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)


def spaced(value: Any, rnd: random.Random) -> bytes:
    """JSON text of ``value`` with random whitespace between tokens."""
    raw = msgspec.json.encode(value)
    out = bytearray()
    in_str = esc = False
    for b in raw:
        if out and not in_str and b in b",:[]{}" and rnd.random() < 0.3:
            out += rnd.choice([b" ", b"\n", b"\t\r"])
        out.append(b)
        if esc:
            esc = False
        elif b == 0x5C and in_str:
            esc = True
        elif b == 0x22:
            in_str = not in_str
    return bytes(out)


def reference(buf: bytes) -> tuple[list[int], int, int]:
    """Top-level commas, the index of the closer at depth 0 (or -1), the deepest depth."""
    depth = best = 0
    in_str = esc = False
    commas: list[int] = []
    for i, b in enumerate(buf):
        if in_str:
            if esc:
                esc = False
            elif b == 0x5C:
                esc = True
            elif b == 0x22:
                in_str = False
        elif b == 0x22:
            in_str = True
        elif b in b"[{":
            depth += 1
            best = max(best, depth)
        elif b in b"]}":
            if depth == 0:
                return commas, i, best
            depth -= 1
        elif b == 0x2C and depth == 0:
            commas.append(i)
    return commas, -1, best


def chunked(data: bytes, rnd: random.Random) -> list[int]:
    """Random cut points of ``data``, the end included."""
    cuts = sorted(rnd.sample(range(len(data) + 1), min(len(data) + 1, rnd.randint(0, 6))))
    return [*cuts, len(data)]


@settings(max_examples=150)
@given(st.lists(values, max_size=5), st.integers(0, 2**32))
def test_skim_across_chunks_matches_the_reference(items: list[Any], seed: int) -> None:
    rnd = random.Random(seed)
    body = spaced(items, rnd)[1:]  # what follows the array's "["
    commas, closer, _ = reference(body)
    sk = Skim(commas=[])
    pos, found = 0, -1
    for end in chunked(body, rnd):
        found, pos = sk.scan(body[:end], pos)
        if found >= 0:
            break
    assert (found, sk.commas) == (closer, commas)
    assert (sk.first, sk.last) == ((commas[0], commas[-1]) if commas else (-1, -1))
    assert pos == closer + 1
    assert (sk.depth, sk.in_str, sk.esc) == (0, False, False)


@given(st.lists(values, min_size=2, max_size=4), st.integers(0, 2**32))
def test_skim_stops_after_the_first_comma(items: list[Any], seed: int) -> None:
    body = spaced(items, random.Random(seed))[1:]
    commas, closer, _ = reference(body)
    sk = Skim()
    assert sk.scan(body, 0, stop_first=True) == (-1, commas[0] + 1)
    assert (sk.first, sk.last, sk.commas) == (commas[0], commas[0], None)
    second = (-1, commas[1] + 1) if len(commas) > 1 else (closer, closer + 1)
    assert sk.scan(body, commas[0] + 1, stop_first=True) == second
    assert (sk.first, sk.last) == (commas[0], commas[min(1, len(commas) - 1)])


def test_skim_holds_an_escape_cut_at_the_chunk_end() -> None:
    sk = Skim()
    assert sk.scan(b'"a\\', 0) == (-1, 3)
    assert (sk.in_str, sk.esc) == (True, True)
    # The escaped quote does not end the string; the next quote does.
    assert sk.scan(b'"a\\"],"]', 3) == (7, 8)
    assert (sk.in_str, sk.esc, sk.depth) == (False, False, 0)


def test_skim_ends_an_open_string_at_the_buffer_end() -> None:
    sk = Skim()
    assert sk.scan(b'["ab', 0) == (-1, 4)
    assert (sk.in_str, sk.esc, sk.depth) == (True, False, 1)
    assert sk.scan(b'["ab,]"]]', 4) == (8, 9)


@given(st.lists(values, max_size=5), st.integers(0, 2**32))
def test_spans_are_the_elements_trimmed(items: list[Any], seed: int) -> None:
    run = spaced(items, random.Random(seed))
    got = spans(run)
    if not items:
        assert got == [(1, 1)]
        return
    assert [msgspec.json.decode(run[s:e]) for s, e in got] == items
    for s, e in got:
        assert run[s : s + 1] not in b" \t\n\r" and run[e - 1 : e] not in b" \t\n\r"


def test_spans_of_a_run_cut_short_end_at_its_last_byte() -> None:
    assert spans(b"[1, 22 ,333 ") == [(1, 2), (4, 6), (8, 11)]
    assert spans(b"[ 1 , 22 ]") == [(2, 3), (6, 8)]


@given(values)
def test_deepest_matches_the_reference(value: Any) -> None:
    data = msgspec.json.encode(value)
    best = reference(b"[" + data + b"]")[2] - 1
    got = deepest(data)
    assert got[0] == best
    if best:
        assert data[got[1] : got[1] + 1] in (b"[", b"{")
        assert deepest(data[: got[1] + 1]) == got  # the first bracket to reach it


def test_deepest_stops_at_a_string_that_never_closes() -> None:
    assert deepest(b'[[1], "[[[') == (2, 1)
    assert deepest(b'{"a": [{}]}') == (3, 7)
    assert deepest(b"[][[]]") == (2, 3)
    assert deepest(b"[[],[]]") == (2, 1)  # the first bracket to reach the depth
    assert deepest(b"1") == (0, 0)


@pytest.mark.parametrize(
    ("data", "at"),
    [(b"ab\xffcd", 2), (bytearray(b"\xe9"), 0), (b"abc", 2), (b"a\xc3\xa9\xc3", 3)],
)
def test_bad_utf8_points_at_the_first_bad_byte(data: bytes, at: int) -> None:
    assert bad_utf8(data) == at


@pytest.mark.parametrize(
    ("buf", "c", "head"),
    [
        (b'x,{"k": 1', 1, b',{"k":'),
        (b"x, [1", 1, b", ["),
        (b'x,"s"', 1, b',"'),
        (b"x,1 ", 1, b","),
        (b"x, {", 1, None),  # the buffer ends with the head
        (b"x, [", 1, None),
        (b"x,", 1, None),
        (b"x" * 50 + b',{"k"', 50, None),  # no colon yet, 3 bytes after the head
        (b'x,{"k"' + b" " * 77, 1, b",{"),  # 80 bytes after it: the key is not coming
        (b'x,{"k', 1, None),  # the key is cut short
        (b'x,{"k"' + b" " * 70, 1, None),  # no colon yet, fewer than 80 bytes after it
        (b'x,{"k"' + b" " * 80, 1, b",{"),  # no colon in 80 bytes: the head ends before the key
        (b'x,{"' + b"a" * 65 + b'":1' + b" " * 20, 1, b",{"),  # a key too long for a head
        (b"x,{ }" + b" " * 80, 1, b",{ "),
    ],
)
def test_learn_head(buf: bytes, c: int, head: bytes | None) -> None:
    assert learn_head(buf, c) == head
    assert learn_head(bytearray(buf), c) == head
