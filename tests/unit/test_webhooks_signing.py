"""The webhook signature (asyncsports._wire.webhooks) against the ``standardwebhooks``
package, an implementation of the specification that is not ours; the secret's checks,
which never quote it; the webhook URL's options."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook

from asyncsports._wire.bus import parse_target
from asyncsports._wire.webhooks import SECRET_ENV, headers, secret_key, sign

KEY = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY).decode()


@given(
    body=st.binary(max_size=2000),
    seq=st.integers(1, 2**63 - 1),
    key=st.binary(min_size=24, max_size=64),
)
def test_our_signature_is_the_specifications(body: bytes, seq: int, key: bytes) -> None:
    secret = "whsec_" + base64.b64encode(key).decode()
    now = int(dt.datetime.now(dt.UTC).timestamp())
    sent = headers(secret_key(secret), f"0123456789abcdef:{seq}", now, body)
    Webhook(secret).verify(body, sent, json_parse=False)  # raises if it does not verify
    at = dt.datetime.fromtimestamp(now, dt.UTC)
    assert sent["webhook-signature"] == Webhook(secret).sign(sent["webhook-id"], at, body)


def test_a_signature_covers_the_id_the_time_and_the_body() -> None:
    base = sign(KEY, "o:1", 1700000000, b"{}")
    assert base.startswith("v1,")
    assert (
        len(
            {
                base,
                sign(KEY, "o:2", 1700000000, b"{}"),
                sign(KEY, "o:1", 1700000001, b"{}"),
                sign(KEY, "o:1", 1700000000, b"{ }"),
            }
        )
        == 4
    )


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        (None, f"set {SECRET_ENV}"),
        ("", f"set {SECRET_ENV}"),
        ("c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", "must start with whsec_"),
        ("whsec_not base64 at all!!", "is not base64"),
        ("whsec_" + base64.b64encode(b"short").decode(), "the key is 5 bytes"),
        ("whsec_" + base64.b64encode(bytes(65)).decode(), "the key is 65 bytes"),
    ],
)
def test_a_bad_secret_is_refused_without_quoting_it(secret: str | None, says: str) -> None:
    with pytest.raises(ValueError, match=says) as caught:
        secret_key(secret)
    if secret:
        assert secret not in str(caught.value) and secret[6:] not in str(caught.value)


def test_a_webhook_url_and_its_options() -> None:
    target = parse_target("https://user:pw@example.com:8443/hooks/in?concurrency=4&timeout=2.5")
    assert (target.kind, target.concurrency, target.timeout) == ("webhook", 4, 2.5)
    assert target.url == "https://user:pw@example.com:8443/hooks/in"
    assert target.shown == "https://example.com:8443/hooks/in"
    assert parse_target("http://127.0.0.1:9/x").concurrency == 1
    assert parse_target("http://[::1]:9/x").kind == "webhook"
    assert parse_target("http://localhost/x").kind == "webhook"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://example.com/hook", "plain http:// only to this machine"),
        ("http://10.0.0.5/hook", "plain http:// only to this machine"),
        ("https://example.com/hook?concurency=2", "did you mean 'concurrency'"),
        ("https://example.com/hook?token=abc", "unknown option 'token'"),
        ("https://example.com/hook?concurrency=0", "concurrency must be a number from 1 to 64"),
        ("https://example.com/hook?concurrency=65", "from 1 to 64"),
        ("https://example.com/hook?timeout=0", "timeout must be a number from 0.1 to 3600"),
        ("https:///hook", "no host"),
    ],
)
def test_a_bad_webhook_url_says_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_target(url)
