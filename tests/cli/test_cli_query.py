"""``--query KEY=VALUE``: sent with every request of a command, against a stub on loopback."""

from __future__ import annotations

import asyncio
import sys

import pytest
from support import clean_env
from support.samples import envelope, fixture
from support.stub import Stub

pytestmark = pytest.mark.slow  # the command in subprocesses


async def cli(*args: str) -> tuple[int, str, str]:
    """Run the console script; its exit code, stdout and stderr."""
    env = clean_env()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asyncsports",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_query_items_reach_the_server_with_the_commands_own(stub: Stub) -> None:
    stub.add("/basketball/fixtures", envelope([fixture()], 0, 20, 1))
    code, out, err = await cli(
        "fixtures",
        "basketball",
        "--status",
        "suspended",
        "--query",
        "subscribed=true",
        "--query",
        "tag=a",
        "--query",
        "tag=b=c",
        "--query",
        "status=live",  # the command's own --status comes first
        "--base-url",
        stub.url,
        "--token",
        "t",
        "--json",
    )
    assert code == 0, err
    assert out.count("\n") == 1
    query = stub.last().query
    assert [v for k, v in query if k == "status"] == ["suspended"]
    assert ("subscribed", "true") in query
    assert [v for k, v in query if k == "tag"] == ["a", "b=c"]


@pytest.mark.parametrize("item", ["subscribed", "=true"])
async def test_a_query_item_without_a_name_is_a_usage_error(stub: Stub, item: str) -> None:
    code, _, err = await cli(
        "fixtures", "basketball", "--query", item, "--base-url", stub.url, "--token", "t"
    )
    assert code == 2
    assert "--query" in err and "KEY=VALUE" in err
    assert stub.seen == []
