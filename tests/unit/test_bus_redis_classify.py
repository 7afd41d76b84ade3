"""What the publisher makes of each error of Redis (issue 41): by redis-py's class, not by
the text, which redis-py strips of the code for the errors it gives a class (``OOM``,
``READONLY``, ``LOADING``, ...), in 5.0.1 as in 8.x. The errors are made by redis-py's own
parser from the lines Redis sends, as a connection makes them."""

from __future__ import annotations

import pytest
from redis import exceptions
from redis._parsers.base import BaseParser

from asyncsports.bus._redis import classify

AWAY = [
    "OOM command not allowed when used memory > 'maxmemory'.",
    "LOADING Redis is loading the dataset in memory",
    "READONLY You can't write against a read only replica.",
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "CLUSTERDOWN The cluster is down",
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist",
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    "NOREPLICAS Not enough good replicas to write.",
    "ERR max number of clients reached",
]

REFUSED = [
    "NOPERM this user has no permissions to run the 'xadd' command",
    "NOPERM No permissions to access a key",
    "WRONGPASS invalid username-password pair or user is disabled.",
    "NOAUTH Authentication required.",
    "ERR The ID specified in XADD is equal or smaller than the target stream top item",
    "WRONGTYPE Operation against a key holding the wrong kind of value",
    "EXECABORT Transaction discarded because of previous errors.",
    "ERR unknown command 'XADD'",
]


@pytest.mark.parametrize("line", AWAY)
def test_redis_taking_no_write_for_now_is_away(line: str) -> None:
    assert classify(BaseParser.parse_error(line)) == "away"


@pytest.mark.parametrize("line", REFUSED)
def test_redis_refusing_is_refused(line: str) -> None:
    assert classify(BaseParser.parse_error(line)) == "refused"


def test_a_connection_lost_or_timed_out_is_away() -> None:
    assert classify(exceptions.ConnectionError("Connection closed by server.")) == "away"
    assert classify(exceptions.TimeoutError("Timeout reading from socket")) == "away"
    assert classify(ConnectionResetError()) == "away"


def test_an_error_not_of_redis_is_not_the_bus_s() -> None:
    assert classify(ValueError("a bug")) is None
