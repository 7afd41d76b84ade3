"""From raw case results to rows (value, baseline, ratio, target, verdict) and the files.

Every ratio compares two figures measured in the same run. A row's ``kind`` says how:

- ``faster``: ``baseline / value`` must reach ``target`` (asyncsports is that many times faster);
- ``cost``: ``value / baseline`` must stay within ``target`` (asyncsports costs at most that much);
- ``below``: ``value`` itself must stay under ``target`` (the baseline is shown beside it);
- ``info``: reported only.

Figures are medians over the measured rounds; a ratio is the median of the per-round
ratios (see :func:`paired`).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["Row", "build_rows", "markdown", "write"]

Kind = Literal["faster", "cost", "below", "info"]


@dataclass
class Row:
    """One measured figure with its baseline, ratio, target and verdict."""

    benchmark: str
    case: str
    metric: str
    unit: str
    value: float | None
    baseline: float | None = None
    baseline_name: str = ""
    kind: Kind = "info"
    target: float | None = None
    note: str = ""
    paired: float | None = None
    """The median of per-round ratios, when the rounds were paired (it then is the ratio)."""

    @property
    def ratio(self) -> float | None:
        if self.kind == "info" or self.value is None or not self.baseline:
            return None
        if self.paired is not None:
            return self.paired
        if self.kind == "faster":
            return self.baseline / self.value if self.value else None
        return self.value / self.baseline

    @property
    def passed(self) -> bool | None:
        if self.target is None or self.value is None:
            return None
        if self.kind == "below":
            return self.value < self.target
        ratio = self.ratio
        if ratio is None:
            return None
        return ratio >= self.target if self.kind == "faster" else ratio <= self.target

    def target_text(self) -> str:
        if self.target is None:
            return "reported"
        if self.kind == "faster":
            return f">= {self.target:g}x faster"
        if self.kind == "cost":
            return f"<= {self.target:.2f}x"
        return f"< {self.target:g} {self.unit}"

    def ratio_text(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return ""
        return f"{ratio:.1f}x faster" if self.kind == "faster" else f"{ratio:.3f}x"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(ratio=self.ratio, target_text=self.target_text(), passed=self.passed)
        return out


def _missing(benchmark: str, error: str) -> Row:
    return Row(benchmark, "not measured", "", "", None, note=error)


def median(xs: list[float]) -> float:
    """The median of ``xs``."""
    return statistics.median(xs)


def paired(top: list[float], bottom: list[float]) -> float:
    """The median of the per-round ratios ``top[i] / bottom[i]`` over the common rounds.

    The variants of a round run back to back, so a ratio within a round compares them
    under the same load; the median then drops the rounds that a burst of load skewed.
    """
    return median([t / b for t, b in zip(top, bottom, strict=False)])


WALK_FLOOR = "floor: aiohttp + msgspec Structs (gc=False), same page loop"
GET_FLOOR = "floor: the same GETs on a plain aiohttp session, msgspec decode (gc=False)"
WALK_TARGET = 1.05  # 100 a page (issue 10)
WALK20_TARGET = 1.10  # 20 a page, the service's default (issue 10)
GET_TARGET = 1.10  # fixtures.get in a loop (issue 10)
RECORDS = ": `async for fixture in client.fixtures.list(...)`"
PAGES = ": `async for page in client.fixtures.list(...).pages()`"


def _walk_case(pages: int, fixtures: int, default: bool) -> str:
    size = fixtures // pages
    return f"{pages:,}-page fixture walk, {size} per page" + (
        " (the service's default)" if default else ""
    )


def _walk_rows(w: dict[str, Any], target: float, default: bool) -> list[Row]:
    """The CPU rows of one walk case: records and pages() against the floor."""
    n = w["fixtures"]
    case = _walk_case(w["pages"], n, default)
    names = ("asyncsports", "asyncsports pages()", "floor")
    cpu = {k: w[k]["cpu"] for k in names}
    per = {k: median(v) / n * 1e6 for k, v in cpu.items()}
    wall = {k: median(w[k]["wall"]) for k in names}
    rounds = (
        f"{len(cpu['floor'])} rounds in {w.get('processes', 1)} processes; "
        f"server cache misses while measured: {w.get('misses', '?')}"
    )
    extra = (n / w["pages"]) * (per["asyncsports"] - per["floor"])
    return [
        Row(
            "walk",
            case + RECORDS,
            "client CPU per fixture",
            "us",
            per["asyncsports"],
            per["floor"],
            WALK_FLOOR,
            "cost",
            target,
            f"wall {wall['asyncsports']:.3f}s vs {wall['floor']:.3f}s (floor); "
            f"{extra:.0f} us more CPU per page (medians); the floor loops over each page's "
            f"records with a plain for; {rounds}",
            paired=paired(cpu["asyncsports"], cpu["floor"]),
        ),
        Row(
            "walk",
            case + PAGES,
            "client CPU per fixture",
            "us",
            per["asyncsports pages()"],
            per["floor"],
            WALK_FLOOR,
            "cost",
            target,
            f"wall {wall['asyncsports pages()']:.3f}s vs {wall['floor']:.3f}s (floor)",
            paired=paired(cpu["asyncsports pages()"], cpu["floor"]),
        ),
    ]


def _walk_instruction_rows(c: dict[str, Any], target: float, default: bool) -> list[Row]:
    """The callgrind rows of one walk case: instructions per page."""
    case = _walk_case(c["requests"], c["fixtures"], default)
    return [
        Row(
            "walk",
            f"{case}, {form}: instructions (valgrind callgrind)",
            "instructions per page",
            "M",
            c[name] / 1e6,
            c["floor"] / 1e6,
            WALK_FLOOR,
            "cost",
            target,
            "a count, not a time: it does not move with the machine's load"
            if form == "records"
            else "",
        )
        for name, form in (("asyncsports", "records"), ("asyncsports pages()", "pages()"))
    ]


def _get_rows(g: dict[str, Any]) -> list[Row]:
    """The CPU row of the get loop against the floor."""
    n = g["gets"]
    cpu = {k: g[k]["cpu"] for k in ("asyncsports", "floor")}
    per = {k: median(v) / n * 1e6 for k, v in cpu.items()}
    wall = {k: median(g[k]["wall"]) for k in cpu}
    return [
        Row(
            "get",
            f"{n:,} x `await client.fixtures.get(sport, id)`, one request per record",
            "client CPU per request",
            "us",
            per["asyncsports"],
            per["floor"],
            GET_FLOOR,
            "cost",
            GET_TARGET,
            f"wall {wall['asyncsports']:.3f}s vs {wall['floor']:.3f}s (floor); "
            f"{per['asyncsports'] - per['floor']:.0f} us more CPU per request (medians); "
            f"{len(cpu['floor'])} rounds in {g.get('processes', 1)} processes; server cache "
            f"misses while measured: {g.get('misses', '?')}",
            paired=paired(cpu["asyncsports"], cpu["floor"]),
        )
    ]


def build_rows(raw: dict[str, Any], quick: bool) -> list[Row]:
    """The table rows from each case's raw result (a case's ``error`` becomes a note)."""
    rows: list[Row] = []

    d = raw.get("decode")
    if d is not None and "error" not in d:
        for key, label in (("page", "fixture page"), ("actions", "action array")):
            r = d[key]
            ours, theirs = r["asyncsports"]["cpu"], r["pydantic"]["cpu"]
            rows.append(
                Row(
                    "decode",
                    f"{r['records']:,}-record {label} ({r['bytes'] / 1e3:,.0f} kB)",
                    "CPU per decode",
                    "ms",
                    median(ours) * 1e3,
                    median(theirs) * 1e3,
                    "pydantic v2 TypeAdapter.validate_json",
                    "faster",
                    3.0,
                    paired=paired(theirs, ours),
                )
            )
    elif d is not None:
        rows.append(_missing("decode", d["error"]))

    ic = raw.get("instructions") or {}
    if "error" in ic:
        rows.append(_missing("instructions", ic["error"]))
        ic = {}
    for key, target in (("walk", WALK_TARGET), ("walk20", WALK20_TARGET)):
        w = raw.get(key)
        if w is not None and "error" not in w:
            rows += _walk_rows(w, target, default=key == "walk20")
        elif w is not None:
            rows.append(_missing(key, w["error"]))
        if key in ic:
            rows += _walk_instruction_rows(ic[key], target, default=key == "walk20")
    g = raw.get("gets")
    if g is not None and "error" not in g:
        rows += _get_rows(g)
    elif g is not None:
        rows.append(_missing("get", g["error"]))
    if "gets" in ic:
        c = ic["gets"]
        rows.append(
            Row(
                "get",
                f"{c['requests']:,} x `await client.fixtures.get(...)`: instructions "
                "(valgrind callgrind)",
                "instructions per request",
                "k",
                c["asyncsports"] / 1e3,
                c["floor"] / 1e3,
                GET_FLOOR,
                "cost",
                GET_TARGET,
                "a count, not a time: it does not move with the machine's load",
            )
        )

    pe = raw.get("peers")
    if pe is not None and "error" not in pe:
        n = pe["fixtures"]
        ours, theirs = pe["asyncsports"]["cpu"], pe["httpx+pydantic"]["cpu"]
        rows.append(
            Row(
                "walk",
                f"{pe['pages']}-page fixture walk, {n // pe['pages']} per page" + RECORDS,
                "client CPU per fixture",
                "us",
                median(ours) / n * 1e6,
                median(theirs) / n * 1e6,
                "httpx.AsyncClient + pydantic v2 models, same page loop",
                "faster",
                5.0,
                f"wall {median(pe['asyncsports']['wall']):.3f}s vs "
                f"{median(pe['httpx+pydantic']['wall']):.3f}s (httpx)",
                paired=paired(theirs, ours),
            )
        )
    elif pe is not None:
        rows.append(_missing("walk vs httpx", pe["error"]))

    s = raw.get("stream")
    if s is not None and "error" not in s:
        st, wh = s["streamed"], s["whole"]
        gc_share = {
            k: median(v["gc"]) / median(v["cpu"])
            for k, v in s.items()
            if k in ("streamed", "whole")
        }
        rows.append(
            Row(
                "stream",
                f"{s['records']:,} actions: client.actions.list vs read whole + decode",
                "client CPU",
                "ms",
                median(st["cpu"]) * 1e3,
                median(wh["cpu"]) * 1e3,
                "aiohttp read() + msgspec Decoder(list[Action]).decode",
                "cost",
                1.10,
                f"wall {median(st['wall']):.3f}s vs {median(wh['wall']):.3f}s "
                f"({paired(st['wall'], wh['wall']):.3f}x); cyclic GC: "
                f"{gc_share['streamed']:.0%} of the streamed CPU, {gc_share['whole']:.0%} of "
                f"the whole-body CPU; server cache misses while measured: {s.get('misses', '?')}",
                paired=paired(st["cpu"], wh["cpu"]),
            )
        )
    elif s is not None:
        rows.append(_missing("stream", s["error"]))

    fr = raw.get("framing")
    if fr is not None and "error" not in fr:
        st, wh = fr["streamed"]["cpu"], fr["whole"]["cpu"]
        on = paired(fr["streamed, gc on"]["cpu"], fr["whole, gc on"]["cpu"])
        dropped = paired(fr["streamed, batches dropped"]["cpu"], wh)
        rows.append(
            Row(
                "stream",
                f"{fr['records']:,} actions in memory ({fr['bytes'] / 1e6:,.0f} MB) in "
                f"{fr['chunk'] // 1024} KiB chunks: jsonstream.decode_array vs one decode",
                "CPU, cyclic GC off",
                "ms",
                median(st) * 1e3,
                median(wh) * 1e3,
                "msgspec Decoder(list[Action]).decode of the whole body",
                "cost",
                1.10,
                f"no I/O, every batch kept; with the GC on: {on:.3f}x; GC off, each batch "
                f"dropped before the next (as a streaming consumer runs): {dropped:.3f}x. "
                "Kept batches keep their runs alive (action metadata is msgspec.Raw into "
                "them), so each run is copied into fresh pages: most of the difference",
                paired=paired(st, wh),
            )
        )
    elif fr is not None:
        rows.append(_missing("framing", fr["error"]))

    mem = raw.get("memory")
    if mem is not None and "error" not in mem:
        st, wh = mem["streamed"], mem["whole"]
        note = "peak RSS (VmHWM) minus RSS before, each variant in a fresh process"
        if quick:
            note += f"; quick mode: {st['records']:,} actions (full mode: 1,000,000)"
        rows.append(
            Row(
                "stream",
                f"{st['records']:,} actions iterated: peak RSS growth",
                "peak RSS growth",
                "MB",
                st["growth_kb"] / 1024,
                wh["growth_kb"] / 1024,
                "whole body read and decoded",
                "below",
                50.0,
                note,
            )
        )
    elif mem is not None:
        rows.append(_missing("stream memory", mem["error"]))

    f = raw.get("fanout")
    if f is not None and "error" not in f:
        conc, seq = f["concurrency=4"]["wall"], f["sequential"]["wall"]
        rows.append(
            Row(
                "fan-out",
                f"{f['pages']} pages of {f['size']}, {f['latency'] * 1e3:.0f} ms server latency",
                "wall time",
                "s",
                median(conc),
                median(seq),
                "sequential: concurrency=1, lookahead=0",
                "faster",
                3.0,
                paired=paired(seq, conc),
            )
        )
    elif f is not None:
        rows.append(_missing("fan-out", f["error"]))

    b = raw.get("backfill")
    if b is not None and "error" not in b:
        from benchmarks.sinkcase import backfill_rows  # it imports this module's Row

        rows += backfill_rows(b, "SQLite", "executemany")
        pg = b.get("postgres")
        if pg is not None and "error" not in pg:
            rows += backfill_rows(pg, "PostgreSQL", "COPY")
        elif pg is not None:
            rows.append(_missing("backfill", f"PostgreSQL: {pg['error']}"))
    elif b is not None:
        rows.append(_missing("backfill", b["error"]))
    from benchmarks import sync_bench  # its rows live beside its case
    from benchmarks.live_report import live_rows  # it imports this module

    return rows + live_rows(raw, quick) + sync_bench.rows(raw)


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "%":
        return f"{value:.0f}%"
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}" if unit != "/s" else f"{text}/s"


def markdown(rows: list[Row], meta: dict[str, Any]) -> str:
    """The results as a Markdown page: the machine, the versions, the table, the notes."""
    m = meta["machine"]
    lines = [
        f"# Benchmark results ({meta['mode']} mode)",
        "",
        f"Run {meta['started']} with `{meta['command']}` in {meta['seconds']:.0f} s.",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB; {m['python']}; "
        f"{m['platform']}.",
        f"Placement: {meta['placement']}. Load average before/after: "
        f"{meta['load_before']} / {meta['load_after']}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
        "",
    ]
    if meta.get("busy"):
        lines += [
            "**Other processes were busy during this run** (see the load average): CPU-time",
            "ratios are noisier than usual; rerun on a quiet machine before trusting a close call.",
            "",
        ]
    lines += [
        "| Benchmark | Case | Metric | asyncsports | Baseline | Ratio | Target | Result |",
        "|---|---|---|---:|---|---:|---|---|",
    ]
    for r in rows:
        base = f"{_num(r.baseline, r.unit)} ({r.baseline_name})" if r.baseline_name else ""
        verdict = {True: "pass", False: "**miss**", None: ""}[r.passed]
        lines.append(
            f"| {r.benchmark} | {r.case} | {r.metric} | {_num(r.value, r.unit)} | {base} "
            f"| {r.ratio_text()} | {r.target_text()} | {verdict} |"
        )
    notes = [f"- {r.benchmark}, {r.metric}: {r.note}" for r in rows if r.note]
    if notes:
        lines += ["", "Notes:", "", *notes]
    return "\n".join(lines) + "\n"


def write(out: Path, stem: str, rows: list[Row], meta: dict[str, Any], raw: dict[str, Any]) -> None:
    """Write ``<stem>.md`` and ``<stem>.json`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.md").write_text(markdown(rows, meta))
    doc = {"meta": meta, "rows": [r.as_dict() for r in rows], "raw": raw}
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=2) + "\n")
