"""Incremental JSON array framing: any chunking of any body decodes as the whole body does."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asyncsports._wire.json import array as framing
from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer, decode_array

ANY_LIST = msgspec.json.Decoder(list[Any])
WS = " \t\n\r"

# Strings built to confuse a framer: brackets, quotes, backslashes, the element head.
tricky_text = st.lists(
    st.one_of(
        st.sampled_from([*'[]{}",:\\/ ', '},{"k":', "\\\\", '\\"', "é", "😀", "\x00"]),
        st.characters(codec="utf-8"),
    ),
    max_size=8,
).map("".join)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    tricky_text,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(tricky_text, inner, max_size=4),
    ),
    max_leaves=12,
)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """Objects that all start with the key "k" and nest objects that start with it too,
    so the framer's guesses are often wrong."""
    rec: dict[str, Any] = {"k": draw(st.integers(-5, 10**6))}
    for name in draw(st.lists(st.sampled_from(["s", "c", "v", "n"]), unique=True, max_size=4)):
        if name == "c":
            rec[name] = draw(st.lists(st.fixed_dictionaries({"k": tricky_text}), max_size=3))
        elif name == "v":
            rec[name] = draw(values)
        elif name == "n":
            rec[name] = {"k": {"k": draw(tricky_text)}}
        else:
            rec[name] = draw(tricky_text)
    return rec


arrays = st.one_of(st.lists(values, max_size=8), st.lists(records(), max_size=12))


def dump(value: Any, rnd: random.Random) -> bytes:
    """JSON text of ``value`` with random whitespace and random (valid) escapes."""
    out: list[str] = []

    def ws() -> None:
        if rnd.random() < 0.3:
            out.append("".join(rnd.choice(WS) for _ in range(rnd.randint(1, 3))))

    def text(s: str) -> None:
        out.append('"')
        for ch in s:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ch < " ":
                out.append(f"\\u{ord(ch):04x}")
            elif ch == "/" and rnd.random() < 0.5:
                out.append("\\/")
            elif ord(ch) < 0x10000 and rnd.random() < 0.2:
                out.append(f"\\u{ord(ch):04X}")
            else:
                out.append(ch)
        out.append('"')

    def emit(v: Any) -> None:
        ws()
        if isinstance(v, dict):
            out.append("{")
            for i, (k, x) in enumerate(v.items()):
                if i:
                    out.append(",")
                ws()
                text(k)
                ws()
                out.append(":")
                emit(x)
            ws()
            out.append("}")
        elif isinstance(v, list):
            out.append("[")
            for i, x in enumerate(v):
                if i:
                    out.append(",")
                emit(x)
            ws()
            out.append("]")
        elif isinstance(v, str):
            text(v)
        else:
            out.append(msgspec.json.encode(v).decode())
        ws()

    emit(value)
    return "".join(out).encode()


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


