"""The results table: its rows (value, baseline, ratio, target, verdict), its Markdown, its files.

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

__all__ = ["Kind", "Row", "markdown", "median", "missing", "paired", "write"]

Kind = Literal["faster", "cost", "below", "above", "info"]


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
        if self.kind == "above":
            return self.value >= self.target
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
        if self.kind == "above":
            return f">= {self.target:,.0f} {self.unit}"
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


def missing(benchmark: str, error: str) -> Row:
    """The row of a case that did not run: its ``error`` as the note."""
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
