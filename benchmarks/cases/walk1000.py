"""walk1000: the same walk at 1,000 a page (large pages: the framer's and the allocator's share)."""

from __future__ import annotations

from benchmarks.cases._walks import WALK1000_TARGET, walk_case

CASE = walk_case("walk1000", 1000, WALK1000_TARGET, order=25)
