"""The HTTP server of a long-running command's ``/metrics`` and ``/healthz`` (aiohttp):
:func:`serve`, for the mirror (:mod:`asyncsports.sync`) and the bus publisher
(:mod:`asyncsports.bus`) alike."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from asyncsports._optional import need

__all__ = ["FEATURE", "serve"]

FEATURE = "serving Prometheus metrics (--metrics-port)"
"""What needs prometheus-client (said when it is not installed)."""


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
