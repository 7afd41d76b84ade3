"""Where a request's time goes: ``python -m benchmarks.hotpath turns|costs``.

``turns``: event-loop turns, callbacks, Tasks and timers per request of each
request-path variant (the floor's and the client's), counted in-process against the
benchmark server. Counts, not times: they do not move with the machine's load.

``costs``: instructions per use of the mechanisms a request path may be built from
(a Task, a loop turn, an ``@asynccontextmanager``, an anyio scope, a timer, a frozen
dataclass, a yarl URL...), each counted by valgrind's callgrind over 2,000 uses. They
price a design choice before it is made; see "Where a request's time goes" in
benchmarks/README.md for what the current client spends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

from benchmarks.harness.measure import callgrind

HERE = Path(__file__).resolve().parent
USES = 2_000


async def _turns(m: dict[str, Any], gets: int) -> list[tuple[str, dict[str, float]]]:
    import asyncio.base_events as base_events
    import asyncio.events as events

    import aiohttp

    from benchmarks.cases._walks import _fixture_ids, get_variants, walk_variants
    from benchmarks.harness.manifest import SPORT
    from benchmarks.harness.manifest import client as _client

    counts = {"turns": 0, "callbacks": 0, "tasks": 0, "timers": 0}
    loop = asyncio.get_running_loop()
    run_once = base_events.BaseEventLoop._run_once  # type: ignore[attr-defined]
    handle_run = events.Handle._run
    create_task, call_at = loop.create_task, loop.call_at

    def counted_run_once(self: Any) -> None:
        counts["turns"] += 1
        run_once(self)

    def counted_run(self: Any) -> None:
        counts["callbacks"] += 1
        handle_run(self)

    def counted_create_task(*a: Any, **k: Any) -> Any:
        counts["tasks"] += 1
        return create_task(*a, **k)

    def counted_call_at(*a: Any, **k: Any) -> Any:
        counts["timers"] += 1
        return call_at(*a, **k)

    out: list[tuple[str, dict[str, float]]] = []
    async with _client(m) as client, aiohttp.ClientSession() as http:
        ids = await _fixture_ids(http, m, gets)
        size = 20
        pages = m["big_fixture_list"] // size
        walks = walk_variants(client, http, m, size)

        async def lookahead0() -> int:
            n = 0
            listing = client.fixtures.list(
                SPORT, season_id=m["big_season_id"], size=size, lookahead=0
            )
            async for page in listing.pages():
                n += len(page)
            return n

        variants: dict[str, tuple[Callable[[], Awaitable[int]], int]] = {
            f"walk, {size} a page: floor": (walks["floor"], pages),
            f"walk, {size} a page: records": (walks["asyncsports"], pages),
            f"walk, {size} a page: pages()": (walks["asyncsports pages()"], pages),
            f"walk, {size} a page: pages(), lookahead=0": (lookahead0, pages),
        }
        for name, fn in get_variants(client, http, m, ids).items():
            variants[f"get: {name}"] = (fn, len(ids))
        with contextlib.ExitStack() as patches:
            for target, attr, counted in (
                (base_events.BaseEventLoop, "_run_once", counted_run_once),
                (events.Handle, "_run", counted_run),
                (loop, "create_task", counted_create_task),
                (loop, "call_at", counted_call_at),  # call_later goes through it
            ):
                patches.enter_context(mock.patch.object(target, attr, counted))
            for name, (fn, requests) in variants.items():
                await fn()  # warm: connections, the server's cache
                for key in counts:
                    counts[key] = 0
                await fn()
                out.append((name, {k: v / requests for k, v in counts.items()}))
    return out


def turns(gets: int = 100) -> None:
    """Print the counts per request of each variant, against a fresh benchmark server."""
    from benchmarks.harness.children import QUICK, Server, cpus

    server_cpu, client_cpus = cpus(True)
    # The quick season (2,000 fixtures), without the big timeline or live feeds: nothing here
    # streams.
    server = Server(dataclasses.replace(QUICK, memory_records=0, live_packets=0), server_cpu)
    try:
        if client_cpus and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, set(client_cpus))
        rows = asyncio.run(_turns(server.manifest, gets))
    finally:
        server.close()
    print("per request       turns  callbacks  tasks  timers")
    for name, c in rows:
        print(
            f"{name:45s} {c['turns']:5.2f} {c['callbacks']:9.2f} {c['tasks']:6.2f} "
            f"{c['timers']:7.2f}"
        )


# --------------------------------------------------------------------------- costs


_ITEMS = list(range(20))


@contextlib.asynccontextmanager
async def _acm() -> Any:
    yield


class _Plain:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


class _Records:
    """An async iterator whose __anext__ is a coroutine (AsyncList's shape)."""

    def __init__(self) -> None:
        self.i = 0

    def __aiter__(self) -> _Records:
        return self

    async def __anext__(self) -> int:
        if self.i == len(_ITEMS):
            raise StopAsyncIteration
        self.i += 1
        return _ITEMS[self.i - 1]


async def _agen() -> Any:
    for x in _ITEMS:
        yield x


async def _nothing() -> None:
    return None


def _loop_mechanisms() -> dict[str, Callable[[], Any]]:
    """name -> a coroutine function (or a function) using one of the loop's mechanisms once."""
    import anyio

    loop = asyncio.get_running_loop()
    nothing = _nothing

    async def a_await() -> None:
        await nothing()

    async def a_task() -> None:
        await asyncio.ensure_future(nothing())

    async def a_create_task() -> None:
        await loop.create_task(nothing())

    async def a_turn() -> None:
        await asyncio.sleep(0)

    async def a_acm() -> None:
        async with _acm():
            pass

    async def a_plain() -> None:
        async with _Plain():
            pass

    async def a_fail_after() -> None:
        with anyio.fail_after(30):
            await nothing()

    async def a_fail_after_none() -> None:
        with anyio.fail_after(None):
            await nothing()

    async def a_asyncio_timeout() -> None:
        async with asyncio.timeout(30):
            await nothing()

    async def a_records() -> None:
        async for _ in _Records():
            pass

    async def a_agen() -> None:
        async for _ in _agen():
            pass

    def timer() -> None:
        loop.call_later(30, print).cancel()

    return {
        "await a coroutine (the loop's own cost)": a_await,
        "a Task: asyncio.ensure_future(coro) + await (2 loop turns)": a_task,
        "a Task: loop.create_task(coro) + await": a_create_task,
        "one loop turn: asyncio.sleep(0)": a_turn,
        "@asynccontextmanager enter + exit": a_acm,
        "class with __aenter__/__aexit__ enter + exit": a_plain,
        "anyio.fail_after(30) around an await": a_fail_after,
        "anyio.fail_after(None) around an await": a_fail_after_none,
        "asyncio.timeout(30) around an await": a_asyncio_timeout,
        "a timer: loop.call_later(30) + cancel": timer,
        "20 records through a coroutine __anext__": a_records,
        "20 records through an async generator": a_agen,
    }


def _object_mechanisms() -> dict[str, Callable[[], Any]]:
    """name -> a function building one kind of object once."""
    import yarl

    url = "http://127.0.0.1:8080/basketball/seasons/0e8a6c5e-6a5a-4a8f-8f22-3a7e4e1b3c55/fixtures"
    query = [("paged", "true"), ("size", "20"), ("page", "3")]
    built = yarl.URL(url).with_query(query)
    params = (("paged", "true"), ("size", "20"))

    @dataclasses.dataclass(frozen=True, slots=True)
    class Frozen:
        path: str
        params: tuple[tuple[str, str], ...] = ()
        host: str = "data"

    class Slots:
        __slots__ = ("host", "params", "path")

        def __init__(self, path: str, params: tuple[tuple[str, str], ...] = ()) -> None:
            self.path, self.params, self.host = path, params, "data"

    class Tuple(NamedTuple):
        path: str
        params: tuple[tuple[str, str], ...] = ()
        host: str = "data"

    frozen = Frozen("/x", params)
    return {
        "frozen slots dataclass (3 fields)": lambda: Frozen("/x", params),
        "dataclasses.replace of it": lambda: dataclasses.replace(frozen, params=params),
        "__slots__ class (3 fields)": lambda: Slots("/x", params),
        "NamedTuple (3 fields)": lambda: Tuple("/x", params),
        "yarl.URL(str).with_query(params)": lambda: yarl.URL(url).with_query(query),
        "str(yarl.URL) of a built URL": lambda: str(built),
        "header dict of 3": lambda: {"Accept": "a", "Content-Type": "b", "Authorization": "c"},
    }


def _mechanisms() -> dict[str, Callable[[], Any]]:
    """name -> a sync function or a coroutine function using one mechanism once."""
    return {**_loop_mechanisms(), **_object_mechanisms()}


async def _run_mechanisms(names: list[str]) -> None:
    table = _mechanisms()
    for name in names:
        fn = table[name]
        is_async = asyncio.iscoroutinefunction(fn)
        for _ in range(50):  # warm: specialisation, caches
            result = fn()
            if is_async:
                await result
        gc.collect()
        print("ready", flush=True)
        sys.stdin.readline()
        if is_async:
            for _ in range(USES):
                await fn()
        else:
            for _ in range(USES):
                fn()
        print("done", flush=True)
        sys.stdin.readline()


async def _names() -> list[str]:
    return list(_mechanisms())


def costs() -> None:
    """Print instructions per use of each mechanism, counted by callgrind in one process."""
    names = asyncio.run(_names())
    argv = [sys.executable, "-m", "benchmarks.hotpath", "_child", json.dumps(names)]
    totals = callgrind(argv, len(names), HERE.parent)
    print(f"instructions per use (callgrind, {USES:,} uses each)")
    for name, total in zip(names, totals, strict=True):
        print(f"{name:60s} {total / USES:9,.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hotpath", description=__doc__)
    parser.add_argument("what", choices=("turns", "costs", "_child"))
    parser.add_argument("names", nargs="?", default="[]", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.what == "turns":
        turns()
    elif args.what == "costs":
        costs()
    else:
        asyncio.run(_run_mechanisms(json.loads(args.names)))


if __name__ == "__main__":
    main()
