"""A websocket that pushes its messages to a :class:`~.base.Listener`.

picows (Cython) parses the frames and calls back per frame from the event loop's read
callback: a message reaches the listener with no task woken and no future resolved, as
aiohttp's ``receive()`` needs per message. :func:`listen` opens one; :class:`PushedSocket`
is both picows' listener and the :class:`~.base.Pushed` socket handed back.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket as _socket
import ssl
import struct
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import picows

from asyncsports._http.transports.base import Handshake, Listener

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = ["PushedSocket", "listen"]

_TEXT = picows.WSMsgType.TEXT
_BINARY = picows.WSMsgType.BINARY
_CONTINUATION = picows.WSMsgType.CONTINUATION
_CLOSE = picows.WSMsgType.CLOSE
_PING = picows.WSMsgType.PING
_TOO_BIG = picows.WSCloseCode.MESSAGE_TOO_BIG
_PROTOCOL = picows.WSCloseCode.PROTOCOL_ERROR

MAX_MESSAGE = 64 * 1024 * 1024
"""The bytes of one message (its fragments joined) when ``max_size`` sets none."""
MAX_FRAGMENTS = 4096
"""The frames of one fragmented message, empty ones counted: a server that sends
continuations for ever is cut off here, not when its bytes add up."""
MAX_UNSENT = 1024 * 1024
"""The bytes the client may have waiting to be sent (pongs, above all): a server that
pings and never reads would otherwise fill memory with the answers."""


class MessageTooBig(picows.WSError):
    """A message (its fragments joined) longer than the socket's ``max_size``, or in more
    than :data:`MAX_FRAGMENTS` frames."""


class NotReading(picows.WSError):
    """The server reads nothing: more than :data:`MAX_UNSENT` bytes wait to be sent."""


async def listen(
    settings: Settings,
    url: str,
    headers: Mapping[str, str] | None,
    max_size: int,
    listener: Listener,
    gone: Callable[[PushedSocket], object] | None = None,
) -> PushedSocket:
    """Open a websocket to ``url`` whose messages go to ``listener``.

    Connecting and the handshake together take at most ``settings.timeout.connect``. A
    handshake answered with an HTTP status raises :class:`Handshake` (a redirect is not
    followed); else what fails is an :class:`OSError`, a ``picows.WSError`` or a
    :class:`TimeoutError`. Messages the server sends right after its handshake may reach
    ``listener`` before this returns. ``gone`` is called with the socket once it is closed.
    """
    loop = asyncio.get_running_loop()
    limit = settings.timeout.connect
    socket = PushedSocket(loop, listener, max_size, limit or 10.0, gone)
    try:
        async with asyncio.timeout(limit):
            transport = await _connect(socket, settings, url, headers)
    except picows.WSHandshakeError as exc:
        response = exc.response
        if response is None or response.status == 101:
            raise
        raise Handshake(int(response.status), response.headers) from None
    except BaseException:
        socket.abandon()
        raise
    if not socket.connected:
        # picows hands back a transport whose connection was lost during the handshake.
        _drop(transport)
        raise ConnectionResetError("the connection closed during the websocket handshake")
    return socket


async def _connect(
    socket: PushedSocket, settings: Settings, url: str, headers: Mapping[str, str] | None
) -> picows.WSTransport:
    """picows' connection for ``socket``, as this client opens every one."""
    transport, _ = await picows.ws_connect(
        lambda: socket,
        url,
        ssl_context=_context(settings, url),
        # picows closes a connection whose handshake is late on its own: what a
        # cancelled ws_connect leaves behind is dropped too.
        websocket_handshake_timeout=settings.timeout.connect,
        logger_name="asyncsports",
        # Pings are answered here, so that a server that pings and never reads is
        # cut off (MAX_UNSENT) rather than answered into memory without end.
        enable_auto_pong=False,
        max_frame_size=socket.max_frame,
        extra_headers=dict(headers or {}),  # the User-Agent among them
        max_redirects=0,
        # A packet is a kilobyte or two and the buffer grows for a bigger one: an
        # idle feed holds 4 KB, not picows' default 16 KB.
        read_buffer_init_size=4096,
    )
    return transport


