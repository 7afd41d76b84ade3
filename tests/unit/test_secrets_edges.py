"""The secrets policy's rarer paths: sent messages, errors that hold containers, a full cache.

What the client sends (:meth:`Secrets.sent`), what an error keeps in a mapping or a list
(:meth:`Secrets.scrub`), and the query-name cache of :func:`hide_url` once it is full.
"""

from __future__ import annotations

import pytest

from asyncsports._wire import secrets
from asyncsports._wire.secrets import HIDDEN, Secrets, hide_url

TOKEN = "abcdefgh123"


def test_a_sent_json_object_hides_and_learns_its_credential_keys() -> None:
    policy = Secrets()
    assert policy.sent(f'{{"authToken":"{TOKEN}","x":1}}') == f'{{"authToken":"{HIDDEN}","x":1}}'
    # Learnt: the same value is hidden wherever it shows up next, under any name.
    assert TOKEN in policy.values
    assert policy.sent(f'{{"y":"{TOKEN}"}}') == f'{{"y":"{HIDDEN}"}}'


def test_a_sent_message_that_is_not_an_object_with_credentials_is_scrubbed_as_text() -> None:
    policy = Secrets([TOKEN])
    assert policy.sent(f"not json {TOKEN}") == f"not json {HIDDEN}"
    assert policy.sent(f'["{TOKEN}", 1]') == f'["{HIDDEN}", 1]'
    assert policy.sent('{"x": 1}') == '{"x": 1}'  # as sent: not re-encoded


def test_an_error_holding_a_mapping_hides_credential_keys_at_any_depth() -> None:
    error = Secrets().scrub(Exception({"x": {"token": "abc"}, "y": 2}))
    assert error.args == ({"x": {"token": HIDDEN}, "y": 2},)


def test_an_error_holding_a_clean_container_keeps_it_as_it_is() -> None:
    body = {"x": [1, "two"]}
    error = Secrets([TOKEN]).scrub(Exception(body))
    assert error.args[0] is body


@pytest.mark.parametrize("value", [[object()], "cycle"], ids=["not-json", "cycle"])
def test_a_container_that_cannot_be_looked_through_is_not_kept(value: object) -> None:
    if value == "cycle":
        value = []
        value.append(value)  # type: ignore[attr-defined]
    error = Secrets([TOKEN]).scrub(Exception(value))
    assert error.args == ("(not shown: too deep to check for secrets)",)


def test_a_hidden_url_userinfo_never_cuts_a_json_string() -> None:
    # A URL in a text ends at a '"' (issue 41: its userinfo runs to its last "@"): the
    # userinfo of one never runs across the JSON's own quotes, so what is left stays JSON.
    assert Secrets().scrub(Exception({"a": "//u:", "b@": 1})).args == ({"a": "//u:", "b@": 1},)
    error = Secrets().scrub(Exception({"url": 'redis://:my/Se"cret@h/0', "b": "c@d"}))
    assert error.args == ({"url": f"redis://:{HIDDEN}@h/0", "b": "c@d"},)


def test_a_full_name_cache_still_decides_each_name(monkeypatch: pytest.MonkeyPatch) -> None:
    full = {f"name{i}": False for i in range(4096)}
    monkeypatch.setattr(secrets, "_SEEN", full)
    assert hide_url("https://h/p?api_key=abc&x=1") == f"https://h/p?api_key={HIDDEN}&x=1"
    assert hide_url("https://h/p?x=1") == "https://h/p?x=1"
    assert "api_key" not in full and len(full) == 4096


def test_a_name_met_once_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, bool] = {}
    monkeypatch.setattr(secrets, "_SEEN", seen)
    assert hide_url("https://h/p?sig=abc&page=2") == f"https://h/p?sig={HIDDEN}&page=2"
    assert seen == {"sig": True}
    assert (
        hide_url("https://h/p?page=2&sig=") == "https://h/p?page=2&sig="
    )  # empty: nothing to hide
    assert seen == {"sig": True, "page": False}
