"""The HTTP core, private: everything between a resource method and the network.

- :mod:`.config`: a client's settings as one frozen, validated value;
- :mod:`.request`: requests as plain values (paths, query encoding, argument checks);
- :mod:`.retry`: the pure retry decision (:func:`~.retry.decide`) every loop asks;
- :mod:`.ratelimit` and :mod:`.sharedlimit`: the rate limit, in a process or shared;
- :mod:`.decoding`: where every DecodeError is built;
- :mod:`.session`: :class:`~.session.Session`, the one place that does network I/O, with
  :mod:`.bodies` (what a response's body is read as), :mod:`.clock` (the service's
  clock) and :mod:`.live` (the live feeds' websocket loop);
- :mod:`.transport`: the seam under the session (:class:`~.transport.Transport`) and
  aiohttp's transport, the default: the only module of the core that imports aiohttp.
"""