def _context(settings: Settings, url: str) -> ssl.SSLContext | None:
    """TLS that checks nothing when ``verify_ssl`` is off, else picows' default."""
    if settings.verify_ssl or not url.startswith("wss:"):
        return None
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() resets the connection


def _drop(transport: picows.WSTransport) -> None:
    """Drop the connection at once, with a TCP reset.

    The transport's ``abort`` only closes the socket, and the kernel goes on with the
    connection: it sends the bytes it still holds, then a FIN. A server that reads
    nothing (a ping flood's) takes none of them: the connection stays open on both
    machines, the kernel holding the unsent pongs and the server writing on. With
    SO_LINGER at 0 the close is a reset: the kernel drops the bytes and the connection,
    and the server's next segment is refused. A socket closed already is left as it is.
    """
    sock = transport.underlying_transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # closed already: nothing to reset
            sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_LINGER, _RESET)
    transport.disconnect(False)


async def _reap(transport: picows.WSTransport) -> None:
    """Take the error picows keeps for ``wait_disconnected`` (the listener was told it):
    unretrieved, asyncio would log it."""
    with contextlib.suppress(Exception):
        await transport.wait_disconnected()


class PushedSocket(picows.WSListener):
    """picows' listener for one connection, and the socket its user holds.

    Messages go to the :class:`Listener` as they are parsed, but for ``pause()``: picows
    still hands over the rest of what it read, which waits here, in order, for
    ``resume()``. The listener's ``on_closed`` then comes after the last message.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        listener: Listener,
        max_size: int,
        close_wait: float,
        gone: Callable[[PushedSocket], object] | None,
    ) -> None:
        self._loop = loop
        self._listener = listener
        self._on_message = listener.on_message
        self._max_size = max_size or MAX_MESSAGE
        self._max_frame = self._max_size
        self._close_wait = close_wait
        self._gone = gone
        self._transport: picows.WSTransport | None = None
        self._code: int | None = None
        self._error: BaseException | None = None
        # Messages pass straight through while _open (see _reopen); else they wait in
        # _held (paused) or are dropped (_ended: the client closed or aborted, or the
        # listener failed).
        self._open = True
        self._paused = False
        self._ended = False
        self._abandoned = False
        self._held: deque[bytes] | None = None  # made when needed: 760 bytes an idle feed
        self._parts: list[bytes] | None = None
        self._size = 0
        self._frames = 0
        self._closed = False
        self._told = False
        self._disconnected = loop.create_future()
        self._reaper: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------- picows' callbacks

    def on_ws_connected(self, transport: picows.WSTransport) -> None:
        self._transport = transport
        if self._abandoned:
            _drop(transport)

    def on_ws_frame(self, transport: picows.WSTransport, frame: picows.WSFrame) -> None:
        kind = frame.msg_type
        if (
            self._open
            and (kind is _TEXT or kind is _BINARY)
            and frame.fin
            and frame.payload_size <= self._max_frame
        ):
            # The hot path: a whole message, nothing held, nothing half joined.
            try:
                self._on_message(frame.get_payload_as_bytes())
            except Exception as exc:
                self._failed(exc)
            return
        if self._ended and kind is not _CLOSE:
            # Ended (closed, aborted, failed) while frames read with the one that ended it
            # are still parsed: none is acted on. A pong, a close frame refusing a stray
            # fragment, written to a dropped socket: each a "write() called after
            # connection lost" warning, once a ping under a flood.
            return
        if frame.payload_size > self._max_frame:
            # picows refused it (a close frame 1009 went out) but parses on: the end.
            if not self._ended:
                self._error = MessageTooBig(f"a message of more than {self._max_size} bytes")
                self._end()
            return
        if (kind is _TEXT or kind is _BINARY) and frame.fin and self._parts is None:
            if not self._ended:
                self._hold(frame.get_payload_as_bytes())  # paused, or after held ones
        elif kind is _TEXT or kind is _BINARY or kind is _CONTINUATION:
            self._fragment(transport, frame, kind is _CONTINUATION)
        elif kind is _PING:
            self._pong(transport, frame)
        elif kind is _CLOSE:
            code = frame.get_close_code()
            self._code = code.value
            if not (transport.is_close_frame_sent or transport.underlying_transport.is_closing()):
                transport.send_close(code)
            transport.disconnect()
        # A PONG needs nothing.

    def on_ws_disconnected(self, transport: picows.WSTransport) -> None:
        self._closed = True
        # A task only now, not for the connection's life: 1 KB less an idle feed.
        self._reaper = self._loop.create_task(_reap(transport))
        if self._error is None and not self._ended:
            self._error = _failure(transport)
        if not self._disconnected.done():
            self._disconnected.set_result(None)
        if self._gone is not None:
            self._gone(self)
        if not self._held or self._ended:
            self._tell()
        # else: told after the held messages (resume)

    # ---------------------------------------------------------------- the Pushed socket

    @property
    def connected(self) -> bool:
        """Whether picows handed the socket its connection (one lost during the handshake
        never is)."""
        return self._transport is not None

    @property
    def max_frame(self) -> int:
        """The largest frame the socket takes (its message limit)."""
        return self._max_frame

    @property
    def closed(self) -> bool:
        """Whether the connection is gone (messages read before may still be held)."""
        return self._closed

    @property
    def close_code(self) -> int | None:
        """The server's close code (0: a close frame without one), or None."""
        return self._code

    async def send_str(self, data: str) -> None:
        """Send a text message (queued by the socket at once). Raises ConnectionResetError
        once the client closed it; one the server closed first takes it and loses it (as a
        socket whose peer is gone does): the listener hears of the end (``on_closed``)."""
        transport = self._transport
        if transport is None or self._ended:
            raise ConnectionResetError("the websocket is closed")
        if not self._closed:
            transport.send(_TEXT, data.encode())

    async def close(self, *, code: int = 1000) -> bool:
        """Send a close frame, wait at most the close wait for the server's answer (or its
        disconnect), then drop the connection. No message reaches the listener after this.
        False when it was closed already."""
        transport = self._transport
        if transport is None or self._closed:
            self._end()
            return False
        self._end()
        if self._paused:
            transport.underlying_transport.resume_reading()  # to read the server's close
        transport.send_close(picows.WSCloseCode(code))
        if transport.underlying_transport.get_write_buffer_size():
            # The close frame waits behind what the server has not read: it reads
            # nothing (a flood of pings, say), and would not answer; drop it now.
            _drop(transport)
        try:
            async with asyncio.timeout(self._close_wait):
                await asyncio.shield(self._disconnected)
        except TimeoutError:
            _drop(transport)
            await asyncio.shield(self._disconnected)  # the loop's next turn
        except BaseException:
            _drop(transport)
            raise
        return True

    def abort(self) -> None:
        """Drop the connection at once: no close frame, no message after this; the
        listener's ``on_closed`` follows from the event loop."""
        self._end()
        if self._transport is not None:
            _drop(self._transport)

    def pause(self, *, hold: bool = True) -> None:
        """Stop reading the socket; what picows read already waits for :meth:`resume`
        (``hold``), or goes on to the listener (not ``hold``: a listener that queues the
        bytes itself, where holding them here would only hand them over later, slower)."""
        if hold:
            if self._paused:
                return
            self._paused = True
            self._open = False
        if self._transport is not None and not self._closed:
            self._transport.underlying_transport.pause_reading()

    def resume(self) -> None:
        """Read again; held messages go to the listener first (from the event loop)."""
        if not self._paused:
            if self._transport is not None and not self._closed:
                self._transport.underlying_transport.resume_reading()  # paused not holding
            return
        self._paused = False
        if self._held:
            self._loop.call_soon(self._drain)
        self._reopen()
        if self._transport is not None and not self._closed:
            self._transport.underlying_transport.resume_reading()

    # ---------------------------------------------------------------- internals

    def _pong(self, transport: picows.WSTransport, frame: picows.WSFrame) -> None:
        """Answer a ping, unless the answers pile up unsent: then the connection ends."""
        unsent = transport.underlying_transport.get_write_buffer_size()
        if unsent > MAX_UNSENT:
            if not self._ended:
                self._error = NotReading(
                    f"the server reads nothing: {unsent} bytes unsent (its pings unanswered)"
                )
                self.abort()
            return
        transport.send_pong(frame.get_payload_as_bytes())

    def abandon(self) -> None:
        """The opening failed or was cancelled: drop whatever picows connected."""
        self._abandoned = True
        self._end()
        if self._transport is not None:
            _drop(self._transport)

    def _reopen(self) -> None:
        self._open = not (self._paused or self._ended or self._held or self._parts is not None)

    def _deliver(self, data: bytes) -> None:
        try:
            self._on_message(data)
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        """The listener raised: not picows' to log and swallow, the connection ends."""
        self._error = exc
        self.abort()

    def _fragment(self, transport: picows.WSTransport, frame: picows.WSFrame, more: bool) -> None:
        """A frame of a fragmented message: kept until the one with ``fin``."""
        if (self._parts is None) == more:
            # A continuation of nothing, or a new message inside one (RFC 6455, 5.4).
            self._fail(transport, picows.WSProtocolError(_PROTOCOL, "unexpected fragment"))
            return
        if self._parts is None:
            self._parts, self._size, self._frames = [], 0, 0
            self._open = False
        self._size += frame.payload_size
        self._frames += 1
        if self._size > self._max_size or self._frames > MAX_FRAGMENTS:
            too_big = MessageTooBig(
                f"a message of more than {self._max_size} bytes or {MAX_FRAGMENTS} frames"
            )
            self._fail(transport, too_big, _TOO_BIG)
            return
        if frame.payload_size:
            self._parts.append(frame.get_payload_as_bytes())
        if frame.fin:
            data, self._parts = b"".join(self._parts), None
            self._reopen()
            if self._open:
                self._deliver(data)
            elif not self._ended:
                self._hold(data)

    def _fail(
        self,
        transport: picows.WSTransport,
        error: BaseException,
        code: picows.WSCloseCode = _PROTOCOL,
    ) -> None:
        """End the connection for ``error``: a close frame with ``code``, then disconnect."""
        self._error = error
        self._end()
        transport.send_close(code)
        # Gracefully only when nothing waits to be sent: a server that does not read would
        # keep a graceful close open for ever.
        if transport.underlying_transport.get_write_buffer_size() == 0:
            transport.disconnect()
        else:
            _drop(transport)

    def _hold(self, data: bytes) -> None:
        if self._held is None:
            self._held = deque()
        self._held.append(data)

    def _drain(self) -> None:
        held = self._held
        while held and not self._paused and not self._ended:
            self._deliver(held.popleft())
        if held and not self._ended:
            return  # paused again: the next resume goes on
        self._held = None
        if self._closed:
            self._tell()
        else:
            self._reopen()

    def _end(self) -> None:
        self._ended = True
        self._open = False
        self._held = None
        self._parts = None
        if self._closed and not self._told:
            # Gone while paused with messages held: on_closed waited for them.
            self._loop.call_soon(self._tell)

    def _tell(self) -> None:
        if not self._told:
            self._told = True
            self._listener.on_closed(self._code, self._error)


def _failure(transport: picows.WSTransport) -> BaseException | None:
    """What picows closed the connection for on its own (a protocol error, a frame over
    ``max_frame_size``): a close frame it sent without one received, else None."""
    shake = transport.close_handshake
    if shake is None or shake.sent is None or shake.recv_then_sent:
        return None
    sent = shake.sent
    if sent.code == _TOO_BIG:
        return MessageTooBig(sent.reason or "a message over max_size")
    return picows.WSProtocolError(sent.code, sent.reason or "websocket protocol error")
