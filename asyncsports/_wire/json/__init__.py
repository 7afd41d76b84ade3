"""Byte-level pieces of :mod:`asyncsports.jsonstream`: scanning, array framing, the envelope."""
