"""The live host that moved: a connection to the decommissioned streams host that fails
names today's host (docs/wire.md, "The service's hosts").

No network: the client's transport seam (tests/support/wrapping.py) sends a connection
to the old host to a loopback port nobody listens on (a real connect, refused), or fails
it as a resolver does for a name that no longer resolves.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Mapping

import pytest
from support.wrapping import Wrapping

from asyncsports import Client, RetryPolicy
from asyncsports.errors import TransportError
from asyncsports.transports import Listener, Pushed

OLD = "dde-streams.data.imgarena.com"
NEW = "wss://dde-streams.data.srarena.io"
ONCE = RetryPolicy(max_retries=0)


def closed_port() -> int:
    """A loopback port that was just free: a connect to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Refused(Wrapping):
    """Every websocket goes to a loopback port nobody listens on, whatever host it names."""

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        path = url.split("://", 1)[1].partition("/")[2]
        here = f"ws://127.0.0.1:{closed_port()}/{path}"
        return await self.inner.listen(here, headers, max_size, listener)


class Unresolved(Wrapping):
    """Every websocket fails as a connect to a name the resolver does not know."""

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


async def failure(live_url: str, transport: type[Wrapping]) -> TransportError:
    async with Client(
        "http://127.0.0.1:9", token="t", live_url=live_url, retry=ONCE, transport=transport
    ) as client:
        with pytest.raises(TransportError) as caught:
            async for _ in client.live.actions("basketball", uuid.UUID(int=1)):
                pass
    return caught.value


@pytest.mark.parametrize("transport", [Refused, Unresolved], ids=["refused", "unresolved"])
async def test_a_failed_connection_to_the_old_host_names_the_new_one(
    transport: type[Wrapping],
) -> None:
    error = await failure(f"wss://{OLD}", transport)
    notes = "\n".join(getattr(error, "__notes__", ()))
    assert OLD in str(error) and NEW in notes and "30 September 2026" in notes, (error, notes)


async def test_the_old_host_with_a_path_or_port_is_the_old_host() -> None:
    error = await failure(f"wss://{OLD.upper()}:443/", Refused)
    assert NEW in "\n".join(getattr(error, "__notes__", ()))


@pytest.mark.parametrize("host", ["dde-streams.data.srarena.io", "streams.example.com"])
async def test_another_host_that_fails_has_no_such_note(host: str) -> None:
    error = await failure(f"wss://{host}", Refused)
    assert not getattr(error, "__notes__", ()), error.__notes__


def test_the_missing_live_url_hint_names_todays_host() -> None:
    client = Client("http://127.0.0.1:9", token="t")
    with pytest.raises(ValueError, match="live_url") as caught:
        client.live.actions("basketball", uuid.UUID(int=1))
    assert NEW in str(caught.value) and OLD not in str(caught.value)
