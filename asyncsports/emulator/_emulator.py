"""The :class:`Emulator`: configuration, lifecycle and the handles a test needs."""

from __future__ import annotations

import collections
import datetime as dt
import os
import types
from typing import TYPE_CHECKING, Any

from aiohttp import web

from asyncsports._wire.defaults import SNOOKER_FEED, VENDOR
from asyncsports.auth import StreamingCredentials
from asyncsports.emulator._app import (
    SERVER_LOG,
    STREAMING_PREFIX,
    Access,
    RequestRecord,
    Service,
)
from asyncsports.emulator._clock import Clock
from asyncsports.emulator._faults import Faults
from asyncsports.emulator._live import LiveApi, LiveConfig
from asyncsports.emulator._options import DEFAULT_NOW
from asyncsports.emulator._records import Scale
from asyncsports.emulator._world import World

if TYPE_CHECKING:
    from asyncsports.client import Client
    from asyncsports.emulator._replay import Replay

__all__ = ["DEFAULT_NOW", "Emulator", "ListenError"]


class ListenError(OSError):
    """A port the emulator cannot listen on (in use, or not ours to take): ``keyword``,
    ``port`` or ``live_port``, says which, for a command line to name its option."""

    def __init__(self, keyword: str, port: int, cause: OSError) -> None:
        super().__init__(cause.errno, f"cannot listen on {port}: {cause.strerror or cause}")
        self.keyword = keyword
        self.port = port


def _check(now: dt.datetime, stream_secret: str) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    if not stream_secret:
        raise ValueError("stream_secret must not be empty")


