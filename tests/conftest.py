"""The fixtures most tests share: loopback servers (``serve(handler)``, and ``stub``,
hand-written JSON, built on it), a client of the stub, the throwaway PostgreSQL and Redis
servers (tests/support/servers.py); and the hooks: a test on one of those servers is slow.
The helpers these fixtures are built on live in tests/support/."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Iterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import HealthCheck, settings
from support import share
from support.servers import PostgresServer, RedisServer, missing, postgres_server
from support.stub import Handler, Serve, Stub

from asyncsports import Client, RetryPolicy, StreamingCredentials

# pytester: tests of this suite's own plugin; support.timing: the fast suite's time, printed
# at the end of a run; support.teardown_timeout: pytest-timeout's bound kept through a failed
# test's teardown.
pytest_plugins = ["pytester", "support.timing", "support.teardown_timeout"]

# No hypothesis deadline nor "too slow" check: wall-clock limits per example, which a
# loaded machine (CI runs its two legs side by side) breaks at random; a test's speed is
# measured in benchmarks/, never asserted here.
settings.register_profile(
    "asyncsports", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("asyncsports")

# dlt sends anonymous usage telemetry as a process ends; offline (CI) that waits a minute
# for the network. Off for the tests and every command and page they run.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

# The throwaway servers' fixtures: a test on one is slow, it talks to another process.
SERVERS = frozenset({"postgres", "postgres_url", "redis", "redis_url", "bus"})


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """``url = await serve(handler)``: ``handler`` answers every path (or pass a whole
    ``web.Application``); every server started is closed when the test ends."""
    async with contextlib.AsyncExitStack() as servers:

        async def start(handler: Handler | web.Application) -> str:
            if isinstance(handler, web.Application):
                app = handler
            else:
                app = web.Application()
                app.router.add_route("*", "/{tail:.*}", handler)
            server = TestServer(app, host="127.0.0.1")
            await server.start_server()
            servers.push_async_callback(server.close)
            return str(server.make_url("")).rstrip("/")

        yield start


@pytest.fixture
async def stub(serve: Serve) -> Stub:
    s = Stub()
    s.url = await serve(s.handle)
    return s


@pytest.fixture
async def client(stub: Stub) -> AsyncIterator[Client]:
    async with Client(
        stub.url,
        token="secret-token",
        streaming_url=stub.url,
        streaming_credentials=StreamingCredentials(9, "stream-auth", 1700000000000),
        retry=RetryPolicy(max_retries=2, base=0.0, cap=0.0),
    ) as c:
        yield c


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that uses a database server (tests/support/servers.py);
    then keep only this run's share of the slow tests, if one is set (support.share)."""
    for item in items:
        if SERVERS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    share.split(config, items)


def pytest_report_header(config: pytest.Config) -> str | None:
    """The share of the slow tests this run keeps, if one is set (support.share)."""
    return share.header()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the whole session (initdb takes a second or two)."""
    with postgres_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    """A fresh, empty database of its own for the test."""
    return postgres.create_database()


@pytest.fixture(scope="session")
def redis() -> Iterator[RedisServer]:
    """One Redis server for the whole session."""
    binary = shutil.which("redis-server")
    if binary is None:
        missing("Redis (redis-server)")
    assert binary is not None
    server = RedisServer(binary)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_url(redis: RedisServer) -> str:
    """A Redis database of its own for the test."""
    return redis.fresh()
