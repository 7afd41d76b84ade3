"""Every setting declared once (issue 42, point 5): ``Settings`` is the declaration.

``Client`` and ``Emulator`` write their keywords out (a reader follows ``token`` from
``Client(token=)`` into ``Settings`` by name), so these tests hold them to the dataclasses
they fill: the same names in the same order, the same defaults and annotations, and each
keyword handed on (a keyword forgotten on the way would leave its field at the default).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
from typing import Any

import pytest

from asyncsports import Client
from asyncsports._http.config import Settings, Timeout
from asyncsports._wire.retry import RetryPolicy
from asyncsports.auth import StreamingCredentials
from asyncsports.emulator import Emulator
from asyncsports.emulator._records import Scale

CLIENT_ONLY = {
    "max_retries": "a RetryPolicy's one number, folded into Settings.retry",
    "record": "wraps the transport in a recording; not a setting of the requests",
    "record_overwrite": "goes with record",
    "tracing": "instruments the client after it is made",
    "transport": "makes the transport from the Settings",
}
"""Keywords of Client that are not Settings fields, each with why."""
FRIENDLIER = {"timeout": "Timeout | float | None", "retry": "RetryPolicy | None"}
"""Fields Client takes in another form (None: the field's default), their annotation there."""


def _keywords(cls: type) -> dict[str, inspect.Parameter]:
    params = inspect.signature(cls).parameters
    return {name: p for name, p in params.items() if name != "self"}


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default


def test_client_takes_each_setting_by_name_with_its_default_and_type() -> None:
    keywords = _keywords(Client)
    assert set(CLIENT_ONLY) <= set(keywords)
    shared = [name for name in keywords if name not in CLIENT_ONLY]
    fields = dataclasses.fields(Settings)
    assert shared == [f.name for f in fields]
    for f in fields:
        p = keywords[f.name]
        assert p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD), f.name
        if f.name in FRIENDLIER:
            assert (p.annotation, p.default) == (FRIENDLIER[f.name], None), f.name
        else:
            assert (p.annotation, p.default) == (f.type, _default(f)), f.name


def test_client_friendlier_forms_default_to_the_fields_defaults() -> None:
    settings = Client("http://h").settings
    assert settings.timeout == Timeout()
    assert settings.retry == RetryPolicy()
    assert Client("http://h", max_retries=0).settings.retry == RetryPolicy(max_retries=0)


async def test_client_hands_each_keyword_to_its_setting() -> None:
    async def hook(info: object) -> None:
        return None

    given: dict[str, Any] = {
        "token": "tok",
        "vendor": "someone",
        "snooker_feed": "otherfeed",
        "streaming_url": "http://streaming",
        "streaming_credentials": StreamingCredentials(7, "auth", 1),
        "live_url": "ws://live",
        "timeout": Timeout(3),
        "retry": RetryPolicy(max_retries=1),
        "rate_limit": 2.5,
        "rate_limit_url": "redis://127.0.0.1:1",
        "rate_limit_key": "key",
        "rate_limit_sharers": 3,
        "max_connections": 4,
        "dns_ttl": 5,
        "max_body_size": 6,
        "max_element_size": 7,
        "on_request": hook,
        "on_response": hook,
        "verify_ssl": False,
        "default_query": {"a": "b"},
        "default_headers": {"X-A": "b"},
    }
    defaults = Settings(base_url="http://base")
    # Every value differs from its default, so a keyword not handed on shows.
    assert all(getattr(defaults, name) != value for name, value in given.items())
    assert set(given) | {"base_url"} == {f.name for f in dataclasses.fields(Settings)}
    client = Client("http://base", **given)
    try:
        assert client.settings == Settings(base_url="http://base", **given)
    finally:
        await client.aclose()


def test_emulator_takes_each_scale_field_by_name_with_its_default_and_type() -> None:
    keywords = _keywords(Emulator)
    for f in dataclasses.fields(Scale):
        p = keywords[f.name]
        assert (p.kind, p.annotation, p.default) == (p.KEYWORD_ONLY, f.type, f.default), f.name


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Scale)])
def test_emulator_hands_each_scale_keyword_on(field: str) -> None:
    # One field at a time off its default (the others keep the data small and valid).
    value = {"competitions": 3, "seasons": 3, "teams": 4}.get(field, 1)
    assert getattr(Scale(), field) != value
    emulator = Emulator(now=dt.datetime(2026, 1, 1, tzinfo=dt.UTC), **{field: value})
    assert getattr(emulator.world.scale, field) == value
