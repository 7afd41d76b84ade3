"""What the client sends, as its logs and recordings keep it: credential keys hidden in a
JSON object only; text that is not one is scrubbed as text."""

from __future__ import annotations

from asyncsports._wire.secrets import HIDDEN, Secrets


def test_a_message_that_is_not_json_is_scrubbed_as_text() -> None:
    secrets = Secrets(["s3cret-token-value"])
    assert secrets.sent("auth s3cret-token-value") == f"auth {HIDDEN}"


def test_json_that_is_not_an_object_is_passed_as_text() -> None:
    secrets = Secrets(["s3cret-token-value"])
    assert secrets.sent('["password", 1]') == '["password", 1]'
    assert secrets.sent("[1]") == "[1]"
    assert secrets.sent('"s3cret-token-value"') == f'"{HIDDEN}"'


def test_an_object_without_credential_keys_is_scrubbed_as_text() -> None:
    secrets = Secrets(["s3cret-token-value"])
    assert secrets.sent('{"note": "s3cret-token-value"}') == f'{{"note": "{HIDDEN}"}}'


def test_a_credential_key_is_hidden_and_learnt() -> None:
    secrets = Secrets()
    sent = secrets.sent('{"authToken": "learnt-token-123", "x": 1}')
    assert sent == f'{{"authToken":"{HIDDEN}","x":1}}'
    assert secrets.text("echo learnt-token-123") == f"echo {HIDDEN}"
