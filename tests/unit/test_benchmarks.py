"""The benchmark harness's own logic: verdicts, the table, the caching server. No timings."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest
from support.stub import Serve

# benchmarks/ is a directory of the repository, not part of the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from asyncsports.emulator import Emulator
from benchmarks.cases import sync as sync_case
from benchmarks.cases import transport as transport_case
from benchmarks.cases._live import (
    DECODE,
    IDLE_VARIANTS,
    LIVE_VARIANTS,
    SPORT,
    control,
    fanin,
    fixture_ids,
    idle,
    live,
)
from benchmarks.harness.liveserver import LiveCache, render_packets
from benchmarks.harness.registry import build_rows
from benchmarks.harness.report import Row, markdown
from benchmarks.harness.server import Cache, State, Stored, timeline_id


def test_verdicts_follow_the_kind_of_ratio() -> None:
    faster = Row("decode", "c", "m", "ms", 1.0, 3.5, "peer", "faster", 3.0)
    assert faster.ratio == 3.5 and faster.passed
    cost = Row("walk", "c", "m", "us", 11.5, 10.0, "floor", "cost", 1.10)
    assert cost.ratio == 1.15 and cost.passed is False
    below = Row("stream", "c", "m", "MB", 12.0, 900.0, "whole", "below", 50.0)
    assert below.passed and below.target_text() == "< 50 MB"
    assert Row("backfill", "c", "m", "/s", 100.0).passed is None


def test_rows_and_table_from_raw_results() -> None:
    def rounds(*cpu: float) -> dict[str, list[float]]:
        return {"cpu": list(cpu), "wall": list(cpu), "gc": [0.0] * len(cpu)}

    walk = {
        "fixtures": 2000,
        "pages": 20,
        "asyncsports": rounds(0.2, 0.3, 0.2),
        "asyncsports pages()": rounds(0.2, 0.2, 0.2),
        "floor": rounds(0.195, 0.2, 0.195),
        "misses": 0,
    }
    raw = {
        "walk": walk,
        "walk20": {**walk, "pages": 100, "asyncsports": rounds(0.25, 0.2, 0.25)},
        "gets": {"gets": 100, "asyncsports": rounds(0.022), "floor": rounds(0.02), "misses": 0},
        "peers": {
            "fixtures": 2000,
            "pages": 20,
            "asyncsports": rounds(0.2),
            "httpx+pydantic": rounds(1.6),
        },
        "fanout": {"error": "exit 1: boom"},
    }
    rows = build_rows(raw, quick=True)
    assert [(r.benchmark, r.kind, r.target) for r in rows] == [
        ("walk", "cost", 1.05),  # 100 a page: records, pages()
        ("walk", "cost", 1.05),
        ("walk", "cost", 1.10),  # 20 a page, the default: records, pages()
        ("walk", "cost", 1.10),
        ("get", "cost", 1.10),
        ("walk", "faster", 5.0),
        ("fan-out", "info", None),
    ]
    # The ratio is the median of per-round ratios: the 0.3 round (1.5x) does not count.
    assert rows[0].ratio == 0.2 / 0.195 and rows[0].passed
    assert rows[2].ratio == 0.25 / 0.195 and rows[2].passed is False
    assert "100-page fixture walk, 20 per page" in rows[2].case
    assert rows[4].ratio == pytest.approx(1.1) and rows[4].value == pytest.approx(220.0)
    assert rows[5].ratio == 8.0 and rows[5].passed and rows[6].note == "exit 1: boom"
    meta = {
        "mode": "quick",
        "started": "now",
        "command": "python -m benchmarks --quick",
        "seconds": 1.0,
        "machine": {"cpu": "x", "cores": 2, "memory_gb": 1, "python": "3.11", "platform": "p"},
        "placement": "not pinned",
        "load_before": "0",
        "load_after": "0",
        "versions": {"msgspec": "0"},
    }
    text = markdown(rows, meta)
    assert "| walk |" in text and "8.0x faster" in text and "exit 1: boom" in text


async def test_cache_renders_a_body_once_then_serves_it(serve: Serve) -> None:
    state = State()
    async with Emulator(seed=0) as emu:
        cache = Cache(emu.base_url, state)
        cache.store["/made/up"] = Stored(200, "application/json", b"[1,2]")
        url = await serve(cache.app())
        headers = {
            "Authorization": f"Bearer {emu.token}",
            "Accept": f"application/vnd.{emu.vendor}.dde.api+json;version=1",
        }
        async with aiohttp.ClientSession() as http:
            bodies = []
            for _ in range(2):
                async with http.get(f"{url}/soccer/fixtures", headers=headers) as r:
                    assert r.status == 200
                    bodies.append(await r.read())
            async with http.get(f"{url}/made/up") as r:
                assert msgspec.json.decode(await r.read()) == [1, 2]
    assert bodies[0] == bodies[1]
    assert (state.misses, state.hits) == (1, 2)
    assert timeline_id(5000) == timeline_id(5000) != timeline_id(5001)


def test_instruction_rows_follow_their_case() -> None:
    walk20 = {"case": "walk", "size": 20, "fixtures": 2000, "requests": 100, "walks": 1}
    raw = {
        "instructions": {
            "walk20": {**walk20, "asyncsports": 2.2e6, "asyncsports pages()": 2.1e6, "floor": 2e6},
            "gets": {
                "case": "gets",
                "gets": 100,
                "requests": 100,
                "asyncsports": 5.4e5,
                "floor": 4.6e5,
            },
        }
    }
    rows = build_rows(raw, quick=True)
    assert [(r.metric, r.target) for r in rows] == [
        ("instructions per page", 1.10),
        ("instructions per page", 1.10),
        ("instructions per request", 1.10),
    ]
    assert rows[0].ratio == pytest.approx(1.1) and rows[1].passed
    assert rows[2].value == pytest.approx(540.0) and rows[2].passed is False
    assert build_rows({"instructions": {"error": "no valgrind"}}, quick=True)[0].note == (
        "no valgrind"
    )


# --------------------------------------------------------------------------- live feeds


async def _live_manifest(serve: Serve, emu: Emulator, packets: int) -> dict[str, Any]:
    """A manifest like the benchmark server's, its streams host served in this process."""
    fid = str(emu.big_fixture_id)
    stored = await render_packets(emu.live_url, SPORT, fid, emu.token, packets)
    url = await serve(LiveCache(emu.token, stored, fid).app())
    return {
        "big": emu.base_url,
        "token": emu.token,
        "vendor": emu.vendor,
        "live": "ws" + url.removeprefix("http"),
    }