async def _agen(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def run_sync(agen: AsyncIterator[list[Any]]) -> list[list[Any]]:
    """Drive an async generator that never really suspends, without an event loop."""
    out = []
    while True:
        try:
            agen.__anext__().send(None)  # type: ignore[attr-defined]
        except StopIteration as stop:
            out.append(stop.value)
        except StopAsyncIteration:
            return out


def streamed(parts: list[bytes], decoder: Any = ANY_LIST, **kw: Any) -> list[Any]:
    return [x for batch in run_sync(decode_array(_agen(parts), decoder, **kw)) for x in batch]


def framed(parts: list[bytes], key: str | None = None) -> tuple[list[Any], int]:
    framer = ArrayFramer(key)
    out: list[Any] = []
    for part in parts:
        run = framer.feed(part)
        if run is not None:
            out += msgspec.json.decode(run)
    run = framer.close()
    if run is not None:
        out += msgspec.json.decode(run)
    return out, framer.count


@contextmanager
def exact_fallbacks() -> Iterator[None]:
    """Make the framer give up guessing early, to exercise the exact scanner's paths."""
    with mock.patch.object(framing, "_LIMIT", 8), mock.patch.object(framing, "_MAX_BAD", 1):
        yield


def whole_data(body: bytes, key: str | None) -> list[Any]:
    """The oracle: what whole-body decoding says the elements are (raises if invalid)."""
    doc = msgspec.json.decode(body)
    if key is None:
        if not isinstance(doc, list):
            raise ValueError("not an array")
        return doc
    if not isinstance(doc, dict):
        raise ValueError("not an object")
    pairs = json.loads(body, object_pairs_hook=lambda p: p)
    if [k for k, _ in pairs].count(key) > 1:
        raise ValueError("duplicate key")
    data = doc.get(key)
    if data is None:
        return []
    if isinstance(data, dict):
        return [data]
    if not isinstance(data, list):
        raise ValueError("not an array")
    return data


quick = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@quick
@given(arrays, st.integers(0, 2**32), st.lists(st.integers(0, 10**4), max_size=12), st.booleans())
@pytest.mark.slow
def test_any_chunking_matches_whole_body(
    value: list[Any], seed: int, cuts: list[int], fallback: bool
) -> None:
    body = dump(value, random.Random(seed))
    parts = split(body, cuts)
    expected = msgspec.json.decode(body)
    if fallback:
        with exact_fallbacks():
            assert streamed(parts) == expected
            assert framed(parts) == (expected, len(expected))
    else:
        assert streamed(parts) == expected
        assert framed(parts) == (expected, len(expected))


@st.composite
def keyed_bodies(draw: st.DrawFn) -> dict[str, Any]:
    other = st.dictionaries(tricky_text.filter(lambda k: k != "data"), values, max_size=3)
    before, after = draw(other), draw(other)
    doc = dict(before)
    shape = draw(st.sampled_from(["array", "object", "null", "missing"]))
    if shape == "array":
        doc["data"] = draw(arrays)
    elif shape == "object":
        doc["data"] = draw(st.one_of(records(), st.dictionaries(tricky_text, values, max_size=3)))
    elif shape == "null":
        doc["data"] = None
    doc.update({k: v for k, v in after.items() if k not in doc})
    return doc


@quick
@given(keyed_bodies(), st.integers(0, 2**32), st.lists(st.integers(0, 10**4), max_size=12))
@pytest.mark.slow
def test_keyed_array_matches_whole_body(doc: dict[str, Any], seed: int, cuts: list[int]) -> None:
    body = dump(doc, random.Random(seed))
    parts = split(body, cuts)
    expected = whole_data(body, "data")
    assert streamed(parts, key="data") == expected
    assert framed(parts, "data") == (expected, len(expected))


@settings(max_examples=25, deadline=None)
@given(st.one_of(arrays, keyed_bodies()), st.integers(0, 2**32))
def test_truncation_at_every_cut_point_raises(value: Any, seed: int) -> None:
    body = dump(value, random.Random(seed))
    key = "data" if isinstance(value, dict) else None
    rnd = random.Random(seed)
    for k in range(len(body.rstrip())):
        part = body[:k]
        parts = split(part, [rnd.randrange(k + 1) for _ in range(3)])
        with pytest.raises(DecodeError) as info:
            streamed(parts, key=key)
        assert info.value.offset is not None
        assert 0 <= info.value.offset <= k


def mutate(body: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(body) + 1)
    op = rnd.randrange(3)
    junk = rnd.choice([b"[", b"]", b"{", b"}", b",", b'"', b"\\", b":", b"1", b"x", b" "])
    if op == 0:
        return body[:i] + junk + body[i:]
    if op == 1:
        return body[:i] + body[i + 1 :]
    return body[:i] + junk + body[i + 1 :]


@quick
@given(
    st.one_of(arrays, keyed_bodies()),
    st.integers(0, 2**32),
    st.lists(st.integers(0, 10**4), max_size=8),
)
@pytest.mark.slow
def test_mutated_input_agrees_with_whole_body(value: Any, seed: int, cuts: list[int]) -> None:
    """Any bytes at all: either both succeed with the same elements, or we raise."""
    rnd = random.Random(seed)
    key = "data" if isinstance(value, dict) else None
    body = dump(value, rnd)
    for _ in range(rnd.randint(1, 3)):
        body = mutate(body, rnd)
    parts = split(body, cuts)
    try:
        expected = whole_data(body, key)
    except (msgspec.DecodeError, ValueError):
        with pytest.raises(DecodeError) as info:
            streamed(parts, key=key)
        assert info.value.offset is not None
        # The framer checks syntax; what a value may hold (UTF-8 in strings, the range of a
        # number) is the element decoder's to check.
        with pytest.raises((DecodeError, UnicodeDecodeError, msgspec.DecodeError)):
            framed(parts, key)
    else:
        assert streamed(parts, key=key) == expected
        assert framed(parts, key)[0] == expected


@quick
@given(
    arrays, st.integers(0, 2**32), st.lists(st.integers(0, 10**4), max_size=8), st.integers(0, 15)
)
@pytest.mark.slow
def test_skip_drops_leading_elements(
    value: list[Any], seed: int, cuts: list[int], skip: int
) -> None:
    body = dump(value, random.Random(seed))
    assert streamed(split(body, cuts), skip=skip) == msgspec.json.decode(body)[skip:]


@pytest.mark.parametrize(
    "body",
    [
        rb'["a\\", "\\\"", "]", "[", "}", "{", ",", "\\\\\\\"]"]',
        rb'[{"k":"},{\"k\":1}"},{"k":"\\\"},{"},{"k":[{"k":1},{"k":{"k":2}}]},{"k":"x"}]',
        '[ {"k" : "é😀\\u00e9\\ud83d\\ude00"} ,\n\t{"k":null}\r\n ]'.encode(),
        b"[]",
        b" [ ] ",
        b"[[],[[]],{},[{}]]",
        b'[1,-2.5e-3,true,false,null,""]',
    ],
)
def test_every_split_point(body: bytes) -> None:
    expected = msgspec.json.decode(body)
    for i in range(len(body) + 1):
        assert streamed([body[:i], body[i:]]) == expected
    assert streamed([body[i : i + 1] for i in range(len(body))]) == expected
    with exact_fallbacks():
        assert streamed([body[i : i + 2] for i in range(0, len(body), 2)]) == expected


@pytest.mark.parametrize(
    ("body", "offset", "raw_offset"),
    [
        (b"[1,,2]", 3, 3),
        (b"[,1]", 1, 1),
        (b"[1,]", 2, 2),
        (b"[1 2]", 3, 3),
        (b"[1}", 2, 2),
        (b"[1]x", 3, 3),
        (b"[1] [2]", 4, 4),
        (b"x[1]", 0, 0),
        # Inside an element the offset is msgspec's own, which differs by decoder type:
        # decode_array reports what a whole-body decode with the same decoder reports.
        (b'[{"a":tru}]', 10, 7),
        (b'[{"a":"\\q"}]', 9, 8),
        (b'[{"a":1]]', 7, 7),
        (b"[1", 2, 2),
        (b"", 0, 0),
        (b'["abc', 5, 5),
    ],
)
def test_malformed_array_offsets(body: bytes, offset: int, raw_offset: int) -> None:
    for size in (1, 3, 64):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        with pytest.raises(DecodeError) as info:
            streamed(parts)
        assert info.value.offset == offset, info.value
        with pytest.raises(DecodeError) as info:
            framed(parts)
        assert info.value.offset == raw_offset, info.value


@pytest.mark.parametrize(
    ("body", "offset"),
    [
        (b'{"data":5}', 8),
        (b'{"data":"x"}', 8),
        (b'{"data":[1],"data":[2]}', 12),
        (b'{"data":[1]]', 11),
        (b'{"data":[1]} 1', 13),
        (b'{"x":tru,"data":[]}', 5),
        (b'{"x":[1,}],"data":[]}', 8),
        (b'{"x":[1}', 7),
        (b"[1]", 0),
        (b'{"data" 1}', 8),
        (b'{"data":[1]', 11),
        (b'{"data":{"a":1}', 15),
        (b"{1:2}", 1),
        (b'{"x":}', 5),
        (b'{"x":1 "data":[]}', 7),
        (b'{"x":[1}],"data":[]}', 7),
    ],
)
def test_malformed_keyed_offsets(body: bytes, offset: int) -> None:
    for size in (1, 4, 64):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        with pytest.raises(DecodeError) as info:
            streamed(parts, key="data")
        assert info.value.offset == offset, info.value


class Inner(msgspec.Struct):
    period: int


class Rec(msgspec.Struct, rename="camel"):
    id: int
    fixture_action: Inner


RECS = msgspec.json.Decoder(list[Rec])


def rec_body(n: int, bad: int, bad_text: bytes = b'"x"') -> tuple[bytes, int]:
    parts = [b'{"id":%d,"fixtureAction":{"period":%d}}' % (i, i) for i in range(n)]
    parts[bad] = b'{"id":%d,"fixtureAction":{"period":%s}}' % (bad, bad_text)
    body = b"[" + b",\n ".join(parts) + b"]"
    return body, body.index(parts[bad])


@pytest.mark.parametrize("size", [7, 100, 4096, 1 << 20])
def test_type_error_path_offset_snippet(size: int) -> None:
    body, at = rec_body(1500, 1234)
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    with pytest.raises(DecodeError) as info:
        streamed(parts, RECS)
    err = info.value
    assert err.path == "$[1234].fixtureAction.period"
    assert err.offset == at
    assert err.target == "Rec"
    assert err.snippet.startswith('{"id":1234,"fixtureAction"')
    assert len(err.snippet) <= 200
    assert "Expected `int`, got `str`" in err.reason
    # Resuming past the bad element works; resuming before it reports the same place.
    assert len(streamed(parts, RECS, skip=1235)) == 1500 - 1235
    with pytest.raises(DecodeError) as info:
        streamed(parts, RECS, skip=1000, target="Action")
    assert (info.value.path, info.value.offset, info.value.target) == (
        "$[1234].fixtureAction.period",
        at,
        "Action",
    )


@pytest.mark.parametrize("size", [5, 64, 1 << 20])
def test_malformed_element_offset_matches_whole_body(size: int) -> None:
    body, _ = rec_body(300, 250, b"tru")
    with pytest.raises(msgspec.DecodeError) as whole:
        RECS.decode(body)
    byte = int(re.search(r"byte (\d+)", str(whole.value)).group(1))  # type: ignore[union-attr]
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    with pytest.raises(DecodeError) as info:
        streamed(parts, RECS)
    assert info.value.offset == byte
    assert info.value.path == "$[250]"
    assert "tru" in info.value.snippet


def test_errors_found_while_reframing_name_the_target() -> None:
    # The guessed cut takes in the array's end; re-framing it finds the junk after it.
    body = msgspec.json.encode([{"id": i, "fixtureAction": {"period": 1}} for i in range(50)])
    bad = body + b' ,{"id":9}'
    with pytest.raises(DecodeError) as info:
        streamed([bad[:300], bad[300:]], RECS)
    assert (info.value.target, info.value.offset) == ("Rec", len(body) + 1)


def test_keyed_error_paths() -> None:
    body = (
        b'{"meta":{"n":[1,2]},"data":['
        + b",".join(
            b'{"id":%d,"fixtureAction":{"period":%s}}' % (i, b'"x"' if i == 7 else b"1")
            for i in range(10)
        )
        + b"]}"
    )
    for size in (3, 50, 10_000):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        with pytest.raises(DecodeError) as info:
            streamed(parts, RECS, key="data")
        assert info.value.path == "$.data[7].fixtureAction.period"
        assert info.value.offset == body.index(b'{"id":7')
    single = b'{"data": {"id":1,"fixtureAction":{"period":null}}}'
    with pytest.raises(DecodeError) as info:
        streamed([single], RECS, key="data")
    assert info.value.path == "$.data.fixtureAction.period"
    assert info.value.offset == 9
    ok = b'{"data": {"id":1,"fixtureAction":{"period":2}}, "more": [{"id": 3}]}'
    assert streamed([ok[:20], ok[20:]], RECS, key="data") == [Rec(1, Inner(2))]


def _frame_trusting(parts: list[bytes]) -> tuple[ArrayFramer, int, int]:
    """Frame as decode_array does: guessed runs are checked by decoding them."""
    framer = ArrayFramer(verify=False)
    decoder = msgspec.json.Decoder(list[Any])
    seen = rejected = 0
    for part in [*parts, None]:
        run = framer.feed(part) if part is not None else framer.close()
        while run is not None:
            try:
                seen += len(decoder.decode(run))
                run = None
            except msgspec.DecodeError:
                assert framer.guessed
                rejected += 1
                run = framer.retract()
    return framer, seen, rejected


@pytest.mark.parametrize("nested_every", [40, 1])
def test_fast_path_is_used_and_recovers_from_wrong_guesses(nested_every: int) -> None:
    # Some records nest objects that start like a record, so a cut may land inside one.
    recs = [
        {"k": i, "c": [{"k": j} for j in range(3 if i % nested_every == 0 else 0)], "s": '},{"k":'}
        for i in range(3000)
    ]
    body = msgspec.json.encode(recs)
    rejected = 0
    for size in (97, 1000, 65536):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        framer, seen, bad = _frame_trusting(parts)
        assert seen == 3000
        rejected += bad
        if nested_every > 1:
            assert framer.head == b',{"k":'  # still guessing: wrong guesses are rare
        assert streamed(parts) == recs
        assert framed(parts) == (recs, 3000)
    assert rejected > 0


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b" {} ", []),
        (b'{"data":[]}', []),
        (b'{"data" : [ ] , "x" : [ ] }', []),
        (b'{"x":{"data":[1]},"data":[2]}', [2]),
        (b'{"dat\\u0061":[3]}', [3]),
    ],
)
def test_keyed_shapes(body: bytes, expected: list[Any]) -> None:
    for size in (1, 2, 100):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        assert streamed(parts, key="data") == expected
        assert framed(parts, "data") == (expected, len(expected))


