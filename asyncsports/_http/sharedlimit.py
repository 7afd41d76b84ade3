"""One rate budget shared through Redis by every client that names the same URL and key.

The limiter is the client's own GCRA with no burst (:mod:`asyncsports._http.ratelimit`), its
state (the theoretical arrival time) kept in Redis instead of in the process, and every
step one Lua script, so the step is atomic however many processes and machines share the
key. The script reads Redis's clock (``TIME``), so the sharers' clocks need not agree.
A 429 seen by one sharer pauses them all: the pause is stored beside the state and every
step waits for it. Redis is a server every ops team already runs; redis-py's asyncio
client speaks to it (``rate_limit_url="redis://host:6379/0"``).

When Redis cannot be reached, the client warns and falls back to its local limiter at
``rate / sharers`` (each of the expected sharers taking its share), and asks Redis again
:data:`RETRY_AFTER` seconds later.
"""

from __future__ import annotations

import asyncio
import logging
import time
import urllib.parse
from typing import Any

from asyncsports._http.ratelimit import Pacer, spacing
from asyncsports._optional import need
from asyncsports._wire.defaults import RATE_LIMIT_KEY

__all__ = ["MARGIN_SHARED", "RETRY_AFTER", "SharedPacer"]

log = logging.getLogger("asyncsports")

MARGIN_SHARED = 0.04
"""The margin of a shared budget: requests go ``1.04 / R`` apart (96% of it at most).

Twice the local one (``ratelimit.MARGIN``): a sharer's request leaves after a round trip
to Redis and reaches the server by its own path, so two sharers' turns ``1 / R`` apart can
arrive closer than that; 40 ms a window absorbs it.
"""

RETRY_AFTER = 5.0
"""Seconds the local fallback is used before Redis is asked again."""

# KEYS: the state (next turn) and the pause, in microseconds of Redis's clock.
# ARGV[1]: the spacing in microseconds. Returns the microseconds to wait for this turn.
_STEP = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local pause = tonumber(redis.call('GET', KEYS[2]) or '0')
local at = math.max(tat, now, pause)
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', at + interval), 'PX',
           math.floor((at + interval - now) / 1000) + 60000)
return at - now
"""

# ARGV[1]: the pause in microseconds from now; a longer pause already set stays.
_PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local until_ = now + tonumber(ARGV[1])
local old = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ > old then
  redis.call('SET', KEYS[1], string.format('%d', until_), 'PX',
             math.floor(tonumber(ARGV[1]) / 1000) + 1000)
end
return 0
"""


def _redis(url: str) -> Any:
    aioredis = need("redis.asyncio", "a rate budget shared in Redis (rate_limit_url)")
    # Short timeouts: a Redis that does not answer costs a request at most this much
    # before the local fallback takes over.
    return aioredis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)


class SharedPacer:
    """The :class:`~asyncsports._http.ratelimit.Pacer` interface (``await wait()``) over Redis.

    ``rate`` is the whole budget, shared by every client of ``url`` and ``key``;
    ``sharers`` is how many are expected, for the fallback's share.
    """

    def __init__(
        self, rate: float, url: str, key: str = RATE_LIMIT_KEY, *, sharers: int = 1
    ) -> None:
        self.rate = rate
        self.url = url
        self.key = key
        self.sharers = sharers
        self.interval = spacing(rate, MARGIN_SHARED)
        self.local = Pacer(rate / sharers)
        self.fallbacks = 0
        self._keys = [f"asyncsports:{{{key}}}:tat", f"asyncsports:{{{key}}}:pause"]
        self._redis = _redis(url)
        self._step = self._redis.register_script(_STEP)
        self._pause = self._redis.register_script(_PAUSE)
        self._down_until = 0.0

    async def wait(self) -> None:
        """Wait for this caller's turn in the shared budget (or the local share)."""
        if time.monotonic() >= self._down_until:
            try:
                micros = await self._step(keys=self._keys, args=[round(self.interval * 1e6)])
            except Exception as exc:  # any failure of Redis: the local share, and a warning
                self._fall_back(exc)
            else:
                if micros > 0:
                    await asyncio.sleep(micros / 1e6)
                return
        await self.local.wait()

    async def pause(self, seconds: float) -> None:
        """Pause every sharer for ``seconds`` (after a 429)."""
        if seconds <= 0 or time.monotonic() < self._down_until:
            return
        try:
            await self._pause(keys=self._keys[1:], args=[round(seconds * 1e6)])
        except Exception as exc:
            self._fall_back(exc)

    def _fall_back(self, exc: Exception) -> None:
        now = time.monotonic()
        if now < self._down_until:
            return  # another waiter found it down a moment ago and said so
        self.fallbacks += 1
        self._down_until = now + RETRY_AFTER
        where = urllib.parse.urlsplit(self.url)
        log.warning(
            "rate limit: Redis at %s unreachable (%s): limiting this client alone to "
            "%.3g requests/s (%s / %d sharers) for %.0f s",
            where.hostname if where.port is None else f"{where.hostname}:{where.port}",
            exc,
            self.rate / self.sharers,
            f"{self.rate:g}",
            self.sharers,
            RETRY_AFTER,
        )

    async def aclose(self) -> None:
        """Close the connections to Redis."""
        await self._redis.aclose()
