"""The table rows of the live feeds' cases (``live``, ``fanin``, ``idle``, their counts)."""

from __future__ import annotations

from typing import Any

from benchmarks.harness.report import Row, median, paired

__all__ = ["LIVE_FLOOR", "fanin_rows", "idle_rows", "live_rows"]

LIVE_FLOOR = "floor: aiohttp ws_connect + msgspec decode of each message, no checks"
LIVE_TARGET = 1.0  # CPU per delivered action against the floor (issue 29; 1.10 in issue 12)
MERGE_TARGET = 1.0  # the merged fan-in's CPU per packet against the floor (issue 29; 1.15 in 22)
LATENCY_TARGET = 50.0  # ms, p99 on loopback (issue 12)
IDLE_TARGET = 32.0  # KB per idle connected feed (issue 29; 64 in issue 12)
LABELS = {
    "asyncsports": "`async for action in client.live.actions(...)`",
    "asyncsports merge": "asyncsports, the feeds merged into one iterator",
    "floor": "the floor",
    "websockets": "websockets (asyncio) + msgspec, the floor's loop",
    "picows": "picows (Cython) + msgspec, decoded in its frame callback",
    "picows queue": "picows + msgspec through an asyncio.Queue (an async iterator)",
    "floor, receive(timeout)": "the floor with `ws.receive(timeout)`: a timer per message",
}
OURS = ("asyncsports", "asyncsports merge")
_ABSENT = "not measured: this build's Client has no live feeds (client.live)"


def _label(name: str) -> str:
    return LABELS.get(name, name)


def _one_note(r: dict[str, Any], name: str) -> str:
    if name == "asyncsports":
        wall = median(r[name]["wall"]), median(r["floor"]["wall"])
        return f"wall {wall[0]:.3f}s vs {wall[1]:.3f}s (floor); {len(r[name]['cpu'])} rounds"
    if name == "floor, receive(timeout)":
        return (
            "not a peer: the price of arming a timer for every message (an idle watchdog "
            "in the reading loop, as asyncsports/_http/live.py does)"
        )
    return ""


def _one_feed(r: dict[str, Any]) -> list[Row]:
    n = r["actions"]
    floor = r["floor"]["cpu"]
    rows: list[Row] = []
    names = [v for v in r if isinstance(r[v], dict) and v != "floor"]
    if "asyncsports" not in names:
        rows.append(
            Row(
                "live",
                f"1 feed, {n:,} actions flat out: {_label('asyncsports')}",
                "client CPU per action",
                "us",
                None,
                note=_ABSENT,
            )
        )
    for name in names:
        cpu = r[name]["cpu"]
        ours = name == "asyncsports"
        rows.append(
            Row(
                "live",
                f"1 feed, {n:,} actions flat out: {_label(name)}",
                "client CPU per action",
                "us",
                median(cpu) / n * 1e6,
                median(floor) / n * 1e6,
                LIVE_FLOOR,
                "cost",
                LIVE_TARGET if ours else None,
                _one_note(r, name),
                paired=paired(cpu, floor),
            )
        )
    return rows


def _counts(c: dict[str, Any]) -> list[Row]:
    n = c["actions"]
    floor = c.get("floor")
    rows = []
    for name, count in c.items():
        if name in ("actions", "floor", "errors") or not isinstance(count, (int, float)):
            continue
        rows.append(
            Row(
                "live",
                f"1 feed, {n:,} actions: {_label(name)}, instructions (valgrind callgrind)",
                "instructions per action",
                "k",
                count / n / 1e3,
                floor / n / 1e3 if floor else None,
                LIVE_FLOOR,
                "cost",
                LIVE_TARGET if name == "asyncsports" else None,
                "a count, not a time: it does not move with the machine's load"
                if name == "asyncsports"
                else "",
            )
        )
    if "asyncsports" not in c:
        rows.insert(
            0,
            Row(
                "live",
                "instructions",
                "instructions per action",
                "k",
                None,
                note=c.get("errors", {}).get("asyncsports", _ABSENT),
            ),
        )
    return rows


