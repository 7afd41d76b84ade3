"""A token the service echoes in a wrongly typed field shows in no clipped text (issue 41,
point 5): the decode error's snippet is clipped to 200 characters, and a token cut there
showed its head (up to 30 of 53 characters) in the error, the command's line and the span,
since the clip's "..." kept the cut head from matching. The token is put at every place
around the cut; no 8 characters of it may show.
"""

from __future__ import annotations

import logging
import pickle
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.live import serve as live_server
from support.samples import FIXTURE, FIXTURE_ID
from support.stub import Serve

from asyncsports import Client, RetryPolicy
from asyncsports.cli.messages import describe
from asyncsports.errors import DecodeError

pytest.importorskip("opentelemetry.sdk")

from support import telemetry as support_telemetry
from support.telemetry import Telemetry

TOKEN = "tok-" + "5f0c1e9a7b3d" * 4 + "x"  # 53 characters, as the issue's
FAST = RetryPolicy(max_retries=0, base=0.0, cap=0.0)

traced = pytest.fixture(support_telemetry.telemetry)


def pieces(secret: str) -> set[str]:
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def surfaces(error: BaseException) -> str:
    parts: list[Any] = [str(error), repr(error), error.args, vars(error), describe(error)]
    parts.append(repr(pickle.loads(pickle.dumps(error))))
    return " ".join(map(str, parts))


@pytest.fixture
def spans(traced: Telemetry) -> Iterator[Telemetry]:
    yield traced


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(at=st.integers(0, 260), streamed=st.booleans())
@example(at=170, streamed=False)
@example(at=150, streamed=True)
async def test_a_token_cut_by_a_snippet_s_clip_shows_nowhere(
    serve: Serve, spans: Telemetry, at: int, streamed: bool
) -> None:
    spans.exporter.clear()

    async def handler(request: web.Request) -> web.Response:
        token = request.headers["Authorization"].removeprefix("Bearer ")
        # A field of the wrong type (a string for a bool) holding the token at ``at``.
        wrong = "x" * at + token + "y" * 300
        if streamed:
            return web.json_response([{"id": 1, "name": wrong, "homeTeam": wrong}])
        return web.json_response({**FIXTURE, "fixtureDeleted": wrong})

    url = await serve(handler)
    async with Client(url, token=TOKEN, retry=FAST) as client:
        from asyncsports.telemetry import instrument

        instrument(client, tracer_provider=spans.tracer_provider)
        with pytest.raises(DecodeError) as caught:
            if streamed:
                await client.squads.list("cricket", season_id="2023").collect()
            else:
                await client.fixtures.get("basketball", FIXTURE_ID)
    texts = [surfaces(caught.value), *spans.texts()]
    for span in spans.spans():
        texts += [repr(e.attributes) for e in span.events]
    assert [p for p in pieces(TOKEN) for t in texts if p in t] == [], texts[0]


@pytest.mark.parametrize("at", [150, 170, 178, 190])
async def test_a_live_message_of_unknown_shape_quoting_the_token_shows_none_of_it(
    caplog: pytest.LogCaptureFixture, at: int
) -> None:
    """A message of unknown shape is logged once, clipped: the token it quotes is hidden
    before the clip, wherever the clip cuts it."""
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    fid = uuid.UUID(int=9)
    action = {"actionId": str(uuid.UUID(int=1)), "fixtureId": str(fid), "fixtureSeqNum": 1}

    async def odd(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        token = (await ws.receive_json())["authToken"]
        await ws.send_json({"whatIsThis": "x" * at + token + "y" * 300})
        await ws.send_json({"fixtureAction": action, "finished": True})
        await ws.close()
        return ws

    async with (
        live_server(odd, f"/basketball/fixtures/{fid}/actions") as url,
        Client(url, token=TOKEN, live_url="ws" + url[4:]) as client,
    ):
        got = [r async for r in client.live.actions("basketball", fid)]
    assert got and got[-1].finished
    logged = [r.getMessage() for r in caplog.records]
    assert any("unknown shape" in m for m in logged)
    assert [p for p in pieces(TOKEN) for m in logged if p in m] == [], logged
