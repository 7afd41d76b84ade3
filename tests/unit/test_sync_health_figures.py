"""The mirror's live feeds' health as its figures say it (issue 44, item 2): the gauges of
``/metrics`` and the ``stale`` entry of ``/healthz``, rendered from made-up figures."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping

from prometheus_client import CollectorRegistry, core, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from asyncsports.sync._live import FeedHealth
from asyncsports.sync._metrics import STALE_AFTER, MirrorMetrics, healthy


class Figures:
    """A running mirror's figures (the :class:`~asyncsports.sync._metrics.Figures`
    protocol), each given: one good read at ``now``, nothing failing."""

    def __init__(self, now: float, feeds: list[FeedHealth]) -> None:
        self.started = now - 10
        self.fresh: Mapping[str, float] = {"fixtures": now}
        self.failing: Mapping[str, tuple[float, BaseException]] = {}
        self.committed: Mapping[str, int] = {}
        self.requests: Mapping[tuple[str, int], int] = {}
        self.found: Mapping[str, int] = {}
        self.connections: Mapping[str, int] = {}
        self.feeds_open = len(feeds)
        self.feed_health = {(f.fixture_id, f.feed): f for f in feeds}
        self.planned = 3
        self.requests_sent = 0
        self.rate_limit: float | None = None

    def due(self, now: float) -> int:
        return 0

    def behind(self, now: float) -> int:
        return 0


def feed(fid: str, kind: str, state: str, *, opened: float, record: float | None) -> FeedHealth:
    f = FeedHealth(fid, kind, "basketball", opened)
    f.state = state  # type: ignore[assignment]
    f.cause = "silent" if state == "delayed" else ""
    f.last_record = record
    return f


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_each_feed_is_a_record_age_and_a_state_set_and_healthz_names_the_stale() -> None:
    now = asyncio.get_running_loop().time()
    feeds = [
        feed("a", "actions", "live", opened=now - 100, record=now - 2),
        feed("a", "statistics", "delayed", opened=now - 100, record=now - 40),
        feed("b", "actions", "reconnecting", opened=now - 100, record=now - 5),
        # Live by its own word, but no record for longer than STALE_AFTER: stale too.
        feed("c", "actions", "live", opened=now - 1000, record=now - STALE_AFTER - 60),
        # None yet: its age counts from when it opened; not stale yet.
        feed("d", "actions", "connecting", opened=now - 7, record=None),
        feed("e", "actions", "over", opened=now - 1000, record=now - STALE_AFTER - 60),
    ]
    mirror = Figures(now, feeds)
    registry = CollectorRegistry()
    registry.register(MirrorMetrics(mirror, core))
    got = samples(generate_latest(registry))

    def age(fid: str, kind: str) -> float:
        return got[("asyncsports_sync_feed_record_age_seconds", (("feed", kind), ("fixture", fid)))]

    def states(fid: str, kind: str) -> dict[str, float]:
        return {
            dict(labels)["state"]: v
            for (name, labels), v in got.items()
            if name == "asyncsports_sync_feed_state"
            and dict(labels)["fixture"] == fid
            and dict(labels)["feed"] == kind
        }

    assert math.isclose(age("a", "actions"), 2, abs_tol=1)
    assert math.isclose(age("a", "statistics"), 40, abs_tol=1)
    assert math.isclose(age("d", "actions"), 7, abs_tol=1)
    for f in feeds:  # a state set: 1 for its state, 0 for each other
        assert states(f.fixture_id, f.feed) == {
            s: float(s == f.state)
            for s in ("connecting", "live", "delayed", "reconnecting", "over")
        }

    ok, body = healthy(mirror, now)
    # A stale feed is the vendor's: the mirror's own work is fine, so /healthz stays 200.
    assert ok is True and body["ok"] is True
    stale = body["stale"]
    assert isinstance(stale, dict)
    assert sorted(stale) == ["live:b", "live:c", "stats:a"]
    assert stale["stats:a"]["state"] == "delayed" and stale["stats:a"]["cause"] == "silent"
    assert stale["stats:a"]["fixture"] == "a" and stale["stats:a"]["feed"] == "statistics"
    assert math.isclose(stale["stats:a"]["seconds"], 40, abs_tol=1)
    assert stale["live:b"]["state"] == "reconnecting"
    assert stale["live:c"]["state"] == "live"
    assert stale["live:c"]["seconds"] > STALE_AFTER


async def test_no_feed_followed_no_series_and_nothing_stale() -> None:
    now = asyncio.get_running_loop().time()
    mirror = Figures(now, [])
    registry = CollectorRegistry()
    registry.register(MirrorMetrics(mirror, core))
    names = {name for name, _ in samples(generate_latest(registry))}
    assert not {n for n in names if n.startswith("asyncsports_sync_feed_")}
    assert healthy(mirror, now)[1]["stale"] == {}
