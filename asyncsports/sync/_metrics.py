"""Prometheus metrics of a running mirror and ``/healthz``, served over HTTP
(:func:`~asyncsports._serve.serve`).

Read from the mirror at each scrape by a custom collector, so the mirror itself keeps
plain counters and never imports prometheus-client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from aiohttp import web

from asyncsports._optional import need
from asyncsports._serve import FEATURE, serve

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from ._mirror import Mirror
    from ._standby import Standby

__all__ = ["HEALTHY_WITHIN", "healthy", "serve_metrics"]

HEALTHY_WITHIN = 120.0
"""Seconds without a good read (while something is planned), or of one task failing
every turn, before /healthz says 503."""


def healthy(
    mirror: Mirror, now: float, standby: Standby | None = None
) -> tuple[bool, dict[str, object]]:
    """Whether the mirror is doing its work, and what ``/healthz`` answers. A standby
    (``role``: ``standby``) is healthy while it can reach the database: it can take over.
    ``failing`` names the tasks whose last turn failed, with their error; one failing
    for over :data:`HEALTHY_WITHIN` makes the mirror unhealthy (one failure that the
    next turn mends does not)."""
    if standby is not None and standby.role == "standby":
        return standby.reachable, {
            "ok": standby.reachable,
            "role": "standby",
            "writer": standby.holder,
            "takeovers": standby.takeovers,
        }
    last = max(mirror.fresh.values(), default=mirror.started)
    age = now - last if last == last else None  # NaN: never started
    failing = {
        key: {"seconds": now - since, "error": " ".join(str(exc).split())}
        for key, (since, exc) in sorted(mirror.failing.items())
    }
    stuck = any(now - since > HEALTHY_WITHIN for since, _ in mirror.failing.values())
    ok = age is not None and (age <= HEALTHY_WITHIN or not mirror.plan.tasks) and not stuck
    return ok, {
        "ok": ok,
        "role": "writer",
        "seconds_since_last_read": age,
        "tasks": len(mirror.plan.tasks),
        "due": mirror.plan.depth(now),
        "feeds_open": mirror.live.open(),
        "committed": dict(mirror.committed),
        "failing": failing,
    }


class _Collector:
    def __init__(self, mirror: Mirror, core: ModuleType, standby: Standby | None) -> None:
        self.mirror = mirror
        self.standby = standby
        self.core = core  # prometheus_client.core
        self.t0 = time.monotonic()
        self.sent0 = mirror.client.requests_sent

    def collect(self) -> Iterator[Metric]:
        """Every metric, read from the mirror as the scrape comes."""
        CounterMetricFamily = self.core.CounterMetricFamily
        GaugeMetricFamily = self.core.GaugeMetricFamily
        m = self.mirror
        now = asyncio.get_event_loop().time()
        role = self.standby.role if self.standby is not None else "writer"
        roles = GaugeMetricFamily(
            "asyncsports_sync_role",
            "1 for this process's role: writer (it writes the "
            "database) or standby (another process does; this one takes over when it stops).",
            labels=["role"],
        )
        for r in ("writer", "standby"):
            roles.add_metric([r], 1.0 if r == role else 0.0)
        yield roles
        if self.standby is not None:
            yield CounterMetricFamily(
                "asyncsports_sync_takeovers",
                "Times this process became the writer.",
                value=self.standby.takeovers,
            )
        requests = CounterMetricFamily(
            "asyncsports_sync_requests",
            "Reads by resource and HTTP status.",
            labels=["resource", "status"],
        )
        for (resource, status), n in sorted(m.requests.items()):
            requests.add_metric([resource, str(status)], n)
        for kind, n in sorted(m.live.connections.items()):
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
        rate = m.client.settings.rate_limit
        elapsed = max(1e-9, time.monotonic() - self.t0)
        used = (m.client.requests_sent - self.sent0) / elapsed / rate if rate else 0.0
        yield GaugeMetricFamily(
            "asyncsports_sync_budget_used",
            "Requests per second over rate_limit, since start.",
            value=used,
        )
        yield GaugeMetricFamily(
            "asyncsports_sync_queue_depth", "Tasks due and waiting.", value=m.plan.depth(now)
        )
        late = m.plan.late(now)
        yield GaugeMetricFamily(
            "asyncsports_sync_tasks_behind",
            "Tasks later than their own cadence: the budget is too small for what is followed.",
            value=len(late),
        )
        yield GaugeMetricFamily(
            "asyncsports_sync_feeds_open",
            "Live websocket feeds open.",
            value=m.live.open(),
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


async def serve_metrics(
    mirror: Mirror, port: int, host: str = "127.0.0.1", *, standby: Standby | None = None
) -> web.AppRunner:
    """Serve ``/metrics`` and ``/healthz`` on ``host:port`` (0: a free port); returns the
    runner (``runner.addresses`` says where; ``await runner.cleanup()`` stops it).
    ``standby``: the mirror runs under it, whose role they report."""
    core = need("prometheus_client.core", FEATURE)
    loop = asyncio.get_running_loop()
    return await serve(
        _Collector(mirror, core, standby), lambda: healthy(mirror, loop.time(), standby), port, host
    )
