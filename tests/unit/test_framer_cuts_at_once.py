"""The framer hands out an element as soon as the head of the next one has arrived, also
when that head is split across chunks (the carry's tail and the new chunk's start)."""

from __future__ import annotations

import msgspec
from hypothesis import example, given
from hypothesis import strategies as st

from asyncsports.jsonstream import ArrayFramer

HEAD = b',{"k":'
records = st.lists(st.tuples(st.integers(0, 10**6), st.text("ab ,:[]", max_size=12)), max_size=12)


def feeds(body: bytes, cuts: list[int]) -> list[tuple[bytes, int]]:
    """Each prefix of ``body`` the chunks end at, with the elements handed out by then."""
    framer = ArrayFramer()
    out, got, start = [], 0, 0
    for end in [*sorted(set(cuts)), len(body)]:
        run = framer.feed(body[start:end])
        start = end
        got += 0 if run is None else len(msgspec.json.decode(run))
        out.append((body[:end], got))
    return out


@given(records, st.lists(st.integers(0, 400), max_size=30))
@example([(100000, "::::::::::::"), (0, "")], [33])  # out at its comma, before the head
def test_elements_come_out_when_the_next_head_is_whole(
    items: list[tuple[int, str]], cuts: list[int]
) -> None:
    body = msgspec.json.encode([{"k": k, "v": v} for k, v in items])
    for prefix, got in feeds(body, cuts):
        if len(prefix) < len(body):  # (the last element comes out at the array's end)
            # Every element followed by a whole head is out, and none not yet whole (the
            # strings hold no brace: each "}" ends an element). One may come out at its
            # comma, before the next head: the exact scanner knows it is whole.
            assert prefix.count(HEAD) <= got <= prefix.count(b"}"), (prefix, got)


def test_a_head_split_anywhere_is_found() -> None:
    first = b'[{"k":0},{"k":1},{"k":22}'
    rest = b',{"k":3}]'
    for split in range(1, len(HEAD)):
        framer = ArrayFramer()
        # Learned the head at the first comma, and cut at its last whole one.
        assert framer.feed(first) == b'[{"k":0},{"k":1}]'
        assert framer.feed(rest[:split]) is None
        assert framer.feed(rest[split:]) == b'[{"k":22}]', split
        assert framer.close() == b'[{"k":3}]'


def test_a_head_split_over_many_small_chunks_is_found() -> None:
    body = b'[{"k":0},{"k":1},{"k":2},{"k":3},{"k":4}]'
    for size in (1, 2, 3):
        framer = ArrayFramer()
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        runs = [framer.feed(p) for p in parts]
        runs.append(framer.close())
        # One element at a time: each as soon as the next head is whole.
        got = [msgspec.json.decode(r) for r in runs if r is not None]
        assert got == [[{"k": i}] for i in range(5)], (size, runs)
