"""Deterministic randomness and identifiers.

Everything the emulator makes is a pure function of the seed and an entity's coordinates
(sport, competition, season, index...). Keys come from BLAKE2b over a text encoding of those
coordinates, never from ``hash()`` (salted per process) or the time, so that every machine
makes the same data. Hot paths (one call per fixture of a million-fixture list) use the
integer mixer :func:`mix64` instead of a fresh ``random.Random``.

Identifiers that the emulator must resolve again (competitions, seasons, stages, teams,
fixtures) carry their coordinates inside the UUID: a keyed 4-round Feistel permutation of a
60-bit payload, followed by a 62-bit tag that tells our ids from any other UUID. So a
fixture id is found without a table, however many fixtures there are.
"""

from __future__ import annotations

import enum
import hashlib
import random
from typing import NamedTuple

__all__ = ["Coord", "IdCodec", "Kind", "key", "mix64", "rng", "uuid_from"]

MASK64 = (1 << 64) - 1
_MASK30 = (1 << 30) - 1
_MASK60 = (1 << 60) - 1
_HEX = frozenset("0123456789abcdef")


def mix64(x: int) -> int:
    """The splitmix64 finaliser: a fast, well-spread 64-bit integer hash."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def key(*parts: object) -> int:
    """A stable 64-bit key for a tuple of ints and strings."""
    data = "\x1f".join(map(str, parts)).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def rng(*parts: object) -> random.Random:
    """A random generator seeded from :func:`key` of ``parts``."""
    return random.Random(key(*parts))


_GOLDEN = 0x9E3779B97F4A7C15


def _round(half: int, k: int) -> int:
    """The Feistel round function: a multiply-shift hash of 30 bits (one multiplication)."""
    return (((half ^ k) * _GOLDEN) & MASK64) >> 34


def _uuid_text(hi60: int, var2: int, lo60: int) -> str:
    a = f"{hi60:015x}"
    b = f"{lo60:015x}"
    return f"{a[:8]}-{a[8:12]}-4{a[12:]}-{'89ab'[var2]}{b[:3]}-{b[3:]}"


def uuid_from(k: int) -> str:
    """A random-looking version-4 UUID string made from a 64-bit key."""
    hi = mix64(k)
    lo = mix64(k ^ 0x6A09E667F3BCC908)
    return _uuid_text(hi >> 4, lo >> 62, lo & _MASK60)


class Kind(enum.IntEnum):
    """Entities whose ids can be resolved back to their coordinates."""

    COMPETITION = 1
    SEASON = 2
    STAGE = 3
    TEAM = 4
    FIXTURE = 5


class Coord(NamedTuple):
    """Where an entity lives: its kind, sport code, competition, season and index."""

    kind: Kind
    sport: int
    comp: int
    season: int
    number: int


class IdCodec:
    """Encodes coordinates into UUID strings and back, keyed by the seed."""

    LIMITS = (16, 16, 64, 256, 1 << 38)
    """Exclusive upper bounds of kind, sport, comp, season and index."""

    def __init__(self, seed: int) -> None:
        self._round_keys = tuple(key(seed, "feistel", r) for r in range(4))
        self._tag_key = key(seed, "tag")

    def encode(self, kind: Kind, sport: int, comp: int, season: int, index: int) -> str:
        """The UUID of the entity at these coordinates."""
        if not (0 <= sport < 16 and 0 <= comp < 64 and 0 <= season < 256 and 0 <= index < 1 << 38):
            raise ValueError(f"coordinates out of range: {(sport, comp, season, index)}")
        payload = (kind << 56) | (sport << 52) | (comp << 46) | (season << 38) | index
        # The four rounds unrolled: this runs once per fixture of a million-fixture list.
        k0, k1, k2, k3 = self._round_keys
        left, right = payload >> 30, payload & _MASK30
        left ^= (((right ^ k0) * _GOLDEN) & MASK64) >> 34
        right ^= (((left ^ k1) * _GOLDEN) & MASK64) >> 34
        left ^= (((right ^ k2) * _GOLDEN) & MASK64) >> 34
        right ^= (((left ^ k3) * _GOLDEN) & MASK64) >> 34
        cipher = (left << 30) | right
        tag = mix64(cipher ^ self._tag_key)
        return _uuid_text(cipher, tag >> 62, tag & _MASK60)

    def decode(self, text: str) -> Coord | None:
        """The coordinates of one of our ids, or None for any other text."""
        h = text.lower().replace("-", "")
        if len(text) != 36 or len(h) != 32 or not _HEX.issuperset(h) or h[12] != "4":
            return None
        cipher = int(h[:12] + h[13:16], 16)
        var = "89ab".find(h[16])
        tag = mix64(cipher ^ self._tag_key)
        if var != tag >> 62 or int(h[17:], 16) != tag & _MASK60:
            return None
        k0, k1, k2, k3 = self._round_keys
        left, right = cipher >> 30, cipher & _MASK30
        right ^= _round(left, k3)
        left ^= _round(right, k2)
        right ^= _round(left, k1)
        left ^= _round(right, k0)
        payload = (left << 30) | right
        try:
            kind = Kind(payload >> 56)
        except ValueError:
            return None
        return Coord(
            kind,
            (payload >> 52) & 0xF,
            (payload >> 46) & 0x3F,
            (payload >> 38) & 0xFF,
            payload & ((1 << 38) - 1),
        )
