"""One secrets policy, every output: a server echoes every secret a client holds, in every
form, in every place it can (the status line, headers, body pieces split anywhere, live
messages and the close reason), and no error, log record, hook, span or recording shows
any of them.

The forms looked for are written here, not taken from the policy, so that a place that
hides fewer (its own, smaller rule) fails the test.
"""

from __future__ import annotations

import base64
import json
import logging
import pickle
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.samples import FIXTURE_ID

from asyncsports import Client, RetryPolicy, StreamingCredentials
from asyncsports._wire.secrets import Secrets, hide_url, hide_urls
from asyncsports.errors import AsyncSportsError

FAST = RetryPolicy(max_retries=1, base=0.0, cap=0.0)
LIVE = f"/basketball/fixtures/{FIXTURE_ID}/actions"
# Each secret starts with a mark of its own, so that it cannot be a word of ordinary output.
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/=!$&,;:@%'()"
HEADERS = ["Authorization", "authorization", "AUTHORIZATION", "X-Api-Key", "x-auth-token"]
PARAMS = ["token", "apiKey", "authToken", "access_token", "secret", "sig", "signature", "api_key"]


def secret(mark: str) -> st.SearchStrategy[str]:
    return st.text(ALPHABET, min_size=10, max_size=20).map(lambda s: f"Zq{mark}{s}")


def forms(value: str) -> set[str]:
    """Every form a server may echo ``value`` in, as this test knows them."""
    raw = value.encode()
    found = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote(value)}
    lower = re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(value, safe=""))
    found |= {urllib.parse.quote_plus(value), lower}
    escaped = json.dumps(value)[1:-1]
    found |= {escaped, escaped.replace("/", "\\/")}
    for b64 in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        found |= {b64, b64.rstrip("=")}
    return found


def echoes(request: web.Request) -> list[str]:
    """What the request carried that a careless server quotes back."""
    said = [v for k, v in request.headers.items() if k.lower() in {h.lower() for h in HEADERS}]
    said += [v.partition(" ")[2] for v in said if " " in v]
    return [*said, *request.query.values()]


def every_form(values: list[str]) -> list[str]:
    return sorted({f for v in values if v for f in forms(v)})