class Emulator:
    """The three services on a loopback port, with data made from ``seed``.

    Use it as an async context manager (``async with Emulator() as emu:``) or call
    :meth:`start` and :meth:`close`. See the package docstring for every argument.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        now: dt.datetime = DEFAULT_NOW,
        token: str = "emulator-token",
        vendor: str = VENDOR,
        snooker_feed: str = SNOOKER_FEED,
        operator_id: int = 1,
        stream_secret: str = "emulator-secret",
        static_stream_auth: tuple[str, int] | None = ("emulator-static-auth", 1385554442935),
        host: str = "127.0.0.1",
        port: int = 0,
        competitions: int = 2,
        seasons: int = 2,
        teams: int = 8,
        fixtures_per_season: int = 24,
        actions_per_fixture: int = 120,
        big_fixture_list: int = 0,
        big_timeline: int = 0,
        latency: float = 0.0,
        rate_limit: int | None = None,
        rate_clock: Clock | None = None,
        running_clock: bool = False,
        speed: float | None = None,
        live_port: int = 0,
        live_heartbeat: float = 20.0,
        live_seq: str = "connection",
        live_ack: bool = True,
        live_dialect: str = "emulator",
        replay: str | os.PathLike[str] | None = None,
    ) -> None:
        _check(now, stream_secret)
        # Scale's fields, by name and in its order (tests/client/test_settings_declared.py
        # checks this signature against them).
        scale = Scale(
            competitions=competitions,
            seasons=seasons,
            teams=teams,
            fixtures_per_season=fixtures_per_season,
            actions_per_fixture=actions_per_fixture,
            big_fixture_list=big_fixture_list,
            big_timeline=big_timeline,
        )
        self.seed, self.host, self.port, self.live_port = seed, host, port, live_port
        # A replay's live feeds keep their recorded gaps: its clock runs unless told.
        running_clock = running_clock or (replay is not None and speed is None)
        self.clock = Clock(now, running=running_clock, speed=speed)
        """The emulator's clock: ``advance(seconds)``, ``set(when)``, ``speed``, ``now()``."""
        self.faults = Faults()
        """Fault rules, the storm and the ``injected`` counters."""
        self.world = World(seed, now, scale)
        """The data catalogue (for introspection; the HTTP interface is the contract)."""
        self._service = Service(
            world=self.world,
            clock=self.clock,
            faults=self.faults,
            access=Access(token, vendor, operator_id, stream_secret, static_stream_auth),
            feed=snooker_feed,
            latency=latency,
            rate_limit=rate_limit,
            rate_clock=Clock(now, running=True) if rate_clock is None else rate_clock,
        )
        config = LiveConfig(live_heartbeat, live_seq, live_ack, live_dialect)
        self._live = self._live_api(config)
        self._replay = self._open_replay(replay)
        self._runner: web.AppRunner | None = None
        self._live_runner: web.AppRunner | None = None

    @property
    def replay(self) -> Replay | None:
        """The recording it serves (``replay=``), or None: it serves its made-up world."""
        return self._replay

    def _open_replay(self, replay: str | os.PathLike[str] | None) -> Replay | None:
        """The recording to serve, read and checked now (RecordingError), or None."""
        if replay is None:
            return None
        from asyncsports.emulator._replay import Replay

        return Replay(replay, self.clock, self.requests, self.log)

    def _live_api(self, config: LiveConfig) -> LiveApi:
        """The live websockets' application, over the same world, clock and faults."""
        return LiveApi(
            world=self.world,
            clock=self.clock,
            faults=self.faults,
            data=self._service.data,
            token=lambda: self._service.access.token,
            requests=self._service.requests,
            config=config,
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start serving (on ``port`` and ``live_port``, or free ones when they are 0)."""
        if self._runner is not None:
            raise RuntimeError("the emulator is already running")
        served = self._replay or self._service
        runner = await self._listen(served.app(), self.port, "port")
        try:
            live_app = self._live.app() if self._replay is None else self._replay.live_app()
            live = await self._listen(live_app, self.live_port, "live_port")
        except BaseException:
            await runner.cleanup()
            raise
        self.port = runner.addresses[0][1]
        self.live_port = live.addresses[0][1]
        self._runner, self._live_runner = runner, live

    async def _listen(self, app: web.Application, port: int, keyword: str) -> web.AppRunner:
        runner = web.AppRunner(
            app, access_log=None, logger=SERVER_LOG, handle_signals=False, shutdown_timeout=1.0
        )
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, port).start()
        except OSError as exc:
            await runner.cleanup()
            raise ListenError(keyword, port, exc) from exc
        except BaseException:
            await runner.cleanup()
            raise
        return runner

    async def close(self) -> None:
        """Stop serving and close open connections (live feeds close with 1001)."""
        runner, self._runner = self._runner, None
        live, self._live_runner = self._live_runner, None
        if live is not None:
            await (self._live if self._replay is None else self._replay).close()
            await live.cleanup()
        if runner is not None:
            await runner.cleanup()

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ addresses, access

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: the data service and the snooker proxy."""
        if self._runner is None:
            raise RuntimeError("the emulator is not running; use `async with Emulator()`")
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    @property
    def live_url(self) -> str:
        """``ws://127.0.0.1:<live_port>``: the streams host of the live feeds (websockets)."""
        base = self.base_url  # raises when not running
        host = base.removeprefix("http://").rpartition(":")[0]
        return f"ws://{host}:{self.live_port}"

    @property
    def live_heartbeat(self) -> float:
        """Real seconds of silence after which a live feed sends a heartbeat (assignable)."""
        return self._live.config.heartbeat

    @live_heartbeat.setter
    def live_heartbeat(self, value: float) -> None:
        if value <= 0:
            raise ValueError("live_heartbeat must be positive")
        self._live.config.heartbeat = value

    @property
    def streaming_url(self) -> str:
        """``{base_url}/streaming``: the live stream events listing."""
        return self.base_url + STREAMING_PREFIX

    @property
    def token(self) -> str:
        """The bearer token the data service accepts (assign to rotate it)."""
        return self._service.access.token

    @token.setter
    def token(self, value: str) -> None:
        self._service.access.token = value

    @property
    def vendor(self) -> str:
        """The vendor of the Accept media type."""
        return self._service.access.vendor

    @property
    def snooker_feed(self) -> str:
        """The snooker feed path segment."""
        return self._service.feed

    @property
    def operator_id(self) -> int:
        """The operatorId the events listing accepts."""
        return self._service.access.operator_id

    @property
    def stream_secret(self) -> str:
        """The operator's secret that signs live stream tokens."""
        return self._service.access.stream_secret

    @property
    def streaming_credentials(self) -> StreamingCredentials:
        """Credentials that sign each request with the secret, by the emulator's clock."""
        return StreamingCredentials.from_secret(
            self.operator_id, self.stream_secret, "127.0.0.1", clock=self.clock.time
        )

    @property
    def static_streaming_credentials(self) -> StreamingCredentials | None:
        """The fixed credentials the listing also accepts (handy with curl), if any."""
        static = self._service.access.static_stream_auth
        if static is None:
            return None
        return StreamingCredentials(self.operator_id, auth=static[0], timestamp=static[1])

    # ------------------------------------------------------------------ knobs, counters

    @property
    def live_packets_sent(self) -> int:
        """Data packets the live feeds sent so far, all connections (heartbeats aside)."""
        return self._live.sent

    @property
    def requests(self) -> collections.Counter[str]:
        """Requests received per route name (``fixtures``, ``actions``, ``snooker.matches``...)."""
        return self._service.requests

    @property
    def log(self) -> collections.deque[RequestRecord]:
        """The last 10,000 requests: route, method, path with query, status."""
        return self._service.log

    @property
    def latency(self) -> float:
        """Seconds added to every response (real time)."""
        return self._service.latency

    @latency.setter
    def latency(self, value: float) -> None:
        if value < 0:
            raise ValueError("latency must not be negative")
        self._service.latency = value

    @property
    def rate_limit(self) -> int | None:
        """Requests per second allowed before 429s (None: no limit)."""
        limiter = self._service.limiter
        return limiter.per_second if limiter is not None else None

    @rate_limit.setter
    def rate_limit(self, value: int | None) -> None:
        self._service.limit(value)

    @property
    def rate_clock(self) -> Clock:
        """The clock the server-side rate limit counts its one-second windows on.

        Not :attr:`clock`: real time (a running :class:`Clock`) unless a frozen one was
        passed as ``rate_clock=``, which a test advances to open the window again.
        """
        return self._service.rate_clock

    @property
    def big_season_id(self) -> str | None:
        """The basketball season holding ``big_fixture_list`` fixtures, if asked for."""
        if not self.world.scale.big_fixture_list:
            return None
        return self.world.seasons("basketball")[-1].id

    @property
    def big_fixture_id(self) -> str | None:
        """The american-football fixture with the ``big_timeline`` timeline, if asked for."""
        if not self.world.scale.big_timeline:
            return None
        return self.world.fixture(self.world.seasons("american-football")[-1], 0).id

    def client(self, **kw: Any) -> Client:
        """A :class:`asyncsports.client.Client` bound to this emulator (``kw`` overrides)."""
        from asyncsports.client import Client

        args: dict[str, Any] = {
            "token": self.token,
            "vendor": self.vendor,
            "snooker_feed": self.snooker_feed,
            "streaming_url": self.streaming_url,
            "streaming_credentials": self.streaming_credentials,
            "live_url": self.live_url,
        }
        args.update(kw)
        return Client(self.base_url, **args)
