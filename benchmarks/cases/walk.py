"""walk: every page of the big season at 100 a page, records and pages(), vs the floor."""

from __future__ import annotations

from benchmarks.cases._walks import WALK_TARGET, walk_case

CASE = walk_case("walk", 100, WALK_TARGET, order=20)
