"""Recordings, sans I/O: the JSON Lines events ``Client(record=...)`` writes and what
``Emulator(replay=...)`` makes of them.

A recording is one JSON object a line (gzip when the file name ends ``.gz``): a header
(``{"format": "asyncsports-recording", "version": 1, ...}``), then events in the order they
happened, each with ``e`` (its kind), ``id`` (its exchange or connection) and ``t`` (seconds
since the recording started):

- a request: ``get`` (``host``: data, streaming or live; ``path``; ``query``: pairs), then
  ``reply`` (``status``, ``headers``), ``body`` pieces (``text``, or ``b64`` for bytes that
  are not UTF-8) and ``end`` (``complete``: the body was read to its end); or ``failed``;
- a live connection: ``connect`` (as ``get``), then ``open``, ``refused`` (``status``) or
  ``failed``; ``sent`` (what the client sent), ``recv`` (each message) and ``closed``
  (``code``, ``by``: server, client or lost).

Secrets never reach a line: request headers are not recorded at all, and the secrets
policy (:mod:`asyncsports._wire.secrets`) hides the query's and a sent message's
credentials by name and every secret seen, in every form, in bodies, messages and headers.
The rules where the vendor is silent are in docs/wire.md, "Recordings".

- :mod:`.format`: the line format, shared by the writer and the reader;
- :mod:`.writing`: the writer's helpers (URLs, headers, a body's scrubbed pieces);
- :mod:`.reading`: the reader of an untrusted recording, with its bounds;
- :mod:`.feeds`: its live connections as feeds, each on one timeline.

What a replay sends for a request is the emulator's (:mod:`asyncsports.emulator._match`).
"""
