"""Database URLs: which engine a name means, and how to show one without its secrets.

Pure: no I/O.
"""

from __future__ import annotations

import re
import urllib.parse

from asyncsports._wire.secrets import hide_url, split_userinfo

__all__ = ["address", "is_postgres", "redact_url"]


def is_postgres(db: object) -> bool:
    """Whether ``db`` names a PostgreSQL database (a ``postgresql://`` URL)."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """``url`` without its password, in the address or the query (for messages, reports):
    the secrets policy's :func:`~asyncsports._wire.secrets.hide_url`."""
    return hide_url(url)


def address(url: str) -> str:
    """The ``host:port`` that a ``postgresql://`` URL names (port 5432 unless it says),
    for messages: never the user or the password."""
    # The userinfo ends at the last "@" (the secrets policy's rule): a password may hold "/".
    hosts = urllib.parse.urlsplit(split_userinfo(url)[0]).netloc or "localhost"
    if "," in hosts or re.search(r":\d+$", hosts):  # several hosts, or a port given
        return hosts
    return f"{hosts}:5432"
