"""A server that echoes the client's secrets back: none of them is shown or kept.

Every surface of an error is searched (``str``, ``repr``, ``args``, ``message``, ``body``,
``headers``, ``snippet``) and every log record. Removing the redaction (``Secrets``
in asyncsports.errors, applied by the session) makes these tests fail.
"""

from __future__ import annotations

import logging
import pickle
import urllib.parse
from typing import Any

import msgspec
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from support.samples import FIXTURE_ID
from support.stub import Serve

from asyncsports import Client, RetryPolicy, StreamingCredentials
from asyncsports._wire.secrets import hide_urls
from asyncsports.errors import (
    AsyncSportsError,
    AuthenticationError,
    DecodeError,
    Secrets,
    ServerError,
)

TOKEN = "tok-7f3a9c2e-echoed"
AUTH = "stream-auth-5d1e"
SECRET = "op-secret-7781xq"
FAST = RetryPolicy(max_retries=2, base=0.0, cap=0.0)


def surfaces(error: BaseException) -> str:
    """Everything an error shows or keeps, as one text."""
    parts: list[Any] = [str(error), repr(error), error.args, vars(error)]
    parts.append(repr(pickle.loads(pickle.dumps(error))))
    return " ".join(map(str, parts))


def leaked(text: str, *secrets: str) -> list[str]:
    found = []
    for secret in secrets:
        for form in (secret, urllib.parse.quote(secret, safe=""), secret[:8], secret[-8:]):
            if form in text:
                found.append(form)
    return found


def echo(status: int, *, text: bool = False) -> Any:
    """A handler that quotes the request's bearer token and stream auth back."""

    async def handler(request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        auth = request.query.get("auth", "")
        said = f"Invalid token {token}{' auth ' + auth if auth else ''}"
        headers = {"WWW-Authenticate": f'Bearer error="invalid_token", token="{token}"'}
        if auth:
            headers["X-Echo"] = f"auth={auth}&again={auth}"
        if text:
            return web.Response(status=status, text=f"<p>{said}</p>", headers=headers)
        body = {"error": said, "status": status, "detail": {"seen": [token, auth]}}
        return web.json_response(body, status=status, headers=headers)

    return handler


async def test_a_401_that_echoes_the_token_keeps_no_trace_of_it(serve: Serve) -> None:
    url = await serve(echo(401))
    async with Client(url, token=TOKEN, retry=FAST) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.fixtures.get("basketball", FIXTURE_ID)
    error = caught.value
    assert error.message.startswith("Invalid token ***")
    assert error.body["detail"]["seen"][0] == "***"
    assert "***" in error.headers["WWW-Authenticate"]
    assert leaked(surfaces(error), TOKEN) == []


async def test_a_token_from_a_callable_is_hidden_too(serve: Serve) -> None:
    url = await serve(echo(401, text=True))
    async with Client(url, token=lambda: TOKEN, retry=FAST) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.statistics.get("basketball", FIXTURE_ID)
    assert "Invalid token ***" in str(caught.value)
    assert leaked(surfaces(caught.value), TOKEN) == []


async def test_retrying_log_records_hold_no_secret(
    serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    url = await serve(echo(503))
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with Client(url, token=TOKEN, retry=FAST) as client:
        with pytest.raises(ServerError) as caught:
            await client.fixtures.get("basketball", FIXTURE_ID)
    retrying = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retrying) == 2
    for record in caplog.records:
        text = record.getMessage() + repr(record.args) + repr(record.__dict__)
        assert leaked(text, TOKEN) == [], record.getMessage()
    assert "Invalid token ***" in retrying[0].getMessage()
    assert leaked(surfaces(caught.value), TOKEN) == []


@pytest.mark.parametrize("status", [403, 500])
async def test_stream_credentials_echoed_are_hidden(
    serve: Serve, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    url = await serve(echo(status))
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    fixed = StreamingCredentials(9, AUTH, 1700000000000)
    signed = StreamingCredentials.from_secret(9, SECRET, "1.2.3.4")
    for creds in (fixed, signed):
        async with Client(
            url, streaming_url=url, streaming_credentials=creds, retry=FAST
        ) as client:
            with pytest.raises(AsyncSportsError) as caught:
                await client.events.list().collect()
        text = surfaces(caught.value) + " ".join(r.getMessage() for r in caplog.records)
        assert leaked(text, AUTH, SECRET) == []
        # The signed token is made afresh for each request; none is left in the error.
        assert " auth ***" in str(caught.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.fixtures.get("basketball", FIXTURE_ID),  # a whole body
        lambda c: c.squads.list("cricket", season_id="2023").collect(),  # read as it comes
        lambda c: c.snooker.current_tournament_winner(1),
        lambda c: c.standings.get("soccer", season_id="s"),
    ],
)
async def test_a_decode_error_quoting_the_token_hides_it(serve: Serve, call: Any) -> None:
    async def handler(request: web.Request) -> web.Response:
        token = request.headers["Authorization"].removeprefix("Bearer ")
        # Valid JSON of the wrong shape: the snippet quotes the offending value.
        return web.json_response([token])

    url = await serve(handler)
    async with Client(url, token=TOKEN, retry=FAST) as client:
        with pytest.raises(DecodeError) as caught:
            await call(client)
    assert leaked(surfaces(caught.value), TOKEN) == []


async def test_a_page_quoting_the_token_in_a_decode_error_hides_it(serve: Serve) -> None:
    async def handler(request: web.Request) -> web.Response:
        token = request.headers["Authorization"].removeprefix("Bearer ")
        return web.Response(text=f"<html>signed in as {token}</html>")

    url = await serve(handler)
    async with Client(url, token=TOKEN, retry=FAST) as client:
        with pytest.raises(DecodeError) as caught:
            await client.fixtures.get("basketball", FIXTURE_ID)
    assert "signed in as ***" in caught.value.snippet
    assert leaked(surfaces(caught.value), TOKEN) == []


# ---------------------------------------------------------------- Secrets itself

SECRETS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=8)


