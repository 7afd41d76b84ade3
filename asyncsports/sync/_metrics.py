"""Prometheus metrics of a running mirror and its ``/healthz``, served over HTTP
(:func:`~asyncsports._http.serve.serve_job`).

Read at each scrape from the mirror's read-only figures (:class:`Figures`) by a custom
collector, so the mirror itself keeps plain counters and never imports prometheus-client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, get_args

from aiohttp import web

from asyncsports._http.serve import Served, Standing, serve_job
from asyncsports.live import HealthState

from ._live import FeedHealth

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = [
    "HEALTHY_WITHIN",
    "STALE_AFTER",
    "STATES",
    "Figures",
    "MirrorMetrics",
    "healthy",
    "serve_metrics",
    "stale",
]

HEALTHY_WITHIN = 120.0
"""Seconds without a good read (while something is planned), or of one task failing
every turn, before /healthz says 503."""

STALE_AFTER = 300.0
"""Seconds without a record after which /healthz names a live feed as stale, whatever its
state (a quiet spell of the match, a break, or a feed that says nothing is wrong)."""

STATES: tuple[HealthState, ...] = get_args(HealthState)
"""A feed's health states, each a series of ``asyncsports_sync_feed_state``."""


class Figures(Protocol):
    """What a running :class:`~asyncsports.sync.Mirror` shows its metrics, read-only."""

    @property
    def started(self) -> float:
        """The loop's time its run started (NaN: never)."""
        ...

    @property
    def fresh(self) -> Mapping[str, float]:
        """The loop's time of each resource's last good read."""
        ...

    @property
    def failing(self) -> Mapping[str, tuple[float, BaseException]]:
        """The tasks whose last turn failed: since when, and the last error."""
        ...

    @property
    def committed(self) -> Mapping[str, int]:
        """Rows changed, by table."""
        ...

    @property
    def requests(self) -> Mapping[tuple[str, int], int]:
        """Reads by resource and HTTP status."""
        ...

    @property
    def found(self) -> Mapping[str, int]:
        """Fixtures in each sport's window at its last listing."""
        ...

    @property
    def connections(self) -> Mapping[str, int]:
        """Websocket connections of the live feeds that ended, by kind."""
        ...

    @property
    def feeds_open(self) -> int:
        """Live feeds open now."""
        ...

    @property
    def feed_health(self) -> Mapping[tuple[str, str], FeedHealth]:
        """Where each live feed of the fixtures followed stands, by (fixture id, feed)."""
        ...

    @property
    def planned(self) -> int:
        """Tasks in the plan."""
        ...

    @property
    def requests_sent(self) -> int:
        """Requests its client sent so far."""
        ...

    @property
    def rate_limit(self) -> float | None:
        """Its client's requests a second (None: no limit)."""
        ...

    def due(self, now: float) -> int:
        """Tasks due at ``now`` and waiting for a worker."""
        ...

    def behind(self, now: float) -> int:
        """Tasks later than their own cadence at ``now``."""
        ...


def healthy(mirror: Figures, now: float) -> tuple[bool, dict[str, object]]:
    """Whether the mirror is doing its work, and what ``/healthz`` answers. ``failing``
    names the tasks whose last turn failed, with their error; one failing for over
    :data:`HEALTHY_WITHIN` makes the mirror unhealthy (one failure that the next turn
    mends does not). ``stale`` names the live feeds that are (see :func:`stale`): a
    vendor's feed the mirror cannot mend, so they leave ``ok`` as it is."""
    last = max(mirror.fresh.values(), default=mirror.started)
    age = now - last if last == last else None  # NaN: never started
    failing = {
        key: {"seconds": now - since, "error": " ".join(str(exc).split())}
        for key, (since, exc) in sorted(mirror.failing.items())
    }
    stuck = any(now - since > HEALTHY_WITHIN for since, _ in mirror.failing.values())
    ok = age is not None and (age <= HEALTHY_WITHIN or not mirror.planned) and not stuck
    return ok, {
        "ok": ok,
        "role": "writer",
        "seconds_since_last_read": age,
        "tasks": mirror.planned,
        "due": mirror.due(now),
        "feeds_open": mirror.feeds_open,
        "committed": dict(mirror.committed),
        "failing": failing,
        "stale": stale(mirror.feed_health.values(), now),
    }


def stale(feeds: Iterable[FeedHealth], now: float) -> dict[str, dict[str, object]]:
    """The live feeds that are stale at ``now`` (the loop's time), by name (``live:`` or
    ``stats:`` and the fixture, as their positions are named): delayed, reconnecting, or
    without a record for over :data:`STALE_AFTER` seconds (since it opened, when none came
    yet); each with its fixture, feed, state, cause, ``seconds`` since its last record and
    ``state_seconds`` in its state."""
    out: dict[str, dict[str, object]] = {}
    for f in sorted(feeds, key=lambda f: (f.fixture_id, f.feed)):
        age = f.age(now)
        if f.state in ("delayed", "reconnecting") or (f.state != "over" and age > STALE_AFTER):
            name = f"{'live' if f.feed == 'actions' else 'stats'}:{f.fixture_id}"
            out[name] = {
                "fixture": f.fixture_id,
                "feed": f.feed,
                "state": f.state,
                "cause": f.cause,
                "seconds": age,
                "state_seconds": now - f.since,
            }
    return out


