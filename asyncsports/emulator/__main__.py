"""``asyncsports-emulator`` / ``python -m asyncsports.emulator``: serve the emulator standalone.

Prints what a caller needs (addresses, token, Accept header, feed, streaming credentials
and curl examples) and serves until interrupted. The clock follows the wall clock from
the start time unless ``--frozen`` is given, so fixtures progress as they would.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from urllib.parse import urlencode

from asyncsports import _signals
from asyncsports._signals import interrupts
from asyncsports._wire.shown import printable
from asyncsports.emulator._emulator import Emulator, ListenError
from asyncsports.emulator._options import BAD_RECORDING, DESCRIPTION, EXIT_CODES, FLAGS
from asyncsports.errors import RecordingError

__all__ = [
    "BAD_RECORDING",
    "USAGE",
    "ListenError",
    "describe",
    "main",
    "option_of",
    "serve",
    "serving",
]

USAGE = 2
"""The exit code of a usage error (argparse's), a port in use among them."""


def option_of(exc: ListenError) -> str:
    """The option of the port ``exc`` could not listen on: ``--port``, ``--live-port``."""
    return next(flag.name for flag in FLAGS if flag.dest == exc.keyword)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="asyncsports-emulator", description=DESCRIPTION, epilog=EXIT_CODES
    )
    for flag in FLAGS:
        text = flag.help.replace("%", "%%")  # argparse formats help with %
        if flag.kind is None:
            p.add_argument(flag.name, action="store_true", help=text)
        else:
            p.add_argument(
                flag.name,
                type=flag.kind,
                default=flag.default,
                help=text,
                metavar=flag.metavar,
                choices=flag.choices or None,
            )
    return p


def describe(emu: Emulator) -> str:
    """What a caller needs to reach ``emu``, with curl examples."""
    accept = f"application/vnd.{emu.vendor}.dde.api+json;version=1"
    static = emu.static_streaming_credentials
    replay = emu.replay
    lines = [
        f"asyncsports emulator, replaying {replay.path}"
        if replay is not None
        else f"asyncsports emulator, seed {emu.seed}",
        f"  base URL        {emu.base_url}",
        f"  streaming URL   {emu.streaming_url}",
        f"  live URL        {emu.live_url}",
        f'  live auth       first message {{"authToken": "{emu.token}"}}',
        f"  token           {emu.token}",
        f"  Accept          {accept}",
        f"  snooker feed    {emu.snooker_feed}",
        f"  operator id     {emu.operator_id}",
        f"  stream secret   {emu.stream_secret}  (auth = hex HMAC-MD5(secret, 'secret:ip:ms'),"
        " valid 30 s)",
    ]
    if static is not None:
        lines.append(f"  static auth     auth={static.auth} timestamp={static.timestamp}")
    speed = emu.clock.speed
    clock = f"running x{speed:g}" if speed else "frozen"
    lines.append(f"  clock           {emu.clock.now().isoformat()} ({clock})")
    lines.append(f"  clock control   {emu.base_url}/_emulator/clock  (GET; POST now/advance/speed)")
    if emu.big_season_id:
        lines.append(f"  big season      {emu.big_season_id}")
    if emu.big_fixture_id:
        lines.append(f"  big fixture     {emu.big_fixture_id}")
    curl = f"curl -H 'Accept: {accept}' -H 'Authorization: Bearer {emu.token}'"
    lines += ["", "Try:"]
    if replay is not None:
        # A replay answers only what was recorded: the first requests answered 200.
        bases = {"data": emu.base_url, "streaming": emu.streaming_url}
        tries = [f"  {curl} '{bases[host]}{target}'" for host, target in replay.answered(3)]
        return "\n".join(lines + (tries or ["  (no request of the recording was answered 200)"]))
    lines += [
        f"  {curl} '{emu.base_url}/basketball/fixtures?paged=true&size=5'",
        f"  {curl} '{emu.base_url}/snooker/{emu.snooker_feed}/tournaments?seasonId=2025'",
    ]
    if static is not None:
        query = urlencode(static.params())
        lines.append(f"  curl '{emu.streaming_url}/api/v2/streaming/events?{query}'")
    return "\n".join(lines)


async def _serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    emu = Emulator(
        args.seed,
        now=args.now,
        token=args.token,
        host=args.host,
        port=args.port,
        live_port=args.live_port if args.live_port is not None else args.port and args.port + 1,
        live_heartbeat=args.live_heartbeat,
        live_dialect=args.live_dialect,
        fixtures_per_season=args.fixtures_per_season,
        actions_per_fixture=args.actions_per_fixture,
        big_fixture_list=args.big_fixture_list,
        big_timeline=args.big_timeline,
        latency=args.latency,
        rate_limit=args.rate_limit,
        speed=0.0 if args.frozen else args.speed if args.speed is not None else 1.0,
        replay=args.replay,
    )
    async with emu:
        print(describe(emu), flush=True)
        await stop.wait()


async def serving(
    args: argparse.Namespace, stop: asyncio.Event, prefix: str = "asyncsports-emulator:"
) -> int:
    """Serve with ``args``, one attribute per option of ``FLAGS``, until ``stop`` is set;
    the exit code, an error said on stderr after ``prefix`` (the command's name). A port
    it cannot listen on raises :class:`ListenError`: a usage error, which each command
    line says in its own way. Both run it under :func:`asyncsports._signals.run`."""
    try:
        await _serve(args, stop)
    except RecordingError as exc:  # file:line: what, and nothing served
        print(printable(f"{prefix} --replay: {exc}"), file=sys.stderr)
        return BAD_RECORDING
    except ListenError:
        raise
    except (OSError, ValueError) as exc:  # a file that is not a recording
        print(printable(f"{prefix} {exc}"), file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``asyncsports-emulator``: from its first step to the end of the
    process no signal raises (:func:`asyncsports._signals.own_process`, as the
    ``asyncsports`` command does), so a second Ctrl-C while it shuts down is no
    KeyboardInterrupt traceback and no death by SIGINT; the code stays 130."""
    _signals.own_process()
    return serve(_parser().parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted (SIGINT, SIGTERM) with ``args``, one attribute per option
    of ``FLAGS``; the exit code, by the rule of every ``asyncsports`` command
    (asyncsports._signals): 0 at SIGTERM, 130 at Ctrl-C."""

    async def until_a_signal() -> int:
        stop = asyncio.Event()
        with interrupts.stopping(stop.set):  # a signal stops serving
            return await serving(args, stop)

    try:
        code = _signals.run(
            until_a_signal, until_stopped=True, message="asyncsports-emulator: interrupted"
        )
    except asyncio.CancelledError:  # a signal before it served
        print("asyncsports-emulator: interrupted", file=sys.stderr)
        return interrupts.code or 0
    except ListenError as exc:  # as argparse says a usage error
        said = f"asyncsports-emulator: error: argument {option_of(exc)}: {exc.strerror}"
        print(printable(said), file=sys.stderr)
        return USAGE
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