async def test_live_server_stamps_and_rewrites_the_emulator_packets(serve: Serve) -> None:
    async with Emulator(seed=0, big_timeline=100) as emu:
        m = await _live_manifest(serve, emu, 20)
        fid = fixture_ids(1, "test")[0]
        url = f"{m['live']}/{SPORT}/fixtures/{fid}/actions"
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(url) as ws:
                await ws.send_str('{"authToken": "wrong"}')
                assert (await ws.receive()).data == "{The supplied authentication is invalid}"
                assert (await ws.receive()).type is aiohttp.WSMsgType.CLOSE
                assert ws.close_code == 1008
            assert (await control(m, "config", count=5))["count"] == 5
            async with http.ws_connect(url + "?speed=fast&startPosition=1") as ws:
                await ws.send_str(f'{{"authToken": "{m["token"]}"}}')
                assert (await ws.receive()).data == '{"type":"authorised"}'
                records = [DECODE(msg.data) async for msg in ws]
            assert ws.close_code == 1000
    assert [r.fixture_action.fixture_seq_num for r in records] == [2, 3, 4, 5]
    assert {str(r.fixture_action.fixture_id) for r in records} == {fid}
    sent = [float(r.trace_id or "nan") for r in records]
    assert sent == sorted(sent) and sent[-1] <= time.monotonic()
    assert [r.finished for r in records] == [False, False, False, True]