def test_key_that_is_not_an_identifier() -> None:
    body = b'{"the list":[{"id":1,"fixtureAction":{"period":"x"}}]}'
    with pytest.raises(DecodeError) as info:
        streamed([body], RECS, key="the list")
    assert info.value.path == '$["the list"][0].fixtureAction.period'


def test_big_members_around_the_array() -> None:
    big = b"x" * 200_000
    body = b'{"meta":"' + big + b'","data":[1,2,3],"more":["' + big + b'"]}  '
    parts = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    assert streamed(parts, key="data") == [1, 2, 3]
    bad = body[:-3] + b"}x"
    with pytest.raises(DecodeError) as info:
        streamed([bad[i : i + 4096] for i in range(0, len(bad), 4096)], key="data")
    assert info.value.offset == len(bad) - 1


def test_wrong_guess_with_no_boundary_behind_it() -> None:
    # One long element full of nested heads: every guessed cut inside it is wrong, and
    # until it ends there is no real boundary to fall back to.
    inner = [{"k": j} for j in range(2000)]
    recs = [{"k": 0}, {"k": 1, "c": inner}, {"k": 2}]
    body = msgspec.json.encode(recs)
    parts = [body[i : i + 50] for i in range(0, len(body), 50)]
    _, seen, rejected = _frame_trusting(parts)
    assert seen == 3
    assert rejected > 0
    assert streamed(parts) == recs
    assert framed(parts) == (recs, 3)


