"""The HTTP layer, private: network I/O, on the pure core of :mod:`asyncsports._wire`.

- :mod:`.config`: a client's settings as one frozen, validated value;
- :mod:`.request`: requests as plain values (paths, query encoding, argument checks);
- :mod:`.ratelimit` and :mod:`.sharedlimit`: the rate limit, in a process or shared;
- :mod:`.session`: :class:`~.session.Session`, the one place that does network I/O, with
  :mod:`.bodies` (what a response's body is read as) and :mod:`.live` (the live feeds'
  websocket loop);
- :mod:`.transports`: the seam under the session (:mod:`.transports.base`, the
  protocols only) and the transports: aiohttp's, the default (with picows' websockets),
  pyreqwest's and the recording one that wraps another;
- :mod:`.serve`: the server side, one only: a long-running job's ``/metrics`` and
  ``/healthz`` (the mirror's, the bus publisher's).
"""
