"""The HTTP core, private: everything between a resource method and the network.

- :mod:`.config`: the client's settings (timeouts, limits, hooks), frozen;
- :mod:`.request`: a request as data (path, query, headers) and the sport's prefixes;
- :mod:`.retry`: the pure retry decision (:func:`~.retry.decide`) every loop asks;
- :mod:`.ratelimit` and :mod:`.sharedlimit`: the rate limit, in a process or shared;
- :mod:`.decoding`: bodies to records, and every DecodeError;
- :mod:`.session`: :class:`~.session.Session`, the one place that does network I/O, with
  :mod:`.bodies` (responses and their bodies), :mod:`.clock` (the server's clock) and
  :mod:`.live` (the websocket loop of the live feeds).
"""
