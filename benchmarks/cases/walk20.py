"""walk20: the same walk at 20 a page (the service's default), vs the floor."""

from __future__ import annotations

from benchmarks.cases._walks import WALK20_TARGET, walk_case

CASE = walk_case("walk20", 20, WALK20_TARGET, order=30)