def app(status: int, cuts: list[int]) -> web.Application:
    async def rest(request: web.Request) -> web.StreamResponse:
        quoted = every_form(echoes(request))
        headers = {f"X-Echo-{i}": form for i, form in enumerate(quoted)}
        headers["Location"] = "/again?" + "&".join(f"{p}={quoted[0]}" for p in PARAMS)
        body = json.dumps({"error": "Invalid " + " ".join(quoted), "seen": quoted}).encode()
        # Chunked, cut where hypothesis says: a secret may straddle two pieces.
        resp = web.StreamResponse(status=status, reason="Bad " + quoted[0], headers=headers)
        resp.content_type = "application/json"
        await resp.prepare(request)
        last = 0
        for cut in sorted({min(c, len(body)) for c in cuts}):
            await resp.write(body[last:cut])
            last = cut
        await resp.write(body[last:])
        await resp.write_eof()
        return resp

    async def live(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        sent = msgspec.json.decode((await ws.receive()).data)
        quoted = every_form([*sent.values(), *echoes(request)])
        await ws.send_json({"message": "Invalid token " + " ".join(quoted), "level": "ERROR"})
        await ws.send_str("not json " + " ".join(quoted))
        await ws.close(code=4001, message=f"bad {quoted[0]}"[:120].encode())
        return ws

    application = web.Application()
    application.router.add_get(LIVE, live)
    application.router.add_route("*", "/{tail:.*}", rest)
    return application


class Outputs(logging.Handler):
    """Everything the client showed or kept: errors, log records, hooks, spans, the file."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: dict[str, list[str]] = {
            "error": [],
            "log": [],
            "hook": [],
            "span": [],
            "repr": [],
        }

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage() + repr(record.args)
        if record.exc_info:
            text += logging.Formatter().formatException(record.exc_info)
        self.texts["log"].append(text)

    def error(self, error: BaseException) -> None:
        parts: list[Any] = [str(error), repr(error), error.args, vars(error)]
        parts.append(repr(pickle.loads(pickle.dumps(error))))
        self.texts["error"].append(" ".join(map(str, parts)))

    def hook(self, info: Any) -> None:
        self.texts["hook"].append(repr(info))


async def drain(feed: Any) -> None:
    async with feed:
        async for _ in feed:
            pass


@pytest.fixture
def spans() -> Iterator[Any]:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    values=st.tuples(*(secret(str(i)) for i in range(5))),
    header=st.sampled_from(HEADERS),
    own=st.sampled_from(PARAMS),
    default=st.sampled_from(PARAMS),
    status=st.sampled_from([200, 401, 503]),
    cuts=st.lists(st.integers(0, 3000), max_size=6),
)
async def test_no_output_shows_a_secret_in_any_form(
    tmp_path: Path,
    spans: Any,
    values: tuple[str, ...],
    header: str,
    own: str,
    default: str,
    status: int,
    cuts: list[int],
) -> None:
    from asyncsports.telemetry import instrument

    token, in_header, in_query, in_default, stream_auth = values
    provider, exporter = spans
    exporter.clear()
    out = Outputs()
    logger = logging.getLogger("asyncsports")
    logger.addHandler(out)
    level, logger.level = logger.level, logging.DEBUG
    recording = tmp_path / "echo.jsonl"
    recording.unlink(missing_ok=True)
    server = TestServer(app(status, cuts), host="127.0.0.1")
    await server.start_server()
    url = str(server.make_url("")).rstrip("/")
    try:
        async with Client(
            url,
            token=token,
            streaming_url=url,
            streaming_credentials=StreamingCredentials(9, stream_auth, 1700000000000),
            live_url="ws" + url[4:],
            default_query={default: in_default},
            retry=FAST,
            record=recording,
            on_request=out.hook,
            on_response=out.hook,
        ) as client:
            instrument(client, tracer_provider=provider)
            out.texts["repr"] += [repr(client), repr(client.settings)]
            calls = [
                client.fixtures.get(
                    "basketball",
                    FIXTURE_ID,
                    extra_headers={header: f"Bearer {in_header}"},
                    extra_query={own: in_query},
                ),
                client.events.list().collect(),
                drain(client.live.actions("basketball", FIXTURE_ID)),
            ]
            for call in calls:
                with pytest.raises(AsyncSportsError) as caught:
                    await call
                out.error(caught.value)
    finally:
        await server.close()
        logger.removeHandler(out)
        logger.level = level
    for span in exporter.get_finished_spans():
        out.texts["span"].append(
            repr(dict(span.attributes or {}))
            + repr(span.status.description)
            + repr([(e.name, dict(e.attributes or {})) for e in span.events])
        )
    out.texts["recording"] = [recording.read_text()]
    # Every output was written to (log records: the retries of a 503).
    assert all(v or (k == "log" and status != 503) for k, v in out.texts.items())
    found = [
        (where, value, form)
        for where, texts in out.texts.items()
        for text in texts
        for value in values
        for form in forms(value)
        if form in text
    ]
    assert found == []


def test_hide_urls_hides_a_password_and_credential_values_by_name() -> None:
    text = "GET https://u:pa@ss@h:1/p?a=1&apiKey=k1&X-Auth-Token=k2&page=2 token=k3"
    assert (
        hide_urls(text)
        == "GET https://u:***@h:1/p?a=1&apiKey=***&X-Auth-Token=***&page=2 token=***"
    )
    assert hide_urls("sort=name&size=20") == "sort=name&size=20"


def test_a_bearer_header_hides_the_token_alone_too() -> None:
    shown = Secrets()
    assert shown.headers({"authorization": "Bearer abcdefghij", "Date": "x"}) == {
        "authorization": "***",
        "Date": "x",
    }
    assert shown.text("echo abcdefghij") == "echo ***"


@given(
    pairs=st.lists(
        st.tuples(
            st.sampled_from([*PARAMS, "page", "size", "sort", "Page.Size"]), st.text(ALPHABET)
        ),
        max_size=5,
    ),
    user=st.sampled_from(["", "u@", "u:pw12345678@"]),
)
def test_one_url_is_hidden_as_the_text_scan_hides_it(
    pairs: list[tuple[str, str]], user: str
) -> None:
    url = f"http://{user}h:1/p" + ("?" + urllib.parse.urlencode(pairs) if pairs else "")
    assert hide_url(url) == hide_urls(url)
    assert all(f"{k}=***" in hide_url(url) for k, v in pairs if k in PARAMS and v)


@pytest.mark.parametrize("arg", ["base_url", "streaming_url", "live_url"])
def test_a_url_with_a_user_or_password_is_refused_without_showing_it(arg: str) -> None:
    url = "http://user:pw-0123456789@127.0.0.1:9"
    kw: dict[str, Any] = {"base_url": "http://127.0.0.1:9", arg: url}
    with pytest.raises(ValueError, match=f"{arg}: must not hold a user or password") as caught:
        Client(**kw)
    assert "pw-0123456789" not in str(caught.value)
    assert "Client(token=...)" in str(caught.value)
