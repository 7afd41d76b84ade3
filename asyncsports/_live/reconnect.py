"""After a live connection ends: reconnect or raise, through the retry engine (sans I/O)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from asyncsports._retry import Call, Decision, Outcome, RetryPolicy, decide

# --------------------------------------------------------------------------- reconnecting


@dataclass(frozen=True, slots=True)
class ConnectionEnd:
    """How one connection ended: ``delivered`` records in it; ``auth_failed`` when the
    token was refused; ``stalled`` when the idle timeout ran out; ``error`` the text of
    what broke it (for the TransportError)."""

    delivered: int = 0
    auth_failed: bool = False
    stalled: bool = False
    error: str = field(default="")


def reset(call: Call) -> None:
    """Start ``call``'s budget afresh: a connection delivered a record."""
    call.reset()


def reconnect(
    end: ConnectionEnd,
    call: Call,
    policy: RetryPolicy,
    *,
    now: float,
    refreshable: bool = False,
    rng: random.Random | None = None,
) -> Decision:
    """What to do after a connection of a feed that is not finished ended, and count it.

    A refused token is a 401 to :func:`~asyncsports._retry.decide`: one refresh when the
    token is refreshable, else ``raise`` (AuthenticationError, no loop). A connection
    that delivered a record resets the budget and its end is not counted: reconnect after
    the first backoff step. Any other end (a drop, a close at once, a stall, a gap alike)
    is one failed attempt: ``retry`` after the backoff, or ``raise`` (TransportError) once
    ``policy.max_retries + 1`` connections in a row delivered nothing. The decision is
    applied to ``call``.
    """
    call.attempts += 1
    if end.auth_failed:
        decision = decide(Outcome(status=401), call, policy, now=now, refreshable=refreshable)
    elif end.delivered > 0:
        reset(call)
        return decide(Outcome(), call, policy, now=now, rng=rng)  # not counted
    else:
        decision = decide(Outcome(), call, policy, now=now, rng=rng)
    call.apply(decision)
    return decision


class Watchdog:
    """The idle timeout of one connection: any message, packet or not, feeds it."""

    __slots__ = ("last", "timeout")

    def __init__(self, timeout: float, now: float) -> None:
        if not timeout > 0:
            raise ValueError(f"idle_timeout: must be > 0, got {timeout!r}")
        self.timeout = timeout
        self.last = now

    def feed(self, now: float) -> None:
        """A message arrived at ``now``."""
        self.last = now

    def remaining(self, now: float) -> float:
        """Seconds before the connection counts as stalled (0 when it does)."""
        return max(0.0, self.last + self.timeout - now)

    def expired(self, now: float) -> bool:
        """Whether nothing arrived for ``timeout`` seconds."""
        return now - self.last >= self.timeout
