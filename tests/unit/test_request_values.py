"""Requests as values, and the argument checks' less travelled refusals."""

from __future__ import annotations

import datetime as dt

import pytest

from asyncsports._http import sports
from asyncsports._http.request import Request, date, extra_headers, segment
from asyncsports._http.sports import Sport, sport_path


def test_a_request_equals_only_a_request_of_the_same_parts() -> None:
    one = Request("/basketball/fixtures", (("page", "2"),))
    assert one == Request("/basketball/fixtures", (("page", "2"),))
    assert one != Request("/basketball/fixtures", (("page", "3"),))
    assert one != "/basketball/fixtures?page=2"  # not a Request: not equal, not an error
    assert one.__eq__(object()) is NotImplemented


@pytest.mark.parametrize("value", [True, 1.5, None, b"42"])
def test_an_id_of_another_type_is_a_type_error_naming_the_argument(value: object) -> None:
    with pytest.raises(TypeError, match=r"^fixture_id: expected a str, int or UUID, got "):
        segment("fixture_id", value)


def test_a_naive_datetime_is_taken_as_it_is_and_an_aware_one_in_utc() -> None:
    assert date("day", dt.datetime(2024, 3, 1, 23, 30)) == "2024-03-01"
    late = dt.datetime(2024, 3, 1, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2)))
    assert date("day", late) == "2024-03-02"


def test_headers_that_are_not_a_mapping_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"^extra_headers: expected a mapping, got list$"):
        extra_headers([("X-A", "1")])
    assert extra_headers(None) == ()


def test_a_sport_path_is_remembered_only_for_plain_names(monkeypatch: pytest.MonkeyPatch) -> None:
    kept: dict[str, str] = {}
    monkeypatch.setattr(sports, "_SPORT_PATHS", kept)

    class Name(str):
        pass

    assert sport_path(Name("Ice Hockey")) == "/ice-hockey"
    assert kept == {}  # a str subclass may hash as it likes: not a key
    assert sport_path(Sport.BASKETBALL) == "/basketball"
    assert kept == {Sport.BASKETBALL: "/basketball"}


def test_a_full_sport_path_cache_still_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    full = {f"sport{i}": f"/sport{i}" for i in range(sports._SPORT_PATHS_KEPT)}
    monkeypatch.setattr(sports, "_SPORT_PATHS", full)
    assert sport_path("v2/Volleyball") == "/v2/volleyball"
    assert "v2/Volleyball" not in full and len(full) == sports._SPORT_PATHS_KEPT


def test_a_request_hashes_as_it_compares_and_shows_no_credential() -> None:
    one = Request("/a", (("api_key", "s3cret"), ("page", "1")), headers=(("X-Key", "v"),))
    assert hash(one) == hash(
        Request("/a", (("api_key", "s3cret"), ("page", "1")), headers=(("X-Key", "v"),))
    )
    assert len({one, Request("/a")}) == 2
    shown = repr(one)
    assert "s3cret" not in shown and "'v'" not in shown
    assert shown == (
        "Request(path='/a', params=(('api_key', '***'), ('page', '1')), host='data', "
        "headers=['X-Key'])"
    )
    assert repr(Request("/a")) == "Request(path='/a', params=(), host='data')"
