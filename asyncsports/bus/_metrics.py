"""Prometheus metrics of a running :class:`~asyncsports.bus.Publisher` and its
``/healthz``, served over HTTP (:func:`~asyncsports._http.serve.serve_job`), read from the
publisher's figures (:class:`Figures`) at each scrape."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from asyncsports._http.serve import Served, Standing, serve_job
from asyncsports._wire.bus import Lags, Target

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["Figures", "PublisherMetrics", "publisher_healthy", "serve_publisher_metrics"]


class Figures(Protocol):
    """What a running :class:`~asyncsports.bus.Publisher` shows its metrics, read-only."""

    @property
    def target(self) -> Target:
        """The bus."""
        ...

    @property
    def connected(self) -> bool:
        """Whether the bus is reached."""
        ...

    @property
    def position(self) -> int | None:
        """The last change acked on the bus (None: not read yet)."""
        ...

    @property
    def head(self) -> int:
        """The last change committed to the database, as last read."""
        ...

    @property
    def published(self) -> int:
        """Changes this process stored on the bus."""
        ...

    @property
    def duplicates(self) -> int:
        """Changes the bus already held."""
        ...

    @property
    def outages(self) -> int:
        """Times the bus was lost and waited for."""
        ...

    @property
    def lags(self) -> Lags:
        """Seconds from each change's commit to its ack on the bus."""
        ...


async def serve_publisher_metrics(
    publisher: Served, port: int, host: str = "127.0.0.1", *, standby: Standing | None = None
) -> web.AppRunner:
    """Serve the ``/metrics`` and ``/healthz`` of a :class:`~asyncsports.bus.Publisher`
    on ``host:port`` (0: a free port), as the mirror's are served: its position, lag
    and role; ``/healthz`` is 200 while it reaches the bus (or stands by, reaching the
    database)."""
    return await serve_job(publisher, port, host, standby=standby)


def publisher_healthy(publisher: Figures) -> tuple[bool, dict[str, object]]:
    """Whether the publisher does its work: reaching the bus."""
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


class PublisherMetrics:
    """The publisher's metrics (those of its role aside), read at each scrape."""

    def __init__(self, publisher: Figures, core: ModuleType) -> None:
        self.publisher = publisher
        self.core = core  # prometheus_client.core

    def collect(self) -> Iterator[Metric]:
        """Every metric, read from the publisher as the scrape comes."""
        core, p = self.core, self.publisher
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
