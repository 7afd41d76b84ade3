"""A loopback TCP proxy to a server, to cut: the bus "away" without stopping it.

:class:`Proxy` passes bytes both ways between its clients and the server at ``port``.
:meth:`Proxy.down` drops every connection at once (the client sees an abrupt end, the
server half of whatever was under way) and stops listening, so that new ones are
refused, as by a server stopped, until :meth:`Proxy.up`; :meth:`Proxy.cut` drops the
connections of now and lets new ones through; with :attr:`Proxy.dropping` set, each new
connection is accepted and dropped at once (a proxy or load balancer whose server is
gone); :meth:`Proxy.hold` stops passing bytes on (a request under way, its answer held)
until :meth:`Proxy.release`. Far faster than stopping and starting the server, so a test can do it often.
"""

from __future__ import annotations

import asyncio
import socket
import struct


class Proxy:
    """``async with Proxy(port) as proxy``: ``proxy.port`` is where to connect instead.

    It listens on a socket of its own (not an ``asyncio.Server``, whose transports,
    closed after the server, upset asyncio 3.13.0's bookkeeping)."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.is_down = False
        self.dropping = False
        self.listen = 0
        self.cuts = 0  # connections dropped
        self._sock: socket.socket | None = None
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.flowing = asyncio.Event()
        self.flowing.set()

    async def __aenter__(self) -> Proxy:
        self._open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def port(self) -> int:
        """Where to connect (the same across :meth:`down` and :meth:`up`)."""
        return self.listen

    def _open(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.listen))
        sock.listen(128)
        sock.setblocking(False)
        self.listen = sock.getsockname()[1]
        self._sock = sock
        # Accepted in a reader callback, not by loop.sock_accept: a sock_accept cancelled
        # as a connection came in lost that connection, accepted, open and never served
        # (asyncio 3.13.0's InvalidStateError), so its client waited out its time-out.
        asyncio.get_running_loop().add_reader(sock, self._accept, sock)

    async def _close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            asyncio.get_running_loop().remove_reader(sock)
            sock.close()

    async def down(self) -> None:
        """Drop every connection and refuse new ones, until :meth:`up`."""
        self.is_down = True
        await self._close()
        self.cut()

    async def up(self) -> None:
        """Listen again (on the same port)."""
        self.is_down = False
        if self._sock is None:
            self._open()

    def hold(self) -> None:
        """Pass no byte on, either way, until :meth:`release` (connections kept open)."""
        self.flowing.clear()

    def release(self) -> None:
        """Pass bytes on again."""
        self.flowing.set()

    def cut(self) -> None:
        """Drop every connection of now (new ones pass, unless down)."""
        for pair in list(self._pairs):
            for w in pair:
                w.transport.abort()
            self.cuts += 1
        self._pairs.clear()

    def _accept(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:  # none waiting (BlockingIOError), or the socket closed
                return
            conn.setblocking(False)
            if self.dropping:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # a reset, before the server's first word
                continue
            task = asyncio.ensure_future(self._serve(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, conn: socket.socket) -> None:
        try:
            down_r, down_w = await asyncio.open_connection(sock=conn)
        except OSError:
            conn.close()
            return
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            down_w.transport.abort()
            return
        pair = (down_w, up_w)
        if self.is_down or self.dropping:  # went down while this one connected
            for w in pair:
                w.transport.abort()
            return
        self._pairs.add(pair)
        ups = asyncio.ensure_future(_pipe(down_r, up_w, self.flowing))
        downs = asyncio.ensure_future(_pipe(up_r, down_w, self.flowing))
        try:
            await asyncio.wait([ups, downs], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (ups, downs):
                t.cancel()
            await asyncio.gather(ups, downs, return_exceptions=True)
            for w in pair:
                w.transport.abort()
            self._pairs.discard(pair)


async def _pipe(
    src: asyncio.StreamReader, dst: asyncio.StreamWriter, flowing: asyncio.Event
) -> None:
    while True:
        data = await src.read(65536)
        if not data:
            return
        await flowing.wait()
        dst.write(data)
        await dst.drain()