class MirrorMetrics:
    """The mirror's metrics (those of its role aside), read from ``mirror`` at each
    scrape; its budget counted from when this is made."""

    def __init__(self, mirror: Figures, core: ModuleType) -> None:
        self.mirror = mirror
        self.core = core  # prometheus_client.core
        self.t0 = time.monotonic()
        self.sent0 = mirror.requests_sent

    def collect(self) -> Iterator[Metric]:
        """Every metric, read from the mirror as the scrape comes."""
        CounterMetricFamily = self.core.CounterMetricFamily
        m = self.mirror
        now = asyncio.get_event_loop().time()
        requests = CounterMetricFamily(
            "asyncsports_sync_requests",
            "Reads by resource and HTTP status.",
            labels=["resource", "status"],
        )
        for (resource, status), n in sorted(m.requests.items()):
            requests.add_metric([resource, str(status)], n)
        for kind, n in sorted(m.connections.items()):
            requests.add_metric([kind, "101"], n)  # websocket connections of ended feeds
        yield requests
        changes = CounterMetricFamily(
            "asyncsports_sync_changes", "Rows changed, by table.", labels=["table"]
        )
        for table, n in sorted(m.committed.items()):
            changes.add_metric([table], n)
        yield changes
        yield from self._pace(now)

    def _pace(self, now: float) -> Iterator[Metric]:
        """The gauges of how the mirror keeps up: budget, queue, feeds, windows, freshness."""
        GaugeMetricFamily = self.core.GaugeMetricFamily
        m = self.mirror
        rate = m.rate_limit
        elapsed = max(1e-9, time.monotonic() - self.t0)
        used = (m.requests_sent - self.sent0) / elapsed / rate if rate else 0.0
        yield GaugeMetricFamily(
            "asyncsports_sync_budget_used",
            "Requests per second over rate_limit, since start.",
            value=used,
        )
        yield GaugeMetricFamily(
            "asyncsports_sync_queue_depth", "Tasks due and waiting.", value=m.due(now)
        )
        yield GaugeMetricFamily(
            "asyncsports_sync_tasks_behind",
            "Tasks later than their own cadence: the budget is too small for what is followed.",
            value=m.behind(now),
        )
        yield GaugeMetricFamily(
            "asyncsports_sync_feeds_open",
            "Live websocket feeds open.",
            value=m.feeds_open,
        )
        found = GaugeMetricFamily(
            "asyncsports_sync_window_fixtures",
            "Fixtures in each sport's window (days back "
            "to days ahead of the service's now) at its last listing: 0, nothing to follow.",
            labels=["sport"],
        )
        for sport, n in sorted(m.found.items()):
            found.add_metric([sport], n)
        yield found
        lag = GaugeMetricFamily(
            "asyncsports_sync_freshness_seconds",
            "Seconds since the last good read, by resource.",
            labels=["resource"],
        )
        for resource, at in sorted(m.fresh.items()):
            lag.add_metric([resource], now - at)
        yield lag
        yield from self._feeds(now)

    def _feeds(self, now: float) -> Iterator[Metric]:
        """Each live feed of the fixtures followed: its last record's age, its state."""
        GaugeMetricFamily = self.core.GaugeMetricFamily
        feeds = sorted(self.mirror.feed_health.values(), key=lambda f: (f.fixture_id, f.feed))
        age = GaugeMetricFamily(
            "asyncsports_sync_feed_record_age_seconds",
            "Seconds since a live feed's last record (since it opened, when none came yet), "
            "by fixture and feed, for the fixtures followed.",
            labels=["fixture", "feed"],
        )
        state = GaugeMetricFamily(
            "asyncsports_sync_feed_state",
            "A live feed's health state, by fixture and feed: 1 for its state, 0 for the "
            "others (connecting, live, delayed, reconnecting, over).",
            labels=["fixture", "feed", "state"],
        )
        for f in feeds:
            age.add_metric([f.fixture_id, f.feed], f.age(now))
            for s in STATES:
                state.add_metric([f.fixture_id, f.feed, s], 1.0 if f.state == s else 0.0)
        yield age
        yield state


async def serve_metrics(
    mirror: Served, port: int, host: str = "127.0.0.1", *, standby: Standing | None = None
) -> web.AppRunner:
    """Serve the mirror's ``/metrics`` and ``/healthz`` on ``host:port`` (0: a free port);
    returns the runner (``runner.addresses`` says where; ``await runner.cleanup()`` stops
    it). ``standby``: the mirror runs under it, whose role they report."""
    return await serve_job(mirror, port, host, standby=standby)
