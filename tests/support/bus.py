"""Reading back what a bus holds, as the guide's consumers do (tests of the publisher).

:func:`consume` reads every change published so far, as a consumer of the user's would:
Redis, a consumer group over every table's stream (``XREADGROUP``, each entry acked);
NATS, a durable pull consumer of the stream (each message acked). Each call of one
``group`` carries on where the last stopped, so calls across a test see every change
once between them, or twice if the bus holds it twice.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from asyncsports._wire.bus import parse_target
from asyncsports.store import MIRROR_COLUMNS, open_mirror

KINDS = ["redis", "nats", "webhook"]
"""Every kind of bus, the webhook endpoint too: for the tests of behaviour all share
(``@pytest.mark.parametrize("bus", KINDS, indirect=True)``)."""


@dataclass(frozen=True)
class Got:
    """One message as a consumer got it."""

    seq: int  # the change's, from its body
    table: str
    id: str  # Redis: the entry id; NATS: the Nats-Msg-Id
    where: str  # the stream (Redis: the table's; NATS: the one stream, in total order)
    body: dict[str, Any]
    subject: str = ""  # NATS: the message's subject
    raw: bytes = b""  # the body as it came


async def consume(url: str, group: str = "tests", *, idle: float = 0.3) -> list[Got]:
    """Every message the bus at ``url`` holds that ``group`` has not read, until none
    comes for ``idle`` seconds; acked, so the next call goes on after them. A webhook
    endpoint: what the receiver process (support/webhook_receiver.py) took, in the order
    it took it, as one stream (``where``: the endpoint)."""
    target = parse_target(url)
    if target.kind == "redis":
        return await _redis(url, target.prefix, group, idle)
    if target.kind == "webhook":
        return await _webhook(target.url, group, idle)
    return await _nats(url, target.stream, target.prefix, group, idle)


_READ: dict[tuple[str, str], int] = {}  # (a receiver's file, group) -> lines read


async def _webhook(url: str, group: str, idle: float) -> list[Got]:
    from support.servers import WEBHOOKS

    path = WEBHOOKS[url]
    got: list[Got] = []
    quiet = False
    while True:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        lines = text[: text.rfind("\n") + 1].splitlines()  # whole lines only
        start = _READ.get((str(path), group), 0)
        if len(lines) == start:
            if quiet:
                return got
            await asyncio.sleep(idle)  # none came for idle seconds: all there is
            quiet = True
            continue
        quiet = False
        _READ[str(path), group] = len(lines)
        for line in lines[start:]:
            taken = json.loads(line)
            body = json.loads(taken["body"])
            raw = taken["body"].encode()
            got.append(Got(body["seq"], body["table"], taken["id"], url, body, raw=raw))


async def _redis(url: str, prefix: str, group: str, idle: float) -> list[Got]:
    import redis.asyncio as aioredis
    from redis.exceptions import ResponseError

    client = aioredis.Redis.from_url(url.partition("?")[0])
    keys = [f"{prefix}:{t}" for t in MIRROR_COLUMNS]
    got: list[Got] = []
    try:
        for key in keys:
            try:
                await client.xgroup_create(key, group, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        while True:
            answer = await client.xreadgroup(
                group, "reader", dict.fromkeys(keys, ">"), count=5000, block=int(idle * 1000)
            )
            if not answer:
                return got
            for stream, entries in answer:
                ids = []
                for entry, fields in entries:
                    raw = fields[b"change"]
                    body = json.loads(raw)
                    got.append(
                        Got(
                            body["seq"],
                            body["table"],
                            entry.decode(),
                            stream.decode(),
                            body,
                            raw=raw,
                        )
                    )
                    ids.append(entry)
                await client.xack(stream, group, *ids)
    finally:
        await client.aclose()


async def _nats(url: str, stream: str, prefix: str, group: str, idle: float) -> list[Got]:
    import nats
    from nats.errors import TimeoutError as NatsTimeout

    nc = await nats.connect(url)
    got: list[Got] = []
    try:
        js = nc.jetstream()
        sub = await js.pull_subscribe(f"{prefix}.>", durable=group, stream=stream)
        while True:
            try:
                msgs = await sub.fetch(1000, timeout=idle)
            except (TimeoutError, NatsTimeout):
                return got
            for m in msgs:
                body = json.loads(m.data)
                got.append(
                    Got(
                        body["seq"],
                        body["table"],
                        (m.headers or {})["Nats-Msg-Id"],
                        stream,
                        body,
                        m.subject,
                        m.data,
                    )
                )
                await m.ack()
    finally:
        await nc.close()


async def seqs(db: str) -> list[int]:
    """Every change's seq in the mirror database ``db`` (either engine), in order."""
    store = await open_mirror(db)
    try:
        return [line.seq for line in await store.change_rows(0, 10**9)]
    finally:
        await store.close()


def once_in_order(got: list[Got], seqs: list[int]) -> None:
    """``got`` holds each of ``seqs`` exactly once, and each stream (subject) in seq order."""
    counted: dict[int, int] = {}
    for g in got:
        counted[g.seq] = counted.get(g.seq, 0) + 1
    doubled = sorted(s for s, n in counted.items() if n > 1)
    missing = sorted(set(seqs) - set(counted))
    extra = sorted(set(counted) - set(seqs))
    assert not doubled and not missing and not extra, (
        f"doubled {doubled[:10]} ({len(doubled)}), missing {missing[:10]} ({len(missing)}), "
        f"not in the database {extra[:10]}"
    )
    by_where: dict[str, list[int]] = {}
    for g in got:
        by_where.setdefault(g.where, []).append(g.seq)
    for where, order in by_where.items():
        assert order == sorted(order), f"{where} out of seq order"
