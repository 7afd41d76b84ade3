"""Streamed decode of a large action timeline vs whole-body decode.

Builds a JSON array of action-like records (api-spec 2.3: nested objects, UUIDs,
datetimes, optional metadata; about 75 MB by default), then times, best of several runs:

- whole: ``msgspec.json.Decoder(list[Action]).decode(body)``
- streamed: ``asyncsports.jsonstream.decode_array`` over the body cut into 64 KiB and
  256 KiB chunks, every batch kept (as the whole-body decode keeps its list)
- streamed, batches dropped: the same, as a constant-memory consumer would run it
- framer alone: ``ArrayFramer.feed``, whose runs carry an untyped syntax check

and prints each as a ratio to the whole-body time, with the cyclic GC on and off. Run: ``python benchmarks/jsonstream_bench.py``
(``--records N``, ``--repeat N``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

import msgspec

from asyncsports.jsonstream import ArrayFramer, decode_array


class Ref(msgspec.Struct, gc=False):
    id: uuid.UUID
    name: str


class Period(msgspec.Struct, gc=False, rename="camel"):
    id: int
    type: str
    label: str
    start: dt.datetime
    end: dt.datetime | None
    away_team_score: int
    home_team_score: int
    away_team_period_score: int
    home_team_period_score: int


class Summary(msgspec.Struct, gc=False, rename="camel"):
    is_tied: bool
    away_team_score: int
    home_team_score: int
    current_period: int
    current_status: str
    current_clock_time: str
    periods: list[Period]


class FixtureAction(msgspec.Struct, gc=False, rename="camel"):
    action_id: uuid.UUID
    fixture_id: uuid.UUID
    fixture_seq_num: int
    timeline_sequence: float
    fixture_action_type: str
    fixture_action_type_id: int
    period: int
    clock_time: str
    timestamp: dt.datetime
    send_type: str
    send_type_id: int
    team: Ref | None = None
    player: Ref | None = None
    metadata: dict[str, Any] | None = None


class Action(msgspec.Struct, gc=False, rename="camel"):
    version: int
    finished: bool
    fixture_action: FixtureAction
    fixture_summary: Summary


_TYPES = [
    (1, "Match Conditions"),
    (2, "Team Colours"),
    (3, "Lineups"),
    (6, "Start Period"),
    (8, "Start Clock"),
    (19, "Device Location"),
    (233, "3PT Shot"),
]


def _periods(t0: dt.datetime, period: int) -> list[dict[str, Any]]:
    """The periods so far, the current one without an end."""
    return [
        {
            "id": p,
            "type": "Regular",
            "label": f"Q{p}",
            "start": (t0 + dt.timedelta(minutes=15 * p)).isoformat(),
            "end": None if p == period else (t0 + dt.timedelta(minutes=15 * p + 14)).isoformat(),
            "awayTeamScore": 3 * p,
            "homeTeamScore": 7 * p,
            "awayTeamPeriodScore": 3,
            "homeTeamPeriodScore": 7,
        }
        for p in range(1, period + 1)
    ]


def _metadata(
    r: random.Random, type_id: int, team: str, lineup: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The metadata of an action of type ``type_id`` (None for most types)."""
    if type_id == 233:
        return {
            "courtPosition": {
                "x": round(r.random() * 94, 3),
                "y": round(r.random() * 50, 3),
                "zone": "Left Wing",
            }
        }
    elif type_id == 2:
        return {"awayTeamColour": "255, 0, 0", "homeTeamColour": "0, 0, 255"}
    elif type_id == 19:
        return {"latitude": 29.951065, "longitude": -90.081142}
    elif type_id == 1:
        return {
            "pitchConditions": {"quality": 1, "surface": 2},
            "weatherConditions": {"rain": 0, "wind": 3, "temperature": 21},
        }
    elif type_id == 3:
        return {
            "teamId": team,
            "startingLineup": lineup[:11],
            "substitutes": lineup[11:16],
        }
    return None


