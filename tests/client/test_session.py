"""The session over loopback: errors, token refresh, retries, lifecycle."""

from __future__ import annotations

import gc
import socket
import warnings

import pytest
from support.samples import FIXTURE_ID, fixture
from support.stub import Reply, Stub

from asyncsports import Client, RetryPolicy, Timeout
from asyncsports.errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    BodyTooLargeError,
    DecodeError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TransportError,
)

PATH = f"/basketball/fixtures/{FIXTURE_ID}"


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, NotFoundError),
        (429, RateLimitError),
        (500, ServerError),
        (418, APIError),
    ],
)
async def test_status_maps_to_its_error_class(stub: Stub, status: int, cls: type) -> None:
    stub.add(PATH, Reply({"error": "nope", "status": status}, status=status))
    async with Client(stub.url, token="t", max_retries=0) as c:
        with pytest.raises(cls) as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
    err = info.value
    assert type(err) is cls
    assert err.status == status
    assert err.body == {"error": "nope", "status": status}
    assert err.message == "nope"
    assert err.method == "GET" and err.url.endswith(PATH)
    assert str(status) in str(err) and "nope" in str(err)


async def test_missing_accept_text_body_is_kept_as_text(stub: Stub, client: Client) -> None:
    msg = "Request is missing required HTTP header 'Accept'"
    stub.add(PATH, Reply(text=msg, status=400))
    with pytest.raises(BadRequestError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.body == msg
    assert msg in str(info.value)


async def test_invalid_token_message_in_braces_that_is_not_json(stub: Stub) -> None:
    stub.add(
        PATH,
        Reply(
            text="{The supplied authentication is invalid}",
            status=401,
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        ),
    )
    async with Client(stub.url, token="wrong") as c:
        with pytest.raises(AuthenticationError) as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
    assert "The supplied authentication is invalid" in str(info.value)
    assert info.value.headers["WWW-Authenticate"].startswith("Bearer")
    assert len(stub.seen) == 1  # a string token is not asked again


async def test_a_callable_token_is_asked_again_once_after_a_401(stub: Stub) -> None:
    tokens = iter(["old", "new", "newer"])
    asked = []

    async def token() -> str:
        asked.append(1)
        return next(tokens)

    stub.add(PATH, Reply({"error": "expired"}, status=401), fixture())
    async with Client(stub.url, token=token) as c:
        f = await c.fixtures.get("basketball", FIXTURE_ID)
        await c.fixtures.get("basketball", FIXTURE_ID)
    assert f.name
    assert [s.headers["Authorization"] for s in stub.seen] == [
        "Bearer old",
        "Bearer new",
        "Bearer new",
    ]
    assert len(asked) == 2


async def test_a_second_401_after_refresh_fails(stub: Stub) -> None:
    stub.add(PATH, Reply({"error": "no"}, status=401))
    async with Client(stub.url, token=lambda: "x") as c:
        with pytest.raises(AuthenticationError):
            await c.fixtures.get("basketball", FIXTURE_ID)
    assert len(stub.seen) == 2


async def test_retryable_statuses_are_retried_then_succeed(stub: Stub, client: Client) -> None:
    stub.add(PATH, Reply(status=503, text="busy"), Reply(status=502, text="bad"), fixture())
    f = await client.fixtures.get("basketball", FIXTURE_ID)
    assert f.name and len(stub.seen) == 3
    assert client.retries == 2


async def test_retries_give_up_with_the_attempt_count(stub: Stub, client: Client) -> None:
    stub.add(PATH, Reply(status=500, text="down"))
    with pytest.raises(ServerError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.attempts == 3
    assert "after 3 attempts" in str(info.value)


@pytest.mark.parametrize("status", [400, 403, 404])
async def test_client_errors_are_never_retried(stub: Stub, client: Client, status: int) -> None:
    stub.add(PATH, Reply({"error": "x"}, status=status))
    with pytest.raises(APIError):
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert len(stub.seen) == 1


async def test_rate_limit_error_carries_retry_after(stub: Stub) -> None:
    stub.add(PATH, Reply({"error": "slow down"}, status=429, headers={"Retry-After": "120"}))
    async with Client(stub.url, token="t", retry=RetryPolicy(max_retry_after=5)) as c:
        with pytest.raises(RateLimitError) as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.retry_after == 120.0
    assert len(stub.seen) == 1  # asked to wait longer than allowed: not retried


async def test_retry_after_is_waited_for(stub: Stub) -> None:
    stub.add(PATH, Reply(status=429, text="", headers={"Retry-After": "0.05"}), fixture())
    async with Client(stub.url, token="t", retry=RetryPolicy(base=10, cap=10)) as c:
        f = await c.fixtures.get("basketball", FIXTURE_ID)
    assert f.name and len(stub.seen) == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_connection_refused_is_a_transport_error_after_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with Client(url, token="t", retry=RetryPolicy(max_retries=1, base=0)) as c:
        with pytest.raises(TransportError) as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.attempts == 2
    assert "connection failed" in str(info.value)


async def test_html_where_json_was_expected_is_a_decode_error(stub: Stub, client: Client) -> None:
    stub.add(PATH, Reply(text="<html><body>Gateway</body></html>"))
    with pytest.raises(DecodeError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert "<html>" in str(info.value)


async def test_a_payload_that_does_not_fit_names_the_path(stub: Stub, client: Client) -> None:
    stub.add(PATH, fixture(teams=[{"id": "not-a-uuid", "name": "X"}]))
    with pytest.raises(DecodeError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.path == "$.teams[0].id"
    assert "Fixture" in str(info.value) and "not-a-uuid" in str(info.value)


async def test_a_body_over_the_limit_is_refused(stub: Stub) -> None:
    stub.add(PATH, fixture())
    async with Client(stub.url, token="t", max_body_size=100) as c:
        with pytest.raises(BodyTooLargeError, match="max_body_size") as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
    # Not a TransportError: a watcher must not take it for a passing failure and retry.
    assert not isinstance(info.value, TransportError)
    assert info.value.limit == 100


async def test_a_call_on_a_client_that_is_not_open_is_a_clear_error(stub: Stub) -> None:
    c = Client(stub.url, token="t")
    with pytest.raises(RuntimeError, match="not open"):
        await c.fixtures.get("basketball", FIXTURE_ID)
    async with c:
        pass
    with pytest.raises(RuntimeError, match="async with Client"):
        await c.fixtures.list("basketball").collect()


async def test_a_client_collected_while_open_warns_where_it_was_made(stub: Stub) -> None:
    c = Client(stub.url, token="t")
    await c.open()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c.__del__()  # what collecting it would run; the test keeps it to close it after
    (ours,) = [w for w in caught if "asyncsports.Client" in str(w.message)]
    # The warning names the client; its source (shown with -X tracemalloc) is the client.
    assert stub.url in str(ours.message) and ours.source is c
    await c.aclose()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del c
        gc.collect()
    assert not [w for w in caught if "asyncsports.Client" in str(w.message)]


def test_timeouts_default_to_connect_10_read_30() -> None:
    assert Timeout() == Timeout(connect=10.0, read=30.0, total=None)


def test_a_number_of_seconds_bounds_every_phase_as_in_httpx() -> None:
    assert Client("http://127.0.0.1:1", timeout=5).settings.timeout == Timeout(
        connect=5.0, read=5.0, total=None
    )
    assert Timeout(5, connect=1) == Timeout(connect=1.0, read=5.0, total=None)
    assert Timeout(None).read is None
    with pytest.raises(ValueError, match=r"timeout\.total"):
        Timeout(total=0)


async def test_a_data_call_without_a_token_is_refused_before_sending(stub: Stub) -> None:
    async with Client(stub.url) as c:
        with pytest.raises(ValueError, match="token"):
            await c.fixtures.get("basketball", FIXTURE_ID)
    assert stub.seen == []


async def test_a_raising_response_hook_releases_its_connection(stub: Stub) -> None:
    stub.add(PATH, fixture())

    def hook(info: object) -> None:
        raise RuntimeError("hook failed")

    async with Client(stub.url, token="t", max_connections=2, on_response=hook) as c:
        for _ in range(3):  # a leak would exhaust the pool of 2 and hang the third
            with pytest.raises(RuntimeError, match="hook failed"):
                await c.fixtures.get("basketball", FIXTURE_ID)
        assert c.connections_in_use() == 0


def test_retry_and_max_retries_together_are_refused() -> None:
    with pytest.raises(ValueError, match="max_retries, retry"):
        Client("http://127.0.0.1:1", max_retries=1, retry=RetryPolicy())
    assert Client("http://127.0.0.1:1", max_retries=0).settings.retry.max_retries == 0


def test_settings_are_frozen_and_the_base_url_loses_its_slash() -> None:
    c = Client("http://127.0.0.1:1/", streaming_url="http://127.0.0.1:2/")
    assert (c.base_url, c.streaming_url) == ("http://127.0.0.1:1", "http://127.0.0.1:2")
    with pytest.raises(AttributeError):
        c.settings.base_url = "http://elsewhere"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"base_url": "ftp://x"}, "base_url"),
        ({"vendor": "a b"}, "vendor"),
        ({"max_connections": 0}, "max_connections"),
        ({"rate_limit": 0}, "rate_limit"),
        ({"rate_limit": float("nan")}, "rate_limit"),
        ({"rate_limit": float("inf")}, "rate_limit"),
        ({"timeout": -1}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"max_body_size": 0}, "max_body_size"),
        ({"max_body_size": -1}, "max_body_size"),
        ({"max_retries": -1}, "max_retries"),
        ({"base_url": "http://h/\tx"}, "base_url"),
        ({"streaming_url": "x"}, "streaming_url"),
    ],
)
def test_bad_client_arguments(kw: dict[str, object], name: str) -> None:
    args = {"base_url": "http://127.0.0.1:1", **kw}
    with pytest.raises(ValueError, match=name):
        Client(**args)  # type: ignore[arg-type]


async def test_hooks_see_every_request_with_secrets_redacted(stub: Stub) -> None:
    from asyncsports import RequestInfo, StreamingCredentials

    seen: list[RequestInfo] = []
    stub.add("/api/v2/streaming/events", [])
    async with Client(
        stub.url,
        streaming_url=stub.url,
        streaming_credentials=StreamingCredentials(1, "s3cret", 5),
        on_response=seen.append,
    ) as c:
        await c.events.list().collect()
    assert seen[0].status == 200
    assert "s3cret" not in seen[0].url and "auth=***" in seen[0].url
