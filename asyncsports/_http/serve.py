"""The HTTP server of a long-running job's ``/metrics`` and ``/healthz`` (aiohttp), for
the mirror (:mod:`asyncsports.sync`) and the bus publisher (:mod:`asyncsports.bus`) alike:
:func:`serve_job` serves any :class:`Served` job, alone or under a standby
(:class:`Standing`), whose role it adds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from asyncsports._optional import need

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["FEATURE", "Collector", "Served", "Standing", "serve", "serve_job"]

FEATURE = "serving Prometheus metrics (--metrics-port)"
"""What needs prometheus-client (said when it is not installed)."""


class Collector(Protocol):
    """A prometheus-client collector: its metrics, read at each scrape."""

    def collect(self) -> Iterator[Metric]:
        """Every metric, as it stands."""
        ...


class Served(Protocol):
    """A job whose ``/metrics`` and ``/healthz`` are served: a mirror, a publisher."""

    title: str
    """What ``/healthz`` and the role metric call the process doing it: ``writer``,
    ``publisher``."""
    duty: str
    """What that process does, in the role metric's help: ``writes the database``."""
    metrics: str
    """The prefix of its metrics' names: ``asyncsports_sync``."""

    def health(self) -> tuple[bool, dict[str, object]]:
        """Whether it does its work, and the state ``/healthz`` answers."""
        ...

    def collector(self, core: ModuleType) -> Collector:
        """Its metrics, made with ``core`` (``prometheus_client.core``), read at each
        scrape from then on."""
        ...


class Standing(Protocol):
    """What ``/healthz`` and the metrics tell of the :class:`~asyncsports.sync.Standby` a
    job runs under."""

    role: str
    """``standby``, or ``writer`` while it holds the lease."""
    holder: str | None
    reachable: bool
    takeovers: int


async def serve_job(
    job: Served, port: int, host: str = "127.0.0.1", *, standby: Standing | None = None
) -> web.AppRunner:
    """Serve ``job``'s ``/metrics`` and ``/healthz`` on ``host:port`` (0: a free port);
    returns the runner (``runner.addresses`` says where; ``await runner.cleanup()`` stops
    it). ``standby``: the job runs under it: while it stands by, ``/healthz`` is 200 as
    long as it reaches the database (it can take over); the metrics say its role."""
    core = need("prometheus_client.core", FEATURE)
    return await serve(_Roles(job, core, standby), lambda: _health(job, standby), port, host)


def _health(job: Served, standby: Standing | None) -> tuple[bool, dict[str, object]]:
    if standby is not None and standby.role == "standby":
        return standby.reachable, {
            "ok": standby.reachable,
            "role": "standby",
            job.title: standby.holder,
            "takeovers": standby.takeovers,
        }
    return job.health()


class _Roles:
    """A job's metrics, after the role of this process (and a standby's takeovers)."""

    def __init__(self, job: Served, core: ModuleType, standby: Standing | None) -> None:
        self.job, self.core, self.standby = job, core, standby
        self.metrics = job.collector(core)

    def collect(self) -> Iterator[Metric]:
        """The role, the takeovers, then the job's own metrics."""
        job, core = self.job, self.core
        role = self.standby.role if self.standby is not None else "writer"
        roles = core.GaugeMetricFamily(
            f"{job.metrics}_role",
            f"1 for this process's role: {job.title} (it {job.duty}) or standby "
            "(another process does; this one takes over when it stops).",
            labels=["role"],
        )
        for name, r in ((job.title, "writer"), ("standby", "standby")):
            roles.add_metric([name], 1.0 if r == role else 0.0)
        yield roles
        if self.standby is not None:
            yield core.CounterMetricFamily(
                f"{job.metrics}_takeovers",
                f"Times this process became the {job.title}.",
                value=self.standby.takeovers,
            )
        yield from self.metrics.collect()


async def serve(
    collector: object,
    health: Callable[[], tuple[bool, dict[str, object]]],
    port: int,
    host: str = "127.0.0.1",
) -> web.AppRunner:
    """The one metrics server: ``collector``'s metrics on ``/metrics`` (read at each
    scrape), ``health()`` on ``/healthz`` (200 or 503, its state as JSON)."""
    client = need("prometheus_client", FEATURE)
    content_type = need("prometheus_client.exposition", FEATURE).CONTENT_TYPE_LATEST
    registry = client.CollectorRegistry(auto_describe=False)
    registry.register(collector)

    async def metrics(request: web.Request) -> web.Response:
        body = client.generate_latest(registry)
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def healthz(request: web.Request) -> web.Response:
        ok, state = health()
        return web.json_response(state, status=200 if ok else 503)

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