@pytest.mark.slow
async def test_live_cases_run_and_make_rows(serve: Serve) -> None:
    async with Emulator(seed=0, big_timeline=100) as emu:
        m = await _live_manifest(serve, emu, 60)
        one = await live(m, {"actions": 40, "repeat": 1, "sketches": True})
        many = await fanin(
            m,
            {"fixtures": 3, "rate": 50, "seconds": 0.1, "warm": 0.05, "repeat": 1}
            | {"tick": 0.01, "count": 60},
        )
        idle_feeds = {
            v: await idle(m, {"variant": v, "feeds": 2, "settle": 0})
            for v in ("asyncsports merge", "floor", "picows")
        }
        assert (await control(m, "stats"))["open"] == 0  # every case closed its feeds
    # Every variant read every packet of its feed (``live`` checks the count in its warm-up).
    measured = (*LIVE_VARIANTS, "floor, receive(timeout)", "sketch", "sketch, lazy watchdog")
    assert {v: len(one[v]["cpu"]) for v in measured} == dict.fromkeys(measured, 1)
    assert set(many) - {"fixtures", "rate", "seconds", "tick"} == set(IDLE_VARIANTS)
    for name in IDLE_VARIANTS:
        assert many[name]["packets"][0] == many[name]["latency"]["count"] > 0, name
    assert all(r["rss_after_kb"] > 0 for r in idle_feeds.values())
    rows = build_rows({"live": one, "fanin": many, "idle": idle_feeds}, quick=True)
    ours = [r for r in rows if r.target is not None]
    assert [(r.benchmark, r.metric, r.target) for r in ours] == [
        ("live", "client CPU per action", 1.0),  # issue 29
        ("fan-in", "delivery latency p99", 50.0),
        ("fan-in", "client CPU per packet", 1.0),  # the merged feeds' (issue 29)
        ("fan-in", "delivery latency p99", 50.0),
        ("idle feeds", "resident memory per feed", 32.0),
    ]
    assert all(r.value is not None and r.value > 0 for r in rows if r.benchmark == "live")


def test_live_rows_say_what_was_not_measured() -> None:
    def rounds(*cpu: float) -> dict[str, list[float]]:
        return {"cpu": list(cpu), "wall": list(cpu), "gc": [0.0] * len(cpu)}

    raw = {
        "live": {"actions": 100, "client": False, "floor": rounds(0.001), "picows": rounds(0.0008)},
        "fanin": {"error": "exit 1: boom"},
        "instructions": {"live": {"actions": 100, "floor": 4e6, "picows": 3e6, "errors": {}}},
    }
    rows = build_rows(raw, quick=True)
    assert [(r.benchmark, r.value is None) for r in rows] == [
        ("live", True),
        ("live", False),
        ("live", True),
        ("live", False),
        ("fanin", True),
    ]
    assert rows[1].ratio == pytest.approx(0.8) and rows[1].passed is None
    assert rows[3].value == pytest.approx(30.0) and rows[3].ratio == pytest.approx(0.75)
    assert rows[4].note == "exit 1: boom"


def test_transport_rows_pair_each_walk_and_say_when_pyreqwest_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def walk(*cpu: float) -> dict[str, Any]:
        usage = [[c * 0.8, c * 0.2, 3.0, 1.0] for c in cpu]
        return {"cpu": list(cpu), "wall": list(cpu), "gc": [0.0] * len(cpu), "usage": usage}

    size20 = {
        "fixtures": 2000,
        "pages": 100,
        "floor": walk(0.10, 0.10),
        "pyreqwest": walk(0.09, 0.08),
        "asyncsports": walk(0.11, 0.12),
        "asyncsports/pyreqwest": walk(0.099, 0.108),
        "processes": 2,
    }
    raw = {"transport": {"20": size20, "100": {**size20, "pages": 20}}}
    rows = build_rows(raw, quick=True, cases=[transport_case.CASE])
    assert [r.benchmark for r in rows] == ["transport"] * 8
    assert rows[0].ratio == pytest.approx(0.85) and rows[0].value == pytest.approx(850.0)
    assert rows[3].ratio == pytest.approx(0.9)  # over pyreqwest / over aiohttp, paired
    assert "20 per page" in rows[0].case and "100 per page" in rows[4].case
    assert "user 680 + sys 170 us/request" in rows[0].note
    # Without pyreqwest, one row says why and nothing runs.
    monkeypatch.setattr(transport_case.importlib.util, "find_spec", lambda name: None)
    result = transport_case.CASE.run(None, {})  # type: ignore[arg-type]
    assert "error" not in result  # skipped, not failed: the run's exit status stays 0
    (row,) = build_rows({"transport": result}, quick=True, cases=[transport_case.CASE])
    assert row.value is None and "pyreqwest is not installed" in row.note


@pytest.mark.slow
def test_the_budget_benchmark_runs_and_asks_for_no_request_more(tmp_path: Path) -> None:
    from benchmarks.budget import main

    main(["--quick", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "quick.json").read_text())
    [run] = data["runs"]
    assert run["requests"] == run["needed"] > 10
    assert run["wall"] >= run["least"] * 0.9  # the budget holds: it cannot go much faster
    assert "| 50/s |" in (tmp_path / "quick.md").read_text()


