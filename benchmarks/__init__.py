"""Benchmarks of asyncsports against the floor and its peers: ``python -m benchmarks``.

See benchmarks/README.md.
"""