def build(records: int, seed: int = 7) -> bytes:
    """A body of ``records`` action records, wire-shaped (camelCase, ISO datetimes)."""
    r = random.Random(seed)

    def uid() -> str:
        return str(uuid.UUID(int=r.getrandbits(128)))

    fixture = uid()
    teams = [{"id": uid(), "name": n} for n in ("Kansas City Chiefs", "San Francisco 49ers")]
    players = [{"id": uid(), "name": f"Player {i} O'Neil"} for i in range(46)]
    lineup = [
        {
            "id": p["id"],
            "fullName": p["name"],
            "lastName": "O'Neil",
            "firstName": None,
            "shirtNumber": f"_{i}" if i % 9 == 0 else str(i),
        }
        for i, p in enumerate(players)
    ]
    t0 = dt.datetime(2024, 2, 11, 23, 30)
    out = []
    for i in range(records):
        period = min(4, 1 + i * 4 // records)
        periods = _periods(t0, period)
        type_id, type_name = _TYPES[6] if r.random() < 0.6 else r.choice(_TYPES)
        meta = _metadata(r, type_id, teams[i % 2]["id"], lineup)
        stamp = dt.datetime(2024, 2, 11, 23, 30, tzinfo=dt.UTC) + dt.timedelta(seconds=i * 3.217)
        action: dict[str, Any] = {
            "actionId": uid(),
            "fixtureId": fixture,
            "fixtureSeqNum": i,
            "timelineSequence": i + 0.25,
            "fixtureActionType": type_name,
            "fixtureActionTypeId": type_id,
            "period": period,
            "clockTime": f"{r.randrange(15):02d}:{r.randrange(60):02d}",
            "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "sendType": "Confirmed",
            "sendTypeId": 5,
            "team": teams[i % 2],
            "player": players[i % 46],
        }
        if meta is not None:
            action["metadata"] = meta
        out.append(
            {
                "version": 2,
                "finished": i == records - 1,
                "fixtureAction": action,
                "fixtureSummary": {
                    "isTied": False,
                    "awayTeamScore": 3 * period,
                    "homeTeamScore": 7 * period,
                    "currentPeriod": period,
                    "currentStatus": "Live",
                    "currentClockTime": "12:34",
                    "periods": periods,
                },
            }
        )
    return msgspec.json.encode(out)


def timed(fn: Callable[[], Any], gc_on: bool) -> float:
    gc.collect()
    if not gc_on:
        gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    del result
    return elapsed


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def _streamed(
    parts: list[bytes], decoder: msgspec.json.Decoder[list[Action]], keep: bool = True
) -> list[Action]:
    out: list[Action] = []
    async for batch in decode_array(_chunks(parts), decoder):
        if keep:
            out.extend(batch)
    return out


def _run(parts: list[bytes], decoder: msgspec.json.Decoder[list[Action]], keep: bool) -> Any:
    return asyncio.run(_streamed(parts, decoder, keep))


def _framed(parts: list[bytes]) -> int:
    framer = ArrayFramer()
    for part in parts:
        framer.feed(part)
    framer.close()
    return framer.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    body = build(args.records)
    decoder = msgspec.json.Decoder(list[Action])
    expected = decoder.decode(body)
    print(f"body: {len(body) / 1e6:.1f} MB, {len(expected)} records, best of {args.repeat}")

    cases: dict[str, Callable[[], Any]] = {"whole": lambda: decoder.decode(body)}
    for size in (64 * 1024, 256 * 1024):
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        assert asyncio.run(_streamed(parts, decoder)) == expected
        assert _framed(parts) == len(expected)
        kib = size // 1024
        cases[f"{kib} KiB streamed"] = partial(_run, parts, decoder, True)
        cases[f"{kib} KiB streamed, batches dropped"] = partial(_run, parts, decoder, False)
        cases[f"{kib} KiB ArrayFramer alone"] = partial(_framed, parts)

    # The cyclic GC is most of a whole-body decode here (the Structs are gc=False, but their
    # list and dict fields are tracked), so time with it on (as in use) and off (what the
    # framing itself costs). Rounds interleave the cases, so that load on the machine
    # falls on all of them alike.
    for gc_on in (True, False):
        best = dict.fromkeys(cases, float("inf"))
        for _ in range(args.repeat):
            for name, fn in cases.items():
                best[name] = min(best[name], timed(fn, gc_on))
        whole = best["whole"]
        print(f"\ngc {'on' if gc_on else 'off'}: whole-body decode {whole * 1e3:.1f} ms")
        for name, t in best.items():
            if name != "whole":
                print(f"  {name:36s} {t * 1e3:8.1f} ms  {t / whole:6.3f}x whole-body")


if __name__ == "__main__":
    main()