@given(SECRETS, st.text(), st.text())
def test_a_secret_anywhere_in_a_text_is_hidden(secret: str, before: str, after: str) -> None:
    text = Secrets([secret]).text(before + secret + after)
    assert secret not in text and "***" in text


@given(SECRETS, st.text(max_size=20), st.integers(6, 40))
def test_a_secret_clipped_at_either_end_is_hidden(secret: str, other: str, cut: int) -> None:
    cut = min(cut, len(secret) - 1)
    shown = Secrets([secret])
    assert secret[:cut] not in shown.text(other + secret[:cut])[len(other) :]
    assert secret[-cut:] not in shown.text(secret[-cut:] + other)[:cut]


@given(st.text(max_size=7), st.text())
def test_short_values_are_not_looked_for(value: str, text: str) -> None:
    # Only what the policy hides by name (a URL's password, a credential's value) changes.
    assert Secrets([value, None]).text(text) == hide_urls(text)


def test_scrub_cleans_nested_bodies_and_headers_in_place() -> None:
    error = AuthenticationError(
        401,
        f"bad {TOKEN}",
        body={"a": [TOKEN, {"b": (f"x{TOKEN}y",)}], TOKEN: 1},
        headers={"WWW-Authenticate": TOKEN},
    )
    assert Secrets([TOKEN]).scrub(error) is error
    assert error.message == "bad ***" and error.args == (401, "bad ***")
    assert error.body == {"a": ["***", {"b": ["x***y"]}], "***": 1}
    assert error.headers == {"WWW-Authenticate": "***"}


def test_a_body_nested_deeper_than_recursion_goes_is_scrubbed() -> None:
    body: Any = [TOKEN]
    for _ in range(5000):
        body = {"a": body}
    error = ServerError(500, "x", body=body)
    Secrets([TOKEN]).scrub(error)
    try:
        shown = msgspec.json.encode(error.body).decode()
    except RecursionError:  # Python 3.11: msgspec recurses on the C stack Python counts
        shown = "(too deep)"
    # Looked through and hidden, or (where even msgspec cannot go that deep) not kept.
    assert shown.count("***") == 1 or error.body == "(not shown: too deep to check for secrets)"
    assert TOKEN not in shown


async def test_a_live_connections_reason_is_hidden_in_the_retrying_record(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The live feeds hand their connection's end to Session.act, as requests do.
    from asyncsports._wire.retry import Call, Decision

    creds = StreamingCredentials(9, AUTH, 1700000000000)
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with Client("http://127.0.0.1:9", token=TOKEN, streaming_credentials=creds) as client:
        session = client._session
        why = f"closed by the server (1008, Invalid token {TOKEN} / {AUTH})"
        await session.act(Decision("retry", 0.0), Call(), "ws://x", why, TOKEN, "live feed")
        assert session.hide(why) == "closed by the server (1008, Invalid token *** / ***)"
    [record] = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert "Invalid token *** / ***" in record.getMessage()
    assert leaked(record.getMessage() + repr(record.args), TOKEN, AUTH) == []


@pytest.mark.parametrize("how", ["error message", "close reason", "warning"])
async def test_a_live_server_that_echoes_the_token_never_shows_it(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    fid = FIXTURE_ID
    path = f"/basketball/fixtures/{fid}/actions"

    async def echo(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        token = msgspec.json.decode((await ws.receive()).data)["authToken"]
        if how == "error message":
            await ws.send_json({"message": f"Invalid token {token}", "level": "ERROR"})
        elif how == "warning":
            await ws.send_json({"message": f"No fixture for {token}", "level": "WARN"})
        await ws.close(code=4001, message=f"bad {token}"[:100].encode())
        return ws

    async def fixtures(request: web.Request) -> web.Response:
        body = {"message": f"unknown fixture for token {TOKEN}"}
        return web.json_response(body, status=404)

    caplog.set_level(logging.DEBUG, logger="asyncsports")
    app = web.Application()
    app.router.add_get(path, echo)
    app.router.add_get(f"/basketball/fixtures/{fid}", fixtures)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        with pytest.raises(AsyncSportsError) as caught:
            async with (
                Client(url, token=TOKEN, live_url="ws" + url[4:], retry=FAST) as c,
                c.live.actions("basketball", fid) as feed,
            ):
                async for _ in feed:
                    pass
    finally:
        await runner.cleanup()
    assert TOKEN not in surfaces(caught.value)
    assert TOKEN not in "\n".join(r.getMessage() for r in caplog.records)
