"""After a live connection ends: reconnect or raise, through the retry engine (sans I/O)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from asyncsports._wire.retry import Call, Decision, Outcome, RetryPolicy, decide

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

    A refused token is a 401 to :func:`~asyncsports._wire.retry.decide`: one refresh when the
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
        call.reset()  # a connection that delivered a record starts the budget afresh
        return decide(Outcome(), call, policy, now=now, rng=rng)  # not counted
    else:
        decision = decide(Outcome(), call, policy, now=now, rng=rng)
    call.apply(decision)
    return decision
