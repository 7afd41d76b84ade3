"""The models' seldom-met paths: flags read on the class, hooks for types not taught,
standings under both team-statistics names, advanced statistics that are not an object,
and version-1 metadata that is not an object."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
import pytest

from asyncsports.models import AdvancedSportStatistics, Standings, Statistics, TeamRef, decoder
from asyncsports.models._types import (
    Flag,
    dec_hook,
    enc_hook,
    loose_bool,
    register_hooks,
)
from asyncsports.models.actions import _capitalised

FIXTURE = str(uuid.UUID(int=1))


@pytest.mark.parametrize(
    ("given", "read"),
    [(True, True), (False, False), (None, None), (" Yes", True), ("0", False), ("null", None)],
)
def test_a_flag_reads_booleans_as_they_are_and_text_loosely(given: Any, read: Any) -> None:
    assert loose_bool(given) is read


def test_a_flag_read_on_the_class_is_its_descriptor() -> None:
    assert isinstance(TeamRef.home_team, Flag)
    assert TeamRef(id=uuid.UUID(int=2), _home_team="true").home_team is True


class Unknown:
    pass


def test_a_type_without_hooks_is_refused_both_ways() -> None:
    with pytest.raises(NotImplementedError, match="no decoder for"):
        dec_hook(Unknown, {})
    with pytest.raises(NotImplementedError, match="cannot encode Unknown"):
        enc_hook(Unknown())


def test_a_type_taught_to_decode_only_still_cannot_encode(monkeypatch: pytest.MonkeyPatch) -> None:
    from asyncsports.models import _types

    monkeypatch.setattr(_types, "_DECODE_HOOKS", dict(_types._DECODE_HOOKS))
    monkeypatch.setattr(_types, "_ENCODE_HOOKS", dict(_types._ENCODE_HOOKS))
    register_hooks(Unknown, lambda obj: Unknown())
    assert isinstance(dec_hook(Unknown, 1), Unknown)
    with pytest.raises(NotImplementedError):
        enc_hook(Unknown())


def test_standings_take_team_statistics_under_either_name_the_plural_first() -> None:
    one = {"teamId": str(uuid.UUID(int=3))}
    old = decoder(Standings).decode(msgspec.json.encode({"teamStatistics": [one]}))
    assert len(old.teams_statistics) == 1
    both = decoder(Standings).decode(
        msgspec.json.encode({"teamsStatistics": [one, one], "teamStatistics": [one]})
    )
    assert len(both.teams_statistics) == 2


def test_advanced_statistics_compare_by_their_raw_object() -> None:
    a = AdvancedSportStatistics({"x": 1})
    assert a == AdvancedSportStatistics({"x": 1})
    assert a != {"x": 1}
    assert a.__eq__({"x": 1}) is NotImplemented


def test_advanced_statistics_that_are_not_an_object_fail_the_decode() -> None:
    packet = {"fixtureId": FIXTURE, "advancedSportStatistics": [1, 2]}
    with pytest.raises(msgspec.ValidationError, match="Expected `object`, got `list`"):
        decoder(Statistics).decode(msgspec.json.encode(packet))


@pytest.mark.parametrize(
    ("buf", "capitalised"),
    [(b' {"Lat": 1}', True), (b'{"lat": 1}', False), (b"[1]", False), (b"{}", False)],
)
def test_version_1_metadata_is_told_by_its_first_key(buf: bytes, capitalised: bool) -> None:
    assert _capitalised(buf) is capitalised
