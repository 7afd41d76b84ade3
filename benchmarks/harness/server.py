"""The benchmark server: emulators behind a cache of pre-rendered bodies, in its own process.

``python -m benchmarks.harness.server --big-fixture-list N --big-timeline M --prefixes 5000,20000``
starts two :class:`~asyncsports.emulator.Emulator` instances (``big``: the big season
and the big timeline; ``plain``: an ordinary world for the backfill, scaled by
``--plain-scale``) and, in front of each, a tiny aiohttp app that answers every request
from a cache keyed by path and query. A miss is rendered once by the emulator and kept,
so after a warm-up pass the server only copies stored bytes: its CPU is not what a
benchmark measures, and it runs on its own core (``--cpu``).

At start it renders the big timeline and stores prefixes of it (the first ``k``
records, cut at element boundaries) under made-up fixture ids, so one rendering serves
every timeline size. It then prints one JSON line (the manifest: addresses, token,
ids) and serves until its stdin closes (the parent died or is done) or SIGTERM.

Control routes on either port: ``/_bench/config?latency=S`` sets the latency added to
every response; ``/_bench/stats`` gives ``{"hits": n, "misses": n}``; ``/_bench/reset``
zeroes them.

With ``--live-packets K`` it also serves the live actions feeds on a port of its own
(:mod:`benchmarks.harness.liveserver`): the first ``K`` packets of the big timeline's live feed,
rendered once by the emulator's streams host, replayed to any fixture id.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import msgspec
from aiohttp import web

from asyncsports.emulator import Emulator
from benchmarks.harness.liveserver import LiveCache, render_packets

# Bodies above this are written in pieces: one huge write would make asyncio (3.11) copy
# the body into its buffer and shift it after every send.
_PIECE = 256 * 1024
_FORWARD = ("Authorization", "Accept", "Content-Type")
_NAMESPACE = uuid.UUID("6f0c3d0e-9b1a-4c7e-8a55-0b3a7d2b1c00")


@dataclass
class Stored:
    """One pre-rendered response."""

    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class State:
    """What both cache apps share: the latency knob and the counters."""

    latency: float = 0.0
    hits: int = 0
    misses: int = 0


def timeline_id(records: int) -> str:
    """The made-up fixture id under which the first ``records`` actions are stored."""
    return str(uuid.uuid5(_NAMESPACE, f"timeline-{records}"))


class Cache:
    """An aiohttp app answering from stored bodies, rendering misses with ``upstream``."""

    def __init__(self, upstream: str, state: State) -> None:
        self.upstream = upstream
        self.state = state
        self.store: dict[str, Stored] = {}
        self._http: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/_bench/config", self._config)
        app.router.add_get("/_bench/stats", self._stats)
        app.router.add_get("/_bench/reset", self._reset)
        app.router.add_route("GET", "/{tail:.*}", self._serve)
        app.on_cleanup.append(self._close)
        return app

    async def render(self, path_qs: str, headers: dict[str, str]) -> Stored:
        """Fetch ``path_qs`` from the emulator once and keep it."""
        if self._http is None:
            timeout = aiohttp.ClientTimeout(total=None)
            self._http = aiohttp.ClientSession(timeout=timeout, auto_decompress=False)
        async with self._http.get(self.upstream + path_qs, headers=headers) as resp:
            body = await resp.read()
            kept = {k: v for k, v in resp.headers.items() if k in ("Retry-After",)}
            stored = Stored(resp.status, resp.content_type, body, kept)
        self.store[path_qs] = stored
        return stored

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        stored = self.store.get(request.path_qs)
        if stored is None:
            state.misses += 1
            headers = {k: v for k in _FORWARD if (v := request.headers.get(k)) is not None}
            stored = await self.render(request.path_qs, headers)
        else:
            state.hits += 1
        if state.latency:
            await asyncio.sleep(state.latency)
        body = stored.body
        if len(body) <= _PIECE:
            return web.Response(
                body=body,
                status=stored.status,
                content_type=stored.content_type,
                headers=stored.headers,
            )
        resp = web.StreamResponse(status=stored.status, headers=stored.headers)
        resp.content_type = stored.content_type
        resp.content_length = len(body)
        await resp.prepare(request)
        view = memoryview(body)
        try:
            for i in range(0, len(body), _PIECE):
                await resp.write(view[i : i + _PIECE])
            await resp.write_eof()
        except ConnectionError:
            pass  # the client stopped reading (a benchmark that breaks off)
        return resp

    async def _config(self, request: web.Request) -> web.Response:
        if "latency" in request.query:
            self.state.latency = float(request.query["latency"])
        return web.json_response({"latency": self.state.latency})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response({"hits": self.state.hits, "misses": self.state.misses})

    async def _reset(self, request: web.Request) -> web.Response:
        self.state.hits = self.state.misses = 0
        return web.json_response({})

    async def _close(self, app: web.Application) -> None:
        if self._http is not None:
            await self._http.close()


async def _listen(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


def _scale(text: str) -> dict[str, Any]:
    """``name=number,...`` as Emulator keywords."""
    out: dict[str, Any] = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = int(value)
    return out


async def _wait_for_parent() -> None:
    """Return when stdin reaches EOF: the parent closed it or went away."""
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.buffer.read)


async def serve(args: argparse.Namespace) -> None:
    state = State()
    big = Emulator(
        seed=args.seed, big_fixture_list=args.big_fixture_list, big_timeline=args.big_timeline
    )
    plain = Emulator(seed=args.seed, **_scale(args.plain_scale))
    runners: list[web.AppRunner] = []
    async with big, plain:
        caches = {"big": Cache(big.base_url, state), "plain": Cache(plain.base_url, state)}
        bases: dict[str, str] = {}
        for name, cache in caches.items():
            runner, bases[name] = await _listen(cache.app())
            runners.append(runner)
        headers = {
            "Authorization": f"Bearer {big.token}",
            "Accept": f"application/vnd.{big.vendor}.dde.api+json;version=1",
        }
        live = ""
        if args.live_packets:
            fid = str(big.big_fixture_id)
            packets = await render_packets(
                big.live_url, "american-football", fid, big.token, args.live_packets
            )
            runner, http_url = await _listen(LiveCache(big.token, packets, fid).app())
            runners.append(runner)
            live = "ws" + http_url.removeprefix("http")
        timelines: dict[str, str] = {}
        if args.big_timeline:
            cache = caches["big"]
            path = f"/american-football/fixtures/{big.big_fixture_id}/actions"
            whole = await cache.render(path, headers)
            raws = msgspec.json.decode(whole.body, type=list[msgspec.Raw])
            for k in sorted({int(p) for p in args.prefixes.split(",") if p}):
                if k > len(raws):
                    raise SystemExit(f"prefix {k} exceeds the timeline of {len(raws)} actions")
                if k == len(raws):
                    timelines[str(k)] = str(big.big_fixture_id)  # the whole body, no copy
                    continue
                fid = timeline_id(k)
                body = b"[" + b",".join(bytes(r) for r in raws[:k]) + b"]"
                cache.store[f"/american-football/fixtures/{fid}/actions"] = Stored(
                    200, whole.content_type, body
                )
                timelines[str(k)] = fid
            del raws
        manifest: dict[str, Any] = {
            "pid": os.getpid(),
            "big": bases["big"],
            "plain": bases["plain"],
            "token": big.token,
            "vendor": big.vendor,
            "big_season_id": big.big_season_id,
            "big_fixture_list": args.big_fixture_list,
            "timelines": timelines,
            "live": live,
        }
        print(json.dumps(manifest), flush=True)
        try:
            await _wait_for_parent()
        finally:
            for runner in runners:
                await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--big-fixture-list", type=int, default=0)
    parser.add_argument("--big-timeline", type=int, default=0)
    parser.add_argument(
        "--live-packets", type=int, default=0, help="live feed packets to store (0: no feeds)"
    )
    parser.add_argument("--prefixes", default="", help="timeline sizes to store: 5000,20000")
    parser.add_argument(
        "--plain-scale", default="", help="Emulator keywords: fixtures_per_season=12"
    )
    parser.add_argument("--cpu", type=int, default=None, help="pin this process to one CPU")
    args = parser.parse_args(argv)
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    # SIGTERM ends the process at once; stdin's EOF is the orderly way out.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
