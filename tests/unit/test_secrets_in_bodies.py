"""Secrets kept in an error's structured values: a credential pair hidden by its key alone,
other pairs left, and a mapping that is not a dict looked through, not dropped."""

from __future__ import annotations

from types import MappingProxyType

from asyncsports._wire.secrets import HIDDEN, Secrets


class Failed(Exception):
    body: object


def failed(body: object) -> Failed:
    error = Failed("failed")
    error.body = body
    return error


def test_a_credential_pair_is_hidden_by_its_key_and_the_rest_is_kept() -> None:
    error = Secrets().scrub(failed({"password": "hunter2-long", "note": "hi", "token": ""}))
    assert error.body == {"password": HIDDEN, "note": "hi", "token": ""}


def test_a_mapping_that_is_not_a_dict_is_looked_through() -> None:
    plain = MappingProxyType({"note": "hi"})
    assert Secrets(["s3cret-value"]).scrub(failed(plain)).body is plain
    secret = MappingProxyType({"note": "s3cret-value"})
    assert Secrets(["s3cret-value"]).scrub(failed(secret)).body == {"note": HIDDEN}
