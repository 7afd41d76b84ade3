import pytest

from asyncsports.auth import StreamingCredentials, TokenProvider, stream_token


def test_stream_token_matches_the_documented_vector() -> None:
    assert stream_token("testtoken", "1.2.3.4", 1385554442935) == "51cc11786ddac11c7af450ec5b42aee4"


def test_from_secret_signs_every_request_with_a_fresh_timestamp() -> None:
    times = iter([1385554442.935, 1385554443.5])
    creds = StreamingCredentials.from_secret(7, "testtoken", "1.2.3.4", clock=lambda: next(times))
    first = dict(creds.params())
    assert first == {
        "operatorId": "7",
        "auth": "51cc11786ddac11c7af450ec5b42aee4",
        "timestamp": "1385554442935",
    }
    second = dict(creds.params())
    assert second["timestamp"] == "1385554443500"
    assert second["auth"] == stream_token("testtoken", "1.2.3.4", 1385554443500)


def test_fixed_credentials_are_sent_as_given_and_hide_secrets_in_repr() -> None:
    creds = StreamingCredentials(3, "abc", 42)
    assert creds.params() == [("operatorId", "3"), ("auth", "abc"), ("timestamp", "42")]
    assert "abc" not in repr(creds)
    assert "testtoken" not in repr(StreamingCredentials.from_secret(1, "testtoken", "1.2.3.4"))


def test_from_secret_refuses_an_empty_secret() -> None:
    with pytest.raises(ValueError, match="secret"):
        StreamingCredentials.from_secret(1, "", "1.2.3.4")


async def test_token_provider_asks_a_callable_once_until_invalidated() -> None:
    calls = []

    async def source() -> str:
        calls.append(1)
        return f"t{len(calls)}"

    tokens = TokenProvider(source)
    assert tokens.refreshable
    assert await tokens.get() == "t1"
    assert await tokens.get() == "t1"
    tokens.invalidate()
    assert await tokens.get() == "t2"


async def test_token_provider_rejects_a_callable_returning_nothing() -> None:
    tokens = TokenProvider(lambda: "")
    with pytest.raises(TypeError, match="non-empty str"):
        await tokens.get()
    with pytest.raises(TypeError, match="token"):
        TokenProvider(42)  # type: ignore[arg-type]


async def test_a_plain_string_token_never_changes() -> None:
    tokens = TokenProvider("fixed")
    tokens.invalidate()
    assert not tokens.refreshable
    assert await tokens.get() == "fixed"
