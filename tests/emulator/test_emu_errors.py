"""Errors as DESIGN.md and docs/wire.md describe them."""

from __future__ import annotations

import pytest
from support.api import ACCEPT, Api

PATHS = ["/basketball/fixtures", "/snooker/tvfeed/tour-players", "/nowhere"]


@pytest.mark.parametrize("path", PATHS)
async def test_missing_accept_is_400_with_a_text_body(api: Api, path: str) -> None:
    r = await api.get(path, headers={"Authorization": f"Bearer {api.emu.token}"})
    assert r.status == 400
    assert r.headers["Content-Type"].startswith("text/plain")
    assert r.body == b"Request is missing required HTTP header 'Accept'"


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "*/*",
        "application/vnd.othervendor.dde.api+json;version=1",
        "application/vnd.imggaming.dde.api+json;version=2",
    ],
)
async def test_another_accept_is_400(api: Api, accept: str) -> None:
    r = await api.get(PATHS[0], headers={**api.headers(), "Accept": accept})
    assert r.status == 400 and r.headers["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize(
    "accept",
    [
        "application/vnd.imggaming.dde.api+json",
        "application/json, application/vnd.imggaming.dde.api+json; version=1",
        "APPLICATION/VND.IMGGAMING.DDE.API+JSON;version=1",
    ],
)
async def test_accept_variants_that_name_the_media_type_pass(api: Api, accept: str) -> None:
    assert (await api.get(PATHS[0], headers={**api.headers(), "Accept": accept})).status == 200


@pytest.mark.parametrize("authorization", [None, "", "Bearer", "Bearer  "])
async def test_missing_token_is_401_json(api: Api, authorization: str | None) -> None:
    headers = {"Accept": ACCEPT}
    if authorization is not None:
        headers["Authorization"] = authorization
    r = await api.get(PATHS[0], headers=headers)
    assert r.status == 401
    assert r.json() == {
        "error": "The resource requires authentication, which was not supplied with the request",
        "status": 401,
    }


@pytest.mark.parametrize("authorization", ["Bearer wrong", "Basic abc", "emulator-token"])
async def test_wrong_token_is_401_with_www_authenticate(api: Api, authorization: str) -> None:
    r = await api.get(PATHS[1], headers={"Accept": ACCEPT, "Authorization": authorization})
    assert r.status == 401
    assert r.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert r.body == b"{The supplied authentication is invalid}"


async def test_the_token_can_be_rotated(api: Api) -> None:
    old = api.headers()
    api.emu.token = "rotated"
    assert (await api.get(PATHS[0], headers=old)).status == 401
    assert (await api.get(PATHS[0])).status == 200


async def test_unknown_paths_are_404_and_other_methods_405(api: Api) -> None:
    for path in ("/nowhere", "/basketball/fixtures/x/y/z", "/streaming/nowhere"):
        r = await api.get(path, api.emu.streaming_credentials.params())
        assert r.status == 404 and r.json()["status"] == 404
    url = api.emu.base_url + "/basketball/fixtures"
    async with api.session.post(url, headers=api.headers()) as resp:
        assert resp.status == 405
