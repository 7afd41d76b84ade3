"""What a case needs to reach the benchmark server: its manifest's addresses and the token.

The server (:mod:`benchmarks.harness.server`) prints the manifest when it is ready; the
harness hands it to every case's child process.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from asyncsports import Client

__all__ = [
    "SPORT",
    "TIMELINE_SPORT",
    "Manifest",
    "Params",
    "actions_path",
    "client",
    "control",
    "fetch",
    "fixtures_path",
    "headers",
]

Manifest = dict[str, Any]
Params = dict[str, Any]
SPORT = "basketball"  # the big season's sport
TIMELINE_SPORT = "american-football"  # the big timeline's sport


def headers(m: Manifest) -> dict[str, str]:
    """The headers the service asks for: the bearer token and the vendor's media type."""
    return {
        "Authorization": f"Bearer {m['token']}",
        "Accept": f"application/vnd.{m['vendor']}.dde.api+json;version=1",
    }


def client(m: Manifest, base: str = "big") -> Client:
    """An asyncsports client of one of the server's emulators (``big`` or ``plain``)."""
    return Client(m[base], token=m["token"], vendor=m["vendor"])


def fixtures_path(m: Manifest) -> str:
    """The big season's fixture listing."""
    return f"/{SPORT}/seasons/{m['big_season_id']}/fixtures"


def actions_path(m: Manifest, records: int) -> str:
    """The stored timeline of ``records`` actions."""
    return f"/{TIMELINE_SPORT}/fixtures/{m['timelines'][str(records)]}/actions"


async def fetch(http: aiohttp.ClientSession, url: str, hdrs: dict[str, str], **kw: Any) -> bytes:
    """One GET's body, raising on an error status."""
    async with http.get(url, headers=hdrs, **kw) as resp:
        resp.raise_for_status()
        return await resp.read()


async def control(m: Manifest, base: str, route: str) -> dict[str, Any]:
    """One of the server's ``/_bench/`` routes (``stats``, ``reset``) on ``base``'s port."""
    async with aiohttp.ClientSession() as http, http.get(f"{m[base]}/_bench/{route}") as r:
        result: dict[str, Any] = await r.json()
        return result
