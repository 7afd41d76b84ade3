"""Call sites of ``client.with_json`` as mypy must see them: checked by test_views.py.

Never run: mypy --strict reads it, and each ``assert_type`` states the type one shape of
method has through the view. ``warn_unused_ignores`` (strict) makes the ignored lines
assertions too: a misspelt argument must stay an error.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from typing import assert_type

from asyncsports import AsyncList, Change, Client, RawRecord
from asyncsports.live import Feed
from asyncsports.models import (
    Action,
    Event,
    Fixture,
    Playback,
    PlayerImage,
    Squad,
    Standings,
    Statistics,
    Tournament,
)


async def calls(client: Client, fid: uuid.UUID) -> None:
    v = client.with_json
    assert_type(v.actions.list("soccer", fid), AsyncList[RawRecord[Action]])
    assert_type(v.fixtures.list("soccer", page_size=5, lookahead=2), AsyncList[RawRecord[Fixture]])
    assert_type(v.squads.list("soccer", season_id=fid), AsyncList[RawRecord[Squad]])
    assert_type(v.snooker.tournaments(season_id=1), AsyncList[RawRecord[Tournament]])
    assert_type(v.events.list(live=True), AsyncList[RawRecord[Event]])
    assert_type(await v.fixtures.get("soccer", fid), RawRecord[Fixture])
    assert_type(await v.statistics.get("soccer", fid), RawRecord[Statistics])
    assert_type(await v.events.playback(7), RawRecord[Playback])
    assert_type(await v.snooker.player_info(1, 2), RawRecord[PlayerImage])
    assert_type(await v.standings.get("soccer", season_id=fid), list[RawRecord[Standings]])
    assert_type(v.actions.follow("soccer", fid), AsyncGenerator[Change[RawRecord[Action]], None])
    assert_type(v.events.watch(interval=1.0), AsyncGenerator[Change[RawRecord[Event]], None])
    assert_type(v.live.actions("soccer", fid, start_position=3), Feed[RawRecord[Action]])
    assert_type(v.live.statistics("soccer", fid), Feed[RawRecord[Statistics]])
    async for action, json in v.actions.list("soccer", fid, extra_query={"subscribed": "true"}):
        assert_type(action, Action)
        assert_type(json, bytes)
    v.fixtures.list("soccer", sizee=3)  # type: ignore[call-arg]
    v.actions.list("soccer", fid, extra_query=1)  # type: ignore[arg-type]
    client.actions.list("soccer", fid, raw=True)  # type: ignore[call-arg]
