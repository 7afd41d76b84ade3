"""The mirror's "now": the service's clock, as the ``Date`` of its responses tells it.

The fixtures followed are those of a window of dates around now, and the service's now,
not this machine's: against a server whose clock differs (an emulator started at its own
date, a machine whose clock is off) the machine's window holds none of its fixtures.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

__all__ = ["SKEW", "ServiceClock"]

log = logging.getLogger("asyncsports.sync")

SKEW = 60.0
"""Seconds between the service's clock and this machine's worth a line in the log."""


class ServiceClock:
    """Now as the service sees it, in epoch seconds: ``server()`` (the client's
    :meth:`~asyncsports.Client.server_time`, from the last response's ``Date``) when it
    says, else the last difference it showed from ``local()``, else ``local()`` alone (no
    response yet, or no sensible ``Date`` in any).

    Says once in the log when the two clocks differ by more than :data:`SKEW`, and once
    when the service has answered (``answered()``) without a usable ``Date``. Once: a
    service whose clock runs fast (an emulator at ``--speed 60``) moves the difference
    on at every read, and a line each time would drown the log.
    """

    def __init__(
        self,
        server: Callable[[], float | None],
        answered: Callable[[], bool],
        local: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        self.answered = answered
        self.local = local
        self.offset: float | None = None  # the service's clock minus this machine's
        self._said: float | None = None  # the offset last said in the log
        self._fallback_said = False

    def __call__(self) -> float:
        local = self.local()
        server = self.server()
        if server is not None:
            offset = self.offset = server - local
            if abs(offset) > SKEW and self._said is None:
                self._said = offset
                log.warning(
                    "mirror: the service's clock reads %s, this machine's %s (%s apart): "
                    "the mirror follows the service's",
                    _iso(server),
                    _iso(local),
                    _span(abs(offset)),
                )
        elif self.offset is None and not self._fallback_said and self.answered():
            self._fallback_said = True
            log.info(
                "mirror: the service's responses carry no usable Date header: the mirror's "
                "now is this machine's clock (%s)",
                _iso(local),
            )
        return local + (self.offset or 0.0)


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(round(seconds), dt.UTC).isoformat().replace("+00:00", "Z")


def _span(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 60:.0f} minutes"
