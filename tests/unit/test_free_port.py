"""The tests' free ports: a server stopped and started again on its port keeps it."""

import socket
from pathlib import Path

from support.servers import free_port


def ephemeral() -> range:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return range(low, high + 1)


def test_a_free_port_is_none_that_a_bind_to_port_0_can_be_given() -> None:
    # A Redis stopped by a test left its port free, and another test's server bound to
    # port 0 was given it: the publisher met an HTTP server where its Redis had been.
    ports = {free_port() for _ in range(50)}
    assert not ports & set(ephemeral())
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free indeed