def test_sync_rows_follow_their_targets() -> None:
    def mode(name: str, every: float, p99: float) -> dict[str, object]:
        return {
            "mode": name,
            "every": every,
            "speed": 1.0,
            "live_fixtures": 50,
            "samples": 400,
            "lag_p50": p99 / 2,
            "lag_p99": p99,
            "lag_max": p99,
            "requests_per_hour": 20_000.0 if name == "poll" else 300.0,
            "budget_per_hour": 18_000.0,
            "actions_committed": 400,
            "cpu_per_action": 0.002,
            "cpu": 0.8,
            "wall": 120.0,
        }

    raw = {"sync": {"ws": mode("ws", 5, 0.2), "poll": mode("poll", 15, 17.0)}}
    verdicts = [
        (r.metric, r.target, r.passed)
        for r in build_rows(raw, quick=False)
        if r.benchmark == "sync"
    ]
    assert verdicts == [
        ("freshness lag p50, send to commit", None, None),
        ("freshness lag p99, send to commit", 1.0, True),  # the websocket: under 1 s
        ("requests per hour", 18_000.0, True),
        ("CPU per committed action", None, None),
        ("freshness lag p50, send to commit", None, None),
        ("freshness lag p99, send to commit", 16.0, False),  # polling: the interval + 1 s
        ("requests per hour", 18_000.0, False),  # over the budget
        ("CPU per committed action", None, None),
    ]
    failed = build_rows({"sync": {"error": "exit 1: boom"}}, quick=True)
    assert [(r.benchmark, r.note) for r in failed] == [("sync", "exit 1: boom")]


@pytest.mark.slow
async def test_sync_case_measures_a_mirror_over_the_websockets() -> None:
    p = sync_case.params(quick=True)["ws"]
    p.update(scale={**p["scale"], "competitions": 1}, warm=0.5, measure=3.0)
    r = await sync_case.sync({}, p)
    assert r["live_fixtures"] > 0 and r["feeds_open"] == 2 * r["live_fixtures"]
    assert r["actions_committed"] > 0 and r["samples"] > 0 and r["lag_p99"] is not None
    assert r["requests_per_hour"] < r["budget_per_hour"]
    assert r["follow_samples"] > 0 and r["follow_p99"] is not None  # the follower saw them


def test_sync_rows_of_the_follower_and_the_store() -> None:
    live = {
        "mode": "ws",
        "engine": "postgres",
        "every": 5,
        "speed": 1.0,
        "live_fixtures": 50,
        "samples": 400,
        "lag_p50": 0.04,
        "lag_p99": 0.09,
        "lag_max": 0.1,
        "requests_per_hour": 1_000.0,
        "budget_per_hour": 18_000.0,
        "actions_committed": 400,
        "cpu_per_action": 0.002,
        "cpu": 0.8,
        "wall": 120.0,
        "follow_samples": 900,
        "follow_p50": 0.002,
        "follow_p99": 0.016,
        "follow_max": 0.2,
    }
    store = {
        "mode": "commit",
        "engine": "postgres",
        "n": 3_000,
        "batch": 100,
        "fenced": True,
        "one_per_s": 1_000.0,
        "one_cpu": 2e-4,
        "batch_per_s": 20_000.0,
        "batch_cpu": 1.6e-5,
    }
    rows = [
        r
        for r in build_rows({"sync": {"ws-postgres": live, "commit": store}}, quick=False)
        if r.benchmark == "sync"
    ]
    assert all(r.case.endswith("into PostgreSQL") for r in rows[:6])
    follower = rows[5]
    assert (follower.metric, follower.target, follower.passed) == (
        "follower p99, commit to seen",
        0.1,
        True,
    )
    assert [(r.metric, r.value) for r in rows[6:]] == [
        ("commits per second, one action each", 1_000.0),
        ("actions per second, 100 a commit", 20_000.0),
    ]
    assert "fenced by a standby's lease" in rows[6].case


async def test_sync_commit_case_logs_each_change_once() -> None:
    p = {**sync_case.params(quick=True)["commit"], "n": 200}
    r = await sync_case.sync({}, p)  # it fails unless the log holds each action once
    assert r["n"] == 200 and r["batch_per_s"] > r["one_per_s"] > 0


# --------------------------------------------------------------------------- the harness' shape

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
CASE_MODULES = sorted(m.name for m in pkgutil.iter_modules([str(BENCH / "cases")]))


