"""Where a decode failure is: a path through dict keys msgspec leaves as ``[...]``, and
a failure in a run of elements that names no element."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from asyncsports._wire.decoding import Source, locate, run_error, split_message


class Point(msgspec.Struct):
    n: int


@pytest.mark.parametrize(
    ("tp", "doc", "path", "value"),
    [
        # A key under a key: each is chosen by what the rest of the path reaches.
        (dict[str, dict[str, int]], {"a": {"x": 1}, "b": {"y": "s"}}, '$["b"]["y"]', "s"),
        # Lists too short and members missing rule keys out on the way.
        (
            dict[str, list[Point]],
            {"a": [], "b": [{"n": 1}, {"n": "z"}], "c": [{"m": 1}, 5]},
            '$["b"][1].n',
            "z",
        ),
        (dict[str, Point], {"a": {"n": 1}, "b": {"n": "q"}, "c": 5}, '$["b"].n', "q"),
    ],
)
def test_a_failure_under_dict_keys_is_located_by_key(
    tp: Any, doc: Any, path: str, value: Any
) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.convert(doc, tp)
    reason, at = split_message(str(caught.value))
    assert "[...]" in at
    assert locate(doc, at, reason) == (path, value)


def test_a_key_that_does_not_single_out_one_value_stops_the_walk() -> None:
    doc = {"a": {"n": "x"}, "b": {"n": "y"}}
    assert locate(doc, "$[...].n", "Expected `int`, got `str`") == ("$[...].n", doc)


def test_a_failure_in_a_run_that_names_no_element_points_at_the_run() -> None:
    run = b'[{"n":1},{"n":2}]'
    failure = msgspec.ValidationError("Expected `array`, got `object`")
    err = run_error(Source("Point"), failure, run, offset=10, path="$.data", index=4)
    assert (err.path, err.offset) == ("$.data", 10)
    assert err.snippet == '{"n":1},{"n":2}'
    assert err.reason == "Expected `array`, got `object`"
