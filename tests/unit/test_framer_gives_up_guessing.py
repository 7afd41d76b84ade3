"""A wrong guess is taken back and that stretch framed exactly at once; the framer gives up
guessing for a body after eight wrong guesses, unless they are at most one in four."""

from __future__ import annotations

import msgspec
import pytest

from asyncsports.jsonstream import ArrayFramer

GOOD = b'},{"k":1'  # ends the element before and starts one: the guess is right
BAD = b'},{"k":2,"c":[0,{"k":0'  # the last head is inside a nested list: a wrong guess
CLOSE = b'}]},{"k":3'  # ends the nested element: right again


def step(framer: ArrayFramer, chunk: bytes) -> bool:
    """Feed ``chunk`` and check the run as a caller with ``verify=False`` does: whether
    the guess was wrong (and taken back)."""
    run = framer.feed(chunk)
    assert run is not None and framer.guessed
    try:
        msgspec.json.decode(run)
    except msgspec.DecodeError:
        again = framer.retract()
        assert again is not None and msgspec.json.decode(again)  # the exact cut, at once
        assert not framer.guessed
        with pytest.raises(RuntimeError) as info:
            framer.retract()
        assert str(info.value) == "retract() takes back a guessed run; the last run was not one"
        return True
    return False


def started() -> ArrayFramer:
    framer = ArrayFramer(verify=False)
    assert framer.feed(b'[{"k":0},{"k":0') == b'[{"k":0}]'  # learned, not a guess
    assert framer.head == b',{"k":' and not framer.guessed
    return framer


def test_a_wrong_guess_is_reframed_at_once() -> None:
    framer = started()
    assert not step(framer, GOOD)
    run = framer.feed(BAD)
    assert run == b'[{"k":1},{"k":2,"c":[0]'
    assert framer.retract() == b'[{"k":1}]'
    assert framer.head == b',{"k":'  # one wrong guess is not enough to give up
    assert framer.feed(CLOSE) == b'[{"k":2,"c":[0,{"k":0}]}]'
    assert framer.guessed


def test_eight_wrong_guesses_in_a_row_give_up_guessing() -> None:
    framer = started()
    for n in range(1, 9):
        assert step(framer, BAD)
        if n < 8:
            assert framer.head == b',{"k":', n
            assert not step(framer, CLOSE)
    assert framer.head is None
    # Exact framing from here on, which also finds the array's end at once.
    assert framer.feed(b'}]},{"k":9}]') == b'[{"k":2,"c":[0,{"k":0}]},{"k":9}]'
    assert not framer.guessed
    assert framer.close() is None


@pytest.mark.parametrize(("extra", "gives_up"), [(0, True), (1, False)])
def test_one_wrong_guess_in_four_keeps_guessing(extra: int, gives_up: bool) -> None:
    framer = started()
    for _ in range(extra):
        assert not step(framer, GOOD)
    for n in range(1, 9):
        # Three right guesses to each wrong one: at the eighth wrong guess, 31 guesses
        # in all (give up: 8 * 4 > 31) or, with one right guess more, 32 (keep on).
        assert not step(framer, GOOD)
        assert not step(framer, GOOD)
        assert step(framer, BAD)
        if n < 8:
            assert not step(framer, CLOSE)
    assert (framer.head is None) is gives_up
