"""The benchmark cases: one module each, exporting one ``CASE``
(:class:`benchmarks.harness.registry.Case`), found by the harness by listing this package.

Modules whose name starts with ``_`` hold what several cases share. Within a case the
variants run interleaved, round after round, so that load on the machine falls on all of
them alike; every round's figures are kept (the rows take medians, and for a ratio the
median of the per-round ratios). Every variant runs once unmeasured first: that fills the
server's cache, opens connections and warms the decoders. The server's cache misses
during measured rounds are reported (they should be 0: a miss means the server rendered
a body while being measured against).
"""
