"""A client's settings refuse each wrong argument by name, before anything is sent."""

from __future__ import annotations

from typing import Any

import pytest

from asyncsports._http.config import Limits, Settings, Timeout

URL = "https://api.example"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"base_url": None}, ValueError, "base_url: expected"),
        ({"timeout": 5}, TypeError, "timeout: expected a Timeout or a number, got 5"),
        ({"retry": 3}, TypeError, "retry: expected a RetryPolicy, got 3"),
        ({"rate_limit": "10"}, TypeError, "rate_limit: expected a number, got '10'"),
        ({"rate_limit": True}, TypeError, "rate_limit: expected a number, got True"),
        ({"rate_limit": 0}, ValueError, "rate_limit: must be a finite number > 0"),
        ({"rate_limit_url": "redis://h"}, ValueError, "rate_limit_url: needs rate_limit"),
        ({"rate_limit_url": "http://h", "rate_limit": 5}, ValueError, "expected a redis://"),
        ({"rate_limit_key": ""}, ValueError, "rate_limit_key: expected a name, got ''"),
        ({"rate_limit_key": 7}, ValueError, "rate_limit_key: expected a name, got 7"),
        ({"max_connections": "9"}, TypeError, "max_connections: expected an int, got '9'"),
        ({"dns_ttl": False}, TypeError, "dns_ttl: expected an int, got False"),
        ({"max_body_size": 0}, ValueError, "max_body_size: must be >= 1, got 0"),
        ({"on_request": "print"}, TypeError, "on_request: expected a callable"),
        ({"on_response": 1}, TypeError, "on_response: expected a callable"),
    ],
)
def test_a_wrong_setting_is_refused_by_name(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(")):
        Settings(**{"base_url": URL, **kwargs})


def test_limits_may_be_switched_off() -> None:
    settings = Settings(base_url=URL, max_body_size=None, max_element_size=None)
    assert (settings.max_body_size, settings.max_element_size) == (None, None)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"connect": "1"}, TypeError, "connect: expected a number of seconds or None, got '1'"),
        ({"read": True}, TypeError, "read: expected a number of seconds or None, got True"),
        ({"total": 0}, ValueError, "total: expected a finite number of seconds > 0, got 0"),
        ({"body": float("inf")}, ValueError, "body: expected a finite number of seconds > 0"),
    ],
)
def test_a_wrong_timeout_is_refused_by_name(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Timeout(**kwargs)


def test_a_stream_without_a_slowest_pace_has_no_check() -> None:
    limits = Limits(Settings(base_url=URL, timeout=Timeout(min_rate=None, body=20)))
    assert limits.pace(0.0, whole=False) is None
    whole = limits.pace(0.0, whole=True)
    assert whole is not None
    # Without either bound there is nothing to check before a body is read.
    assert Limits(Settings(base_url=URL, timeout=Timeout(min_rate=None, body=None))).first == float(
        "inf"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "https://"}, "base_url: expected an http(s) URL such as https://host"),
        ({"base_url": "http://:80/x"}, "base_url: expected an http(s) URL such as https://host"),
        ({"streaming_url": "https:///"}, "streaming_url: expected an http(s) URL"),
        ({"live_url": "wss://"}, "live_url: expected a ws(s) URL such as wss://host"),
    ],
)
def test_a_url_without_a_host_is_refused(kwargs: dict[str, Any], message: str) -> None:
    """Once accepted (the scheme alone was checked): every request then failed, far from
    the mistake. The command line's options are checked by the same rule."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Settings(**{"base_url": URL, **kwargs})
