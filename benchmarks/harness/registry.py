"""The cases: one module each under ``benchmarks/cases/``, each exporting one :class:`Case`.

The harness finds them by listing the package (``pkgutil``) and importing what it finds
(``importlib``); it never names a case, so a new case is a new module and nothing else.
Modules whose name starts with ``_`` hold what several cases share and are not cases.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.children import Context
from benchmarks.harness.report import Row, missing

__all__ = ["Case", "build_rows", "discover", "run_cases"]

PACKAGE = "benchmarks.cases"

Result = dict[str, Any]
Run = Callable[[Context, dict[str, Any]], Result]
Rows = Callable[[Result | None, Result | None, bool], list[Row]]
Count = Callable[[Context, dict[str, Any]], Result]
Together = Callable[[Context, dict[str, dict[str, Any]]], dict[str, Result]]


@dataclass(frozen=True)
class Case:
    """One benchmark: how to run it, how its result becomes rows, and its settings.

    ``run(ctx, settings)`` runs in the harness's process (it starts children through
    ``ctx.child``) and returns the raw result, kept as is in the results' JSON.
    ``rows(result, counts, quick)`` makes the table's rows; ``result`` is None when the
    case did not run but its instruction counts did, ``counts`` is None without
    ``--instructions``. ``count(ctx, settings)``, when given, counts instructions with
    callgrind. ``order`` places the case in the run and in the table; ``label`` names it
    in a "not measured" row (its name by default).

    ``together``, when given, runs the selected cases that share it in one go (the same
    child processes, their rounds interleaved), from each one's settings by name; the
    harness then calls it instead of ``run``.
    """

    name: str
    run: Run
    rows: Rows
    quick: dict[str, Any]
    full: dict[str, Any]
    order: int
    count: Count | None = None
    label: str = ""
    together: Together | None = None
    doc: str = field(default="", compare=False)

    def settings(self, quick: bool) -> dict[str, Any]:
        """A copy of the settings of quick or full mode."""
        return dict(self.quick if quick else self.full)


def discover() -> list[Case]:
    """Every case under ``benchmarks/cases/``, in table order."""
    package = importlib.import_module(PACKAGE)
    found: list[Case] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        case = getattr(module, "CASE", None)
        if not isinstance(case, Case):
            raise TypeError(f"{module.__name__} exports no CASE")
        doc = (module.__doc__ or "").strip().splitlines()
        summary = doc[0].removeprefix(f"{case.name}: ") if doc else ""
        found.append(dataclasses.replace(case, doc=summary))
    return sorted(found, key=lambda c: (c.order, c.name))


def build_rows(raw: dict[str, Any], quick: bool, cases: list[Case] | None = None) -> list[Row]:
    """The table rows from each case's raw result (a case's ``error``, or its ``skipped``
    when what it needs is not installed, becomes a note; only an error fails the run)."""
    counts: dict[str, Any] = raw.get("instructions") or {}
    rows: list[Row] = []
    if "error" in counts:
        rows.append(missing("instructions", counts["error"]))
        counts = {}
    for case in cases if cases is not None else discover():
        result, count = raw.get(case.name), counts.get(case.name)
        why = None if result is None else result.get("error", result.get("skipped"))
        if why is not None:
            rows.append(missing(case.label or case.name, why))
            result = None
        if count is not None and "error" in count:
            rows.append(missing("instructions", f"{case.name}: {count['error']}"))
            count = None
        if result is not None or count is not None:
            rows += case.rows(result, count, quick)
    return rows


def run_cases(ctx: Context, cases: list[Case]) -> Result:
    """Each case's raw result by name, in the order of ``cases``."""
    raw: Result = {}
    for case in cases:
        if case.name in raw:
            continue  # ran together with an earlier one
        if case.together is not None:
            peers = [c for c in cases if c.together is case.together]
            raw.update(case.together(ctx, {c.name: c.settings(ctx.quick) for c in peers}))
        else:
            raw[case.name] = case.run(ctx, case.settings(ctx.quick))
    return raw