@pytest.mark.slow  # a Python process a case module: 1.5-2.5 s each, 14 of them
@pytest.mark.parametrize("name", CASE_MODULES)
def test_every_case_module_imports_alone(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import benchmarks.cases.{name}"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def _imports(path: Path, module: str, known: set[str]) -> set[str]:
    """The ``benchmarks`` modules ``path`` imports anywhere in it (functions too)."""
    out: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {m for m in out if m in known and m != module}


def test_benchmarks_have_no_import_cycle() -> None:
    files = {
        ".".join(("benchmarks", *p.relative_to(BENCH).with_suffix("").parts)).removesuffix(
            ".__init__"
        ): p
        for p in BENCH.rglob("*.py")
    }
    graph = {m: _imports(p, m, set(files)) for m, p in files.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            assert state.get(n) != 1, "import cycle: " + " -> ".join([*path, m, n])
            if n not in state:
                visit(n, [*path, m])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def test_no_function_in_benchmarks_is_over_80_lines() -> None:
    long = []
    for path in BENCH.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if (node.end_lineno or 0) - first + 1 > 80:
                    long.append(f"{path.relative_to(BENCH)}:{node.lineno} {node.name}")
    assert long == []


@pytest.mark.slow  # python -m benchmarks in a child process: 2-3 s
def test_list_names_every_case_once() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--list"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    names = [line.split()[0] for line in done.stdout.splitlines()]
    cases = [m for m in CASE_MODULES if not m.startswith("_")]
    assert sorted(names) == cases and len(set(names)) == len(names)
    # The names --only takes, as the README and the guide give them.
    assert names == [
        "decode",
        "walk",
        "walk1000",
        "walk20",
        "transport",
        "gets",
        "peers",
        "stream",
        "framing",
        "memory",
        "fanout",
        "backfill",
        "dlt",
        "live",
        "fanin",
        "idle",
        "sync",
        "bus",
        "help",
    ]


@pytest.mark.slow  # two cases in child processes: 5 s
def test_a_quick_run_writes_its_table(tmp_path: Path) -> None:
    args = ["--quick", "--only", "decode,fanout", "--no-pin", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "quick.json").read_text())
    assert set(data["raw"]) == {"decode", "fanout"}
    assert [r["benchmark"] for r in data["rows"]] == ["decode", "decode", "fan-out"]
    assert all(r["value"] > 0 for r in data["rows"])
    assert "| fan-out |" in (tmp_path / "quick.md").read_text()


def test_cases_that_share_a_together_run_in_one_go() -> None:
    from benchmarks.harness.children import QUICK, Context
    from benchmarks.harness.registry import Case, discover, run_cases

    calls: list[dict[str, Any]] = []

    def together(ctx: Context, settings: dict[str, dict[str, Any]]) -> dict[str, Any]:
        calls.append(settings)
        return {name: {"n": s["n"]} for name, s in settings.items()}

    def case(name: str, shared: bool) -> Case:
        def run(ctx: Context, s: dict[str, Any]) -> dict[str, Any]:
            return {"alone": s["n"]}

        return Case(
            name, run, lambda *a: [], {"n": len(name)}, {}, 0, together=together if shared else None
        )

    raw = run_cases(
        Context({}, None, QUICK), [case("a", True), case("bb", False), case("ccc", True)]
    )
    assert raw == {"a": {"n": 1}, "bb": {"alone": 2}, "ccc": {"n": 3}}
    assert calls == [{"a": {"n": 1}, "ccc": {"n": 3}}]
    shared = {c.name for c in discover() if c.together is not None}
    assert shared == {"walk", "walk1000", "walk20", "gets"}  # one set of processes, as before


def test_the_bare_typer_app_has_the_commands_it_is_given(tmp_path: Path) -> None:
    from benchmarks.cases.help import bare_app

    script = tmp_path / "bare.py"
    script.write_text(bare_app({"fixtures": [], "snooker": ["matches", "ast"]}))
    run = [sys.executable, str(script)]
    listed = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "fixtures" in listed.stdout and "snooker" in listed.stdout
    nested = subprocess.run([*run, "snooker", "matches"], capture_output=True, timeout=60)
    assert nested.returncode == 0  # a command that does nothing


async def test_the_bus_case_makes_the_publishers_messages_and_origin(tmp_path: Path) -> None:
    from asyncsports._wire.bus import origin
    from asyncsports.store import open_mirror
    from benchmarks.cases import bus as bus_case

    db = tmp_path / "mirror.sqlite"
    await bus_case.make_mirror(db, 5, per_commit=2)
    messages, name = bus_case._messages(db)
    store = await open_mirror(db)
    try:
        lines = await store.change_rows(0)
    finally:
        await store.close()
    assert len(messages) == len(lines) == 5
    assert name == origin(lines[0].committed_at)