def test_elements_that_start_differently_relearn_the_head() -> None:
    # The first key differs from element to element: the head learned from the first
    # boundary never matches again, so the exact scan runs once and learns what they share.
    recs = [{f"k{i}": "x" * 40, "n": [{"k1": i}]} for i in range(20_000)]
    body = msgspec.json.encode(recs)
    parts = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    with mock.patch.object(framing, "_LIMIT", 65536):
        framer = ArrayFramer()
        out: list[Any] = []
        carry = 0
        for part in parts:
            run = framer.feed(part)
            carry = max(carry, framer.buffered)
            if run is not None:
                out += msgspec.json.decode(run)
        out += msgspec.json.decode(framer.close() or b"[]")
    assert out == recs
    assert framer.head == b',{"k'
    assert carry <= 65536 + 4096


def test_chunk_types_and_empty_chunks() -> None:
    body = b'[{"a":1},{"a":2}]'
    parts: list[Any] = [b"", bytearray(body[:5]), memoryview(body[5:9]), b"", body[9:]]
    assert streamed(parts) == [{"a": 1}, {"a": 2}]


async def test_decode_array_async_batches() -> None:
    body = msgspec.json.encode([{"id": i, "fixtureAction": {"period": 1}} for i in range(1000)])
    batches = [b async for b in decode_array(_agen([body[:5000], body[5000:]]), RECS)]
    assert len(batches) >= 2
    assert [r.id for b in batches for r in b] == list(range(1000))
