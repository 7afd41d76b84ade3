"""``/_emulator/clock``: another process reads and steers the emulator's clock over HTTP.

``GET`` answers ``{"now": ISO 8601, "time": epoch seconds, "speed": X}``. ``POST`` takes a
JSON object with any of ``now`` (ISO 8601, naive is UTC, or epoch seconds), ``advance``
(seconds, >= 0) and ``speed`` (>= 0; 0 freezes), applied in that order, and answers the
new state. Not a route of the emulated services: no credentials, not counted, never
rate limited, no faults.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping

from aiohttp import web

from asyncsports.emulator._clock import Clock

__all__ = ["CLOCK_PATH", "clock_routes", "clock_state", "steer"]

CLOCK_PATH = "/_emulator/clock"
_KEYS = ("now", "advance", "speed")


def clock_state(clock: Clock) -> dict[str, object]:
    """What ``GET /_emulator/clock`` answers."""
    return {"now": clock.now().isoformat(), "time": clock.time(), "speed": clock.speed}


def _when(value: object) -> dt.datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value, dt.UTC)
    if isinstance(value, str):
        when = dt.datetime.fromisoformat(value)
        return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)
    raise ValueError(f"now: expected an ISO 8601 time or epoch seconds, got {value!r}")


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    return float(value)


def steer(clock: Clock, body: object) -> None:
    """Apply a ``POST`` body to ``clock``; ValueError or TypeError says what is wrong."""
    if not isinstance(body, Mapping) or not body:
        raise ValueError(f"expected a JSON object with any of {', '.join(_KEYS)}")
    unknown = sorted(set(body) - set(_KEYS))
    if unknown:
        raise ValueError(f"unknown keys {unknown}: expected any of {', '.join(_KEYS)}")
    # Check everything before changing anything: a bad body changes nothing.
    when = _when(body["now"]) if "now" in body else None
    step = _number("advance", body["advance"]) if "advance" in body else None
    speed = _number("speed", body["speed"]) if "speed" in body else None
    if step is not None and step < 0:
        raise ValueError(f"advance: the clock only moves forward, got {step}")
    if speed is not None and speed < 0:
        raise ValueError(f"speed: must be >= 0 (0 freezes), got {speed}")
    if when is not None:
        clock.set(when)
    if step:
        clock.advance(step)
    if speed is not None:
        clock.speed = speed


def clock_routes(app: web.Application, clock: Clock) -> None:
    """Add ``GET`` and ``POST`` ``/_emulator/clock`` to ``app``."""

    async def get(request: web.Request) -> web.Response:
        return web.json_response(clock_state(clock))

    async def post(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read() or b"null")
            steer(clock, body)
        except (ValueError, TypeError, OverflowError) as exc:
            return web.json_response({"error": str(exc), "status": 400}, status=400)
        return web.json_response(clock_state(clock))

    app.router.add_get(CLOCK_PATH, get)
    app.router.add_post(CLOCK_PATH, post)
