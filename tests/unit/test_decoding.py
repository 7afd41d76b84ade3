"""DecodeErrors are built once, whole: status and url passed in, nothing escapes as another type.

Every test here runs with DecodeError sealed: setting a field on one after it was built
fails, so a code path that patches a raised error (as ``exc.status = ...`` did) fails too.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.samples import FIXTURE_ID, action
from support.stub import Reply, Stub

from asyncsports import Client
from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer, decode_array
from asyncsports.models import Action, Fixture, decode

quick = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ANY_LIST = msgspec.json.Decoder(list[Any])
STRS = msgspec.json.Decoder(list[str])


@pytest.fixture(autouse=True)
def sealed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make a DecodeError's fields read-only once its ``__init__`` has run."""
    init = DecodeError.__init__

    def sealing_init(self: DecodeError, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        object.__setattr__(self, "_sealed", True)

    def guarded_setattr(self: DecodeError, name: str, value: Any) -> None:
        # Dunder names (__traceback__, __cause__, __notes__) are the interpreter's.
        if getattr(self, "_sealed", False) and not name.startswith("__"):
            raise AttributeError(f"DecodeError.{name} set after the error was built")
        object.__setattr__(self, name, value)

    monkeypatch.setattr(DecodeError, "__init__", sealing_init)
    monkeypatch.setattr(DecodeError, "__setattr__", guarded_setattr)
    yield


def test_the_seal_holds() -> None:
    err = DecodeError("x", status=1)
    with pytest.raises(AttributeError):
        err.status = 2


async def _agen(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def streamed(parts: list[bytes], decoder: Any = ANY_LIST, **kw: Any) -> list[Any]:
    """Run decode_array to the end without an event loop (it never really suspends)."""
    agen = decode_array(_agen(parts), decoder, **kw)
    out: list[Any] = []
    while True:
        try:
            agen.__anext__().send(None)
        except StopIteration as stop:
            out += stop.value
        except StopAsyncIteration:
            return out


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


# --------------------------------------------------------------------------- status and url


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 Bad Gateway</html>",
        b"",
        b'[{"id": 1}]',  # a type error
        b'[{"id": ,}]',  # a syntax error
        b'["\xff"]',  # invalid UTF-8
        b"[" * 50_000 + b"]" * 50_000,  # too deep for msgspec
    ],
)
def test_decode_error_carries_status_and_url(body: bytes) -> None:
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], body, status=502, url="u")
    err = info.value
    assert (err.status, err.url, err.target) == (502, "u", "list[Fixture]")
    assert "status 502" in str(err) and "u" in str(err)


@pytest.mark.parametrize(
    ("body", "key", "path"),
    [
        (b'["a", 1]', None, "$[1]"),  # the element decoder's error
        (b'["a",,"b"]', None, None),  # the framer's, or msgspec's: it depends on the chunks
        (b'["a"', None, "$"),  # truncated inside the array
        (b'{"x": tru, "data": ["a"]}', "data", "$"),  # the envelope's
        (b'{"data": ["a"]} x', "data", "$"),  # after the array
        (b'{"data": {"a": 1}}', "data", "$.data"),  # the key's one object value
    ],
)
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_decode_array_error_carries_status_and_url(
    body: bytes, key: str | None, path: str | None, size: int
) -> None:
    with pytest.raises(DecodeError) as info:
        streamed(chunked(body, size), STRS, key=key, status=200, url="u", target="T")
    err = info.value
    assert (err.status, err.url, err.target) == (200, "u", "T")
    assert path is None or err.path == path


def test_framer_errors_carry_what_it_was_given() -> None:
    framer = ArrayFramer(target="T", url="u", status=201)
    framer.feed(b"[1,")
    with pytest.raises(DecodeError) as info:
        framer.close()
    assert (info.value.status, info.value.url, info.value.target) == (201, "u", "T")


def test_target_defaults_to_the_element_type() -> None:
    with pytest.raises(DecodeError) as info:
        streamed([b"[1]"], STRS)
    assert info.value.target == "str"
    with pytest.raises(DecodeError) as info:
        streamed([b"[1]"], STRS, target="")
    assert info.value.target == ""


def test_retract_needs_a_guess() -> None:
    framer = ArrayFramer(verify=False)
    assert framer.feed(b"[1,") == b"[1]" and not framer.guessed
    with pytest.raises(RuntimeError):
        framer.retract()


