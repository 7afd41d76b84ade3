"""A secret in a request's own query (``extra_query``) shows nowhere: not in a span's
``url.full`` (redacted, the rest of the URL intact), another attribute, an event, a
status, a metric's attributes, nor a log line of a live feed's reconnect (issue 33,
point 1: dropping the redaction of ``url.full`` passed the suite, whose traced requests
carried no secret of their own).

A query parameter is a secret by its name (asyncsports._wire.secrets.is_credential):
``api_key``, ``auth`` and ``signature`` are; ``lang`` is not.
"""

from __future__ import annotations

import logging
import urllib.parse

import pytest
from support.hostile_servers import Conn, Timeline, raw_server, serve_rest
from support.live import fixture_id

from asyncsports import AuthenticationError, RetryPolicy
from asyncsports.emulator import Emulator

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan
from support import telemetry as support_telemetry
from support.telemetry import Telemetry

QUERY = {"api_key": "k3y-0f-the-test-4417", "auth": "auth-0f-the-test-9023", "lang": "en"}
SECRETS = [QUERY["api_key"], QUERY["auth"]]
FAST = RetryPolicy(max_retries=3, base=0.01, cap=0.05)


traced = pytest.fixture(support_telemetry.telemetry)


def _nowhere(texts: list[str]) -> None:
    for secret in SECRETS:
        assert not [t for t in texts if secret in t], secret


def _full(span: ReadableSpan) -> tuple[str, dict[str, str]]:
    """An attempt span's ``url.full``: without its query, and the query."""
    url = str((span.attributes or {})["url.full"])
    parts = urllib.parse.urlsplit(url)
    return url.partition("?")[0], dict(urllib.parse.parse_qsl(parts.query))


async def test_url_full_of_every_attempt_has_the_secrets_of_its_own_query_redacted(
    sports_emulator: Emulator, traced: Telemetry
) -> None:
    emu = sports_emulator
    emu.faults.add("fixtures", status=503, retry_after=0, times=1)  # a failed attempt too
    async with traced.client(emu, retry=FAST) as client:
        listed = await client.fixtures.list("basketball", extra_query=QUERY).collect()
        fid = listed[0].id
        await client.fixtures.get("basketball", fid, extra_query=QUERY)
        await client.events.list(extra_query={"signature": QUERY["auth"]}).collect()
    attempts = [s for s in traced.spans() if "url.full" in (s.attributes or {})]
    assert {s.name for s in attempts} == {
        "GET /{sport}/fixtures",
        "GET /{sport}/fixtures/{fixtureId}",
        "GET /api/v2/streaming/events",
    }
    assert any(s.status.description for s in attempts)  # the 503's
    for span in attempts:
        where, query = _full(span)
        if span.name == "GET /api/v2/streaming/events":
            assert where.endswith("/api/v2/streaming/events") and query["signature"] == "***"
            continue
        # The secrets redacted; the address, path and every other parameter as sent.
        path = "/basketball/fixtures" + (f"/{fid}" if "fixtureId" in span.name else "")
        assert where == emu.base_url + path
        assert {k: query[k] for k in QUERY} == {"api_key": "***", "auth": "***", "lang": "en"}
    _nowhere(traced.texts())


@pytest.mark.emulator(live_heartbeat=0.2)
async def test_a_live_feed_reconnecting_shows_its_own_query_secrets_nowhere(
    sports_emulator: Emulator, traced: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    """A connection dropped after 5 records: the reconnect's span event and its log line
    name the connection's URL with the secrets hidden."""
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    emu = sports_emulator
    emu.faults.live("drop", feed="actions", after=5)
    async with traced.client(emu, retry=FAST) as client:
        fid = await fixture_id(client, "completed")
        feed = client.live.actions("basketball", fid, replay="fast", extra_query=QUERY)
        async with feed:
            got = [a async for a in feed]
    assert feed.finished and feed.connections == 2 and len(got) > 5
    connections = [s for s in traced.spans() if s.name == "asyncsports.live.connection"]
    assert len(connections) == 2 and connections[0].events  # the reconnect's reason
    _nowhere(traced.texts())
    _logged_hidden(caplog, "retrying live feed")


async def test_a_refused_live_handshake_logs_its_url_with_the_secrets_hidden(
    sports_emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    """The handshake's refusal (a 503) is retried: its log line and the error behind it
    name the URL with the secrets hidden."""
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with sports_emulator.client() as c:
        fid = await fixture_id(c, "completed")
        tl = await Timeline.of(c, "basketball", fid)
    rest = serve_rest(tl)

    async def script(conn: Conn) -> None:
        if conn.index == 0:
            await conn.refuse(503, "Service Unavailable", {"Retry-After": "0"})
        else:
            await rest(conn)

    async with (
        raw_server(script) as server,
        sports_emulator.client(live_url=server.url, retry=FAST) as client,
    ):
        feed = client.live.actions("basketball", fid, extra_query=QUERY)
        async with feed:
            got = [a async for a in feed]
    assert feed.finished and len(got) == len(tl) and server.starts == [0, 0]
    assert server.conns[1].query["auth"] == QUERY["auth"]  # sent as it is
    _logged_hidden(caplog, "retrying GET ws://")


def _logged_hidden(caplog: pytest.LogCaptureFixture, what: str) -> None:
    """No log line holds a secret; the ``what`` line names the URL, secrets as ``***``."""
    lines = [r.getMessage() for r in caplog.records]
    _nowhere(lines)
    [line] = [m for m in lines if m.startswith(what)]
    assert "api_key=***" in line and "auth=***" in line and "lang=en" in line, line


async def test_a_live_server_echoing_a_secret_of_the_feeds_own_query_has_it_hidden(
    sports_emulator: Emulator, traced: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    """A refusal that quotes the feed's ``api_key``: the error raised, the call's span and
    the logs show it hidden, as a REST answer quoting a request's own secret is."""
    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with sports_emulator.client() as c:
        fid = await fixture_id(c, "completed")

    async def script(conn: Conn) -> None:
        await conn.accept()
        key = conn.query["api_key"]
        await conn.send(f"{{The supplied authentication is invalid with api key {key}}}".encode())
        await conn.close(1008)

    async with (
        raw_server(script) as server,
        traced.client(sports_emulator, live_url=server.url, retry=FAST) as client,
    ):
        feed = client.live.actions("basketball", fid, extra_query=QUERY)
        with pytest.raises(AuthenticationError) as caught:
            async with feed:
                [a async for a in feed]
    error = caught.value
    assert "supplied authentication is invalid with api key ***" in str(error)
    _nowhere([str(error), repr(error), *map(str, vars(error).values())])
    _nowhere(traced.texts())
    _nowhere([r.getMessage() for r in caplog.records])
