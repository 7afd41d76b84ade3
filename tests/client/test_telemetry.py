"""asyncsports.telemetry against the emulator: spans and metrics read back through the
OpenTelemetry SDK's in-memory exporter and reader."""

from __future__ import annotations

import functools
import math
import subprocess
import sys
from typing import Any

import pytest

from asyncsports import AuthenticationError, Client, MissingDependencyError
from asyncsports.emulator import Emulator
from asyncsports.paging import AsyncList
from asyncsports.resources import FixturesResource
from asyncsports.telemetry import instrument

otel_sdk = pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from support import telemetry as support_telemetry  # noqa: E402
from support.telemetry import Telemetry  # noqa: E402

NAMESPACES = ("fixtures", "squads", "actions", "standings", "statistics", "snooker")
NAMESPACES += ("events", "live")
# Merging makes no call of its own: it takes feeds, each traced as made.
UNTRACED = {"merge"}


telemetry = pytest.fixture(support_telemetry.telemetry)


async def completed(client: Client) -> Any:
    """A completed basketball fixture (the listing closed: no page fetched after)."""
    async with client.fixtures.list("basketball", status="completed") as fixtures:
        return await anext(fixtures)


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


async def test_a_walk_of_five_pages_is_one_call_with_five_attempts(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    async with sports_emulator.client() as plain:
        total = len(await plain.fixtures.list("basketball").collect())
    size = math.ceil(total / 5)
    assert math.ceil(total / size) == 5
    # 5 requests a second: each page after the first waits for its turn (~0.2 s apart,
    # longer than a page takes even on a loaded machine).
    async with telemetry.client(sports_emulator, rate_limit=5) as client:
        got = await client.fixtures.list("basketball", page_size=size).collect()
    assert len(got) == total
    spans = telemetry.spans()
    [call] = telemetry.spans("asyncsports.fixtures.list")
    attempts = children(spans, call)
    assert len(attempts) == 5 and len(spans) == 6
    for span in attempts:
        a = span.attributes or {}
        assert span.name == "GET /{sport}/fixtures"
        assert a["http.request.method"] == "GET" and a["url.template"] == "/{sport}/fixtures"
        assert a["http.response.status_code"] == 200 and a["http.response.body.size"] > 0
        assert a["server.address"] == "127.0.0.1" and a["server.port"] > 0
        assert "http.request.resend_count" not in a
    waits = [(s.attributes or {}).get("asyncsports.rate_limit.wait", 0.0) for s in attempts]
    assert sum(w > 0.02 for w in waits) >= 3  # pages 2 to 5 waited for their turn
    assert call.start_time is not None and call.end_time is not None
    assert all(call.start_time <= (s.start_time or 0) <= call.end_time for s in attempts)
    metrics = telemetry.metrics()
    [duration] = metrics["http.client.request.duration"]
    assert duration.count == 5
    assert sum(p.sum for p in metrics["asyncsports.client.rate_limit.wait"]) > 0.1


async def test_a_get_is_one_call_with_its_attempt_under_it(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    async with telemetry.client(sports_emulator) as client:
        fixture = await completed(client)
        telemetry.exporter.clear()
        assert (await client.fixtures.get("basketball", fixture.id)).id == fixture.id
        await client.with_json.fixtures.get("basketball", fixture.id)
    calls = telemetry.spans("asyncsports.fixtures.get")
    assert len(calls) == 2
    for call in calls:
        [attempt] = children(telemetry.spans(), call)
        assert (attempt.attributes or {})["url.template"] == "/{sport}/fixtures/{fixtureId}"
        assert str(fixture.id) in str((attempt.attributes or {})["url.full"])


@pytest.mark.emulator(seed=3)
async def test_a_retried_429_shows_its_resend_and_the_metric(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    sports_emulator.faults.add("statistics", status=429, retry_after=0.05, times=1)
    async with telemetry.client(sports_emulator) as client:
        fixture = await completed(client)
        await client.statistics.get("basketball", fixture.id)
    [call] = telemetry.spans("asyncsports.statistics.get")
    first, second = sorted(children(telemetry.spans(), call), key=lambda s: s.start_time or 0)
    a, b = first.attributes or {}, second.attributes or {}
    assert a["http.response.status_code"] == 429 and a["error.type"] == "429"
    assert "http.request.resend_count" not in a
    assert b["http.response.status_code"] == 200 and b["http.request.resend_count"] == 1
    assert a["url.template"] == "/{sport}/fixtures/{fixtureId}/statistics"
    metrics = telemetry.metrics()
    assert sum(p.value for p in metrics["asyncsports.client.throttled"]) == 1
    assert sum(p.value for p in metrics["asyncsports.client.retries"]) == 1


@pytest.mark.emulator(live_heartbeat=0.2)
async def test_a_live_feed_has_a_span_per_connection_with_its_records_and_reason(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    emu = sports_emulator
    emu.faults.live("drop", feed="actions", after=5)
    async with telemetry.client(emu) as client:
        fixture = await completed(client)
        async with client.live.actions("basketball", fixture.id, replay="fast") as feed:
            got = [a async for a in feed]
    assert feed.connections == 2 and feed.finished
    [call] = telemetry.spans("asyncsports.live.actions")
    assert (call.attributes or {})["asyncsports.live.records"] == len(got)
    first, second = sorted(children(telemetry.spans(), call), key=lambda s: s.start_time or 0)
    assert first.name == second.name == "asyncsports.live.connection"
    a, b = first.attributes or {}, second.attributes or {}
    assert a["url.template"] == "/{sport}/fixtures/{fixtureId}/actions"
    assert a["asyncsports.live.records"] == 5
    assert a["asyncsports.live.records"] + b["asyncsports.live.records"] == len(got)
    [event] = first.events
    assert event.name == "asyncsports.live.reconnect"
    assert "connection" in str((event.attributes or {})["reason"])
    assert not second.events
    metrics = telemetry.metrics()
    assert sum(p.value for p in metrics["asyncsports.live.records"]) == len(got)
    assert sum(p.count for p in metrics["asyncsports.live.lag"]) == len(got)


@pytest.mark.emulator(live_heartbeat=0.2)
async def test_no_secret_in_any_attribute(sports_emulator: Emulator, telemetry: Telemetry) -> None:
    emu = sports_emulator
    emu.faults.add("fixtures", status=401, times=1)  # an error span with a message
    emu.faults.live("drop", feed="statistics", after=2)
    creds = emu.streaming_credentials
    assert creds is not None
    async with telemetry.client(emu) as client:
        with pytest.raises(AuthenticationError):
            await client.fixtures.list("basketball").collect()
        fixture = await completed(client)
        async with client.live.statistics("basketball", fixture.id, replay="fast") as feed:
            assert [p async for p in feed]
        assert await client.events.list().collect() is not None
    spans = telemetry.spans()
    assert {"asyncsports.events.list", "asyncsports.live.statistics"} <= {s.name for s in spans}
    secrets = [emu.token, dict(creds.params())["auth"], "Bearer", "authToken", "signature"]
    secrets += [s for s in (creds.auth, creds.secret) if s]
    texts = [s.name for s in spans]
    for span in spans:
        texts += [f"{k}={v}" for k, v in (span.attributes or {}).items()]
        texts += [span.status.description or ""]
        for event in span.events:
            texts += [f"{k}={v}" for k, v in (event.attributes or {}).items()]
    assert any("api/v2/streaming/events" in t for t in texts)  # the streaming host was traced
    for secret in secrets:
        assert secret and not [t for t in texts if str(secret) in t], secret


async def test_tracing_off_has_no_observer_and_no_spans(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    async with sports_emulator.client() as client:
        assert client._session.observer is None
        assert type(client.fixtures) is FixturesResource
        await client.fixtures.list("basketball").collect()
    assert telemetry.spans() == []


@pytest.mark.slow
def test_import_and_an_untraced_client_import_no_opentelemetry() -> None:
    code = (
        "import sys, asyncsports, asyncsports.telemetry\n"
        "asyncsports.Client('http://127.0.0.1:9', token='t')\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_tracing_true_traces_every_public_method_of_every_namespace() -> None:
    client = Client("http://127.0.0.1:9", token="t", tracing=True)
    observer = client._session.observer
    assert observer is not None
    for name in NAMESPACES:
        resource = getattr(client, name)
        cls = type(resource)
        assert cls.__module__.startswith("asyncsports.resources.")  # no traced subclass
        public = {m for m in vars(cls) if not m.startswith("_") and callable(vars(cls)[m])}
        public -= UNTRACED
        assert public
        for method in public:
            assert getattr(vars(cls)[method], "span", None) == f"asyncsports.{name}.{method}"
        view = getattr(client.with_json, name)
        for method in vars(view).values():  # bound to copies sharing the client's session
            assert method.__self__._session is client._session
    instrument(client)  # a second time: nothing more
    assert client._session.observer is observer


async def test_an_untraced_call_gives_what_the_method_made(sports_emulator: Emulator) -> None:
    async with sports_emulator.client() as client:
        listing = client.fixtures.list("basketball")
        # the walk the resource made, not wrapped (AsyncList.wrap would make a lambda)
        assert type(listing) is AsyncList and isinstance(listing._source, functools.partial)
        fixture = await anext(aiter(listing))
        await listing.aclose()
        get = client.fixtures.get("basketball", fixture.id)
        assert get.cr_code is FixturesResource.get.__wrapped__.__code__  # type: ignore[attr-defined]
        assert (await get).id == fixture.id


async def test_a_view_made_before_instrument_is_traced(
    sports_emulator: Emulator, telemetry: Telemetry
) -> None:
    async with sports_emulator.client() as client:
        view = client.with_json
        instrument(
            client,
            tracer_provider=telemetry.tracer_provider,
            meter_provider=telemetry.meter_provider,
        )
        pairs = await view.fixtures.list("basketball").collect()
        assert pairs and pairs[0].json.startswith(b"{")
        await view.fixtures.get("basketball", pairs[0].value.id)
    [call] = telemetry.spans("asyncsports.fixtures.list")
    assert children(telemetry.spans(), call)
    [call] = telemetry.spans("asyncsports.fixtures.get")
    assert len(children(telemetry.spans(), call)) == 1


def test_tracing_without_the_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(MissingDependencyError, match=r"its otel extra"):
        Client("http://127.0.0.1:9", token="t", tracing=True)
