"""Prometheus metrics of a running :class:`~asyncsports.bus.Publisher` and ``/healthz``,
served over HTTP (:func:`~asyncsports._serve.serve`), read from the publisher at each scrape."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from asyncsports._optional import need
from asyncsports._serve import FEATURE, serve

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from ._publisher import Publisher

__all__ = ["Standing", "publisher_healthy", "serve_publisher_metrics"]


class Standing(Protocol):
    """What the metrics tell of the :class:`~asyncsports.sync.Standby` a publisher runs
    under."""

    role: str
    holder: str | None
    reachable: bool
    takeovers: int


async def serve_publisher_metrics(
    publisher: Publisher, port: int, host: str = "127.0.0.1", *, standby: Standing | None = None
) -> web.AppRunner:
    """Serve the ``/metrics`` and ``/healthz`` of a :class:`~asyncsports.bus.Publisher`
    on ``host:port`` (0: a free port), as the mirror's are served: its position, lag
    and role; ``/healthz`` is 200 while it reaches the bus (or stands by, reaching the
    database)."""
    core = need("prometheus_client.core", FEATURE)
    return await serve(
        _PublisherCollector(publisher, core, standby),
        lambda: publisher_healthy(publisher, standby),
        port,
        host,
    )


def publisher_healthy(
    publisher: Publisher, standby: Standing | None = None
) -> tuple[bool, dict[str, object]]:
    """Whether the publisher does its work: reaching the bus (a standby: the database)."""
    if standby is not None and standby.role == "standby":
        return standby.reachable, {
            "ok": standby.reachable,
            "role": "standby",
            "publisher": standby.holder,
            "takeovers": standby.takeovers,
        }
    p = publisher
    ok = p.connected
    return ok, {
        "ok": ok,
        "role": "publisher",
        "bus": p.target.shown,
        "connected": p.connected,
        "position": p.position,
        "head": p.head,
        "published": p.published,
        "lag_seconds": p.lags.last,
    }


class _PublisherCollector:
    def __init__(self, publisher: Publisher, core: ModuleType, standby: Standing | None) -> None:
        self.publisher = publisher
        self.core = core
        self.standby = standby

    def collect(self) -> Iterator[Metric]:
        """Every metric, read from the publisher as the scrape comes."""
        core, p = self.core, self.publisher
        role = self.standby.role if self.standby is not None else "writer"
        roles = core.GaugeMetricFamily(
            "asyncsports_bus_role",
            "1 for this process's role: publisher (it publishes the "
            "change feed) or standby (another process does; this one takes over when it stops).",
            labels=["role"],
        )
        for name, r in (("publisher", "writer"), ("standby", "standby")):
            roles.add_metric([name], 1.0 if r == role else 0.0)
        yield roles
        if self.standby is not None:
            yield core.CounterMetricFamily(
                "asyncsports_bus_takeovers",
                "Times this process became the publisher.",
                value=self.standby.takeovers,
            )
        yield core.CounterMetricFamily(
            "asyncsports_bus_published",
            "Changes this process stored on the bus.",
            value=p.published,
        )
        yield core.CounterMetricFamily(
            "asyncsports_bus_duplicates",
            "Changes the bus already held (refused or dropped).",
            value=p.duplicates,
        )
        yield core.CounterMetricFamily(
            "asyncsports_bus_outages", "Times the bus was lost and waited for.", value=p.outages
        )
        yield core.GaugeMetricFamily(
            "asyncsports_bus_connected", "1 while the bus is reached.", value=float(p.connected)
        )
        yield core.GaugeMetricFamily(
            "asyncsports_bus_position",
            "The last change (seq) acked on the bus.",
            value=p.position or 0,
        )
        yield core.GaugeMetricFamily(
            "asyncsports_bus_behind",
            "Changes committed but not yet acked on the bus.",
            value=max(0, p.head - (p.position or 0)),
        )
        lag = core.HistogramMetricFamily(
            "asyncsports_bus_lag_seconds",
            "Seconds from a change's commit to its ack on the bus.",
            buckets=p.lags.cumulative(),
            sum_value=p.lags.total,
        )
        yield lag