async def test_resources_pass_status_and_url_in(stub: Stub, client: Client) -> None:
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}", Reply(text="<html>maintenance</html>"))
    with pytest.raises(DecodeError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.status == 200 and info.value.url.endswith(f"/fixtures/{FIXTURE_ID}")
    path = f"/basketball/fixtures/{FIXTURE_ID}/actions"
    stub.add(path, [action(1), {"fixtureAction": "nope"}])
    with pytest.raises(DecodeError) as info:
        await client.actions.list("basketball", FIXTURE_ID).collect()
    err = info.value
    assert (err.status, err.path, err.target) == (200, "$[1].fixtureAction", "list[Action]")
    assert err.url.endswith(path)


# --------------------------------------------------------------------------- robustness


def test_deep_nesting_whole_body() -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(DecodeError) as info:
        decode(Any, body)
    assert "nested too deeply" in info.value.reason
    assert info.value.offset == 100_000 - 1


@pytest.mark.parametrize("size", [7, 4096, 1 << 20])
@pytest.mark.parametrize("skip", [0, 1])
def test_deep_nesting_in_a_streamed_element(size: int, skip: int) -> None:
    deep = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    body = b'["ok", ' + deep + b', "never"]'
    with pytest.raises(DecodeError) as info:
        streamed(chunked(body, size), skip=skip, target="T")
    err = info.value
    assert "nested too deeply" in err.reason
    assert (err.path, err.target) == ("$[1]", "T")
    assert err.offset == body.index(deep) + len(b'{"a":') * 49_999
    with pytest.raises(DecodeError) as info:
        framer = ArrayFramer()
        for part in chunked(body, size):
            framer.feed(part)
        framer.close()
    assert info.value.path == "$[1]"


def test_deep_nesting_around_the_array() -> None:
    deep = b"[" * 50_000 + b"]" * 50_000
    for body, path in [
        (b'{"x": ' + deep + b', "data": [1]}', "$"),
        (b'{"data": {"x": ' + deep + b"}}", "$.data"),
    ]:
        with pytest.raises(DecodeError) as info:
            streamed(chunked(body, 4096), key="data")
        assert "nested too deeply" in info.value.reason and info.value.path == path


def test_invalid_utf8() -> None:
    body = b'["ok", "b\xffd", "x"]'
    with pytest.raises(DecodeError) as info:
        decode(list[str], body)
    assert info.value.offset == 9 and "invalid UTF-8" in info.value.reason
    for skip in (0, 1):
        for size in (1, 5, 100):
            with pytest.raises(DecodeError) as info:
                streamed(chunked(body, size), STRS, skip=skip)
            assert (info.value.offset, info.value.path) == (9, "$[1]")
            assert "invalid UTF-8" in info.value.reason
    # A skipped element is never decoded, so its bytes are not checked.
    assert streamed([b'["\xff", "ok"]'], STRS, skip=1) == ["ok"]
    with pytest.raises(DecodeError, match="invalid UTF-8"):
        streamed([b'{"\xff": 1, "data": []}'], key="data")


def test_str_with_lone_surrogates() -> None:
    with pytest.raises(DecodeError, match="invalid UTF-8"):
        decode(Any, '["\ud800"]')


def test_invalid_metadata_is_a_decode_error() -> None:
    wire = action(1, metadata={"awayTeamColour": "x"})
    body = msgspec.json.encode(wire).replace(b'"x"', b'"\xff"')
    act = decode(Action, body)
    with pytest.raises(DecodeError) as info:
        _ = act.fixture_action.metadata
    assert info.value.path == "$.fixtureAction.metadata" and "invalid UTF-8" in info.value.reason


TYPES = [Any, list[Fixture], Fixture, dict[str, int], list[str]]
garbage = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b",", b":", b"1", b"\xff", b" "])).map(
        b"".join
    ),
    st.integers(1, 3000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 3000).map(lambda n: b'{"data":' + b"[" * n),
)


@quick
@given(garbage, st.sampled_from(TYPES))
@pytest.mark.slow
def test_garbage_never_escapes_decode_as_another_error(body: bytes, tp: Any) -> None:
    try:
        decode(tp, body)
    except DecodeError as err:
        assert err.target and err.path.startswith("$")


@quick
@given(
    garbage,
    st.sampled_from([None, "data"]),
    st.integers(0, 2**32),
    st.sampled_from([ANY_LIST, STRS]),
)
def test_garbage_never_escapes_decode_array_as_another_error(
    body: bytes, key: str | None, seed: int, decoder: Any
) -> None:
    rnd = random.Random(seed)
    cuts = sorted({0, len(body), *(rnd.randrange(len(body) + 1) for _ in range(4))})
    parts = [body[a:b] for a, b in itertools.pairwise(cuts)]
    try:
        streamed(parts, decoder, key=key, skip=rnd.randrange(3))
    except DecodeError as err:
        assert err.offset is None or 0 <= err.offset <= len(body)
    try:
        framer = ArrayFramer(key)
        for part in parts:
            framer.feed(part)
        framer.close()
    except DecodeError:
        pass


def test_why_bytes_are_not_utf8_is_read_from_them_whatever_msgspec_raised() -> None:
    """msgspec 0.23 raises DecodeError("Invalid UTF-8 encoded string"), older ones a
    UnicodeDecodeError: the reason comes from the bytes either way."""
    from asyncsports._wire.decoding import utf8_reason

    new = msgspec.DecodeError("Invalid UTF-8 encoded string")
    old = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    assert utf8_reason(b'["\xff"]', new) == utf8_reason(b'["\xff"]', old) == "invalid start byte"
    assert utf8_reason(b'"\xc3', new) == "unexpected end of data"
    # Bytes that decode after all: the error's own words.
    assert utf8_reason(b"[]", old) == "invalid start byte"
    assert utf8_reason(b"[]", new) == "Invalid UTF-8 encoded string"