def _fanin(r: dict[str, Any]) -> list[Row]:
    case = f"{r['fixtures']} fixtures x {r['rate']:g} packets/s, one process"
    floor = r["floor"]
    floor_per = [c / p for c, p in zip(floor["cpu"], floor["packets"], strict=True)]
    rows: list[Row] = []
    names = [v for v in r if isinstance(r[v], dict)]
    if not any(n in names for n in OURS):
        rows.append(
            Row("fan-in", f"{case}: asyncsports", "delivery latency p99", "ms", None, note=_ABSENT)
        )
    for name in names:
        v = r[name]
        lat = v["latency"]
        ours = name in OURS
        per = [c / p for c, p in zip(v["cpu"], v["packets"], strict=True)]
        windows = len(v["cpu"])
        rate = median(v["sent"])
        label = f"{case}: {_label(name)}"
        rows.append(
            Row(
                "fan-in",
                label,
                "delivery latency p99",
                "ms",
                lat["p99"] * 1e3,
                floor["latency"]["p99"] * 1e3 if name != "floor" else None,
                "the floor" if name != "floor" else "",
                "below",
                LATENCY_TARGET if ours else None,
                f"p50 {lat['p50'] * 1e3:.2f} ms, p90 {lat['p90'] * 1e3:.2f} ms, max "
                f"{lat['max'] * 1e3:.1f} ms over {lat['count']:,} packets in {windows} "
                f"windows of {r['seconds']:g} s (the server sent {rate:,.0f}/s of the "
                f"{r['fixtures'] * r['rate']:,.0f}/s asked for)"
                + (
                    "; from the server's send (its clock, stamped in the packet) to the "
                    "consumer holding the decoded record"
                    if name == "floor"
                    else ""
                ),
            )
        )
        if ours:
            rows.append(Row("fan-in", label, "delivery latency p50", "ms", lat["p50"] * 1e3))
        if name != "floor":
            rows.append(
                Row(
                    "fan-in",
                    label,
                    "client CPU per packet",
                    "us",
                    median(per) * 1e6,
                    median(floor_per) * 1e6,
                    LIVE_FLOOR,
                    "cost",
                    MERGE_TARGET if name == "asyncsports merge" else None,
                    paired=paired(per, floor_per),
                )
            )
        else:
            rows.append(
                Row(
                    "fan-in",
                    label,
                    "client CPU per packet",
                    "us",
                    median(per) * 1e6,
                    note="opening the feeds is not counted (it is done before the window)",
                )
            )
    return rows


def _idle(r: dict[str, Any]) -> list[Row]:
    def per(v: dict[str, Any]) -> float:
        return float(v["rss_after_kb"] - v["rss_before_kb"]) / float(v["feeds"])

    floor = r.get("floor")
    rows: list[Row] = []
    if not any(n in r for n in OURS):
        rows.append(
            Row("idle feeds", "asyncsports", "resident memory per feed", "KB", None, note=_ABSENT)
        )
    for name, v in r.items():
        ours = name in OURS
        rows.append(
            Row(
                "idle feeds",
                f"{v['feeds']:,} idle connected feeds: {_label(name)}",
                "resident memory per feed",
                "KB",
                per(v),
                per(floor) if floor is not None and name != "floor" else None,
                "the floor: a task per feed awaiting ws.receive()" if name != "floor" else "",
                "below",
                IDLE_TARGET if ours else None,
                "RSS growth over opening them (authorised, nothing sent) / feeds, after a "
                "full collection, each variant in a fresh process"
                if name == "floor"
                else "",
            )
        )
    return rows


def live_rows(r: dict[str, Any] | None, counts: dict[str, Any] | None, quick: bool) -> list[Row]:
    """The rows of ``live``: one feed flat out, then its instruction counts."""
    return (_one_feed(r) if r is not None else []) + (_counts(counts) if counts else [])


def fanin_rows(r: dict[str, Any] | None, counts: dict[str, Any] | None, quick: bool) -> list[Row]:
    """The rows of ``fanin``: many feeds at a pace, latency and CPU per packet."""
    return _fanin(r) if r is not None else []


def idle_rows(r: dict[str, Any] | None, counts: dict[str, Any] | None, quick: bool) -> list[Row]:
    """The rows of ``idle``: resident memory per idle connected feed."""
    return _idle(r) if r is not None else []
