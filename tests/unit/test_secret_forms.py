"""Every form of a secret a server may quote back, clipped edges, and query credentials in
one URL, each to the character."""

from __future__ import annotations

import uuid

from asyncsports._wire.secrets import HIDDEN, Secrets, forms, hide_url


def test_the_percent_forms_with_and_without_the_slash_kept() -> None:
    found = forms("a b/c+d")
    assert {"a%20b%2Fc%2Bd", "a%20b%2fc%2bd", "a%20b/c%2Bd", "a+b%2Fc%2Bd", "a+b/c%2Bd"} <= found
    assert {"a+b/c%2bd", "a%20b/c%2bd"} <= found


def test_the_json_escaped_forms_keep_every_character() -> None:
    found = forms('é"/x')
    assert 'é\\"/x' in found  # msgspec: UTF-8 kept
    assert '\\u00e9\\"/x' in found  # json.dumps: ASCII escapes
    assert '\\u00e9\\"\\/x' in found  # and with the slash escaped


def test_a_secret_clipped_to_its_edge_is_hidden_and_one_shorter_is_not() -> None:
    secrets = Secrets(["abcdefghijkl"])
    assert secrets.text("tail abcdef") == f"tail {HIDDEN}"
    assert secrets.text("tail abcde") == "tail abcde"
    assert secrets.text("ghijkl head") == f"{HIDDEN} head"
    assert secrets.text("hijkl head") == "hijkl head"


def test_a_query_credential_met_for_the_first_time_is_hidden() -> None:
    # A name no earlier test met: hide_url's cache of names cannot answer for it.
    name = f"x{uuid.uuid4().hex}_token"
    assert hide_url(f"http://h/p?a=1&{name}=v1") == f"http://h/p?a=1&{name}={HIDDEN}"
    assert hide_url(f"http://h/p?{name}=v2") == f"http://h/p?{name}={HIDDEN}"


def test_a_query_value_holding_an_equals_sign_is_hidden_whole() -> None:
    name = f"x{uuid.uuid4().hex}_token"
    assert hide_url(f"http://h/p?{name}=a=b") == f"http://h/p?{name}={HIDDEN}"


def test_the_base64_forms_with_and_without_padding() -> None:
    found = forms("abcdefgh")
    assert {"YWJjZGVmZ2g=", "YWJjZGVmZ2g"} <= found


def test_no_secrets_leave_bytes_as_they_are() -> None:
    assert Secrets().bytes(b"a body") == b"a body"


def test_a_scheme_and_its_credential_are_learnt_apart() -> None:
    secrets = Secrets(["Bearer abcdefgh ijklmnop"])
    assert secrets.text("x abcdefgh ijklmnop y") == f"x {HIDDEN} y"
    # A first word that is not a scheme (not letters only) makes no credential of the rest.
    assert Secrets(["to-ken 12345678"]).text("x 12345678 y") == "x 12345678 y"


def test_a_secret_that_holds_another_is_hidden_whole() -> None:
    secrets = Secrets(["abcdefgh", "0abcdefgh"])
    assert secrets.values.index("0abcdefgh") < secrets.values.index("abcdefgh")
    assert secrets.text("x 0abcdefgh y") == f"x {HIDDEN} y"
