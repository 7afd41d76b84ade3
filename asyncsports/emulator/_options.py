"""The standalone emulator's options, one table read by both of its command lines:
``asyncsports-emulator`` (argparse: it needs no cli extra) and ``asyncsports emulator``
(typer). It imports nothing heavy, so that ``asyncsports --help`` costs no emulator.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BAD_RECORDING",
    "DEFAULT_NOW",
    "DESCRIPTION",
    "DIALECTS",
    "EXIT_CODES",
    "FLAGS",
    "Flag",
    "moment",
]

DEFAULT_NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)
"""Where the clock starts and the data is centred unless ``now`` says."""

DIALECTS = ("emulator", "vendor", "golf")
"""How the live feeds speak besides packets: ``emulator`` (the default, its own shapes),
``vendor`` (the shapes of the vendor's pages for the soccer actions socket) and ``golf``
(the vendor's golf shapes, ``eventElementType`` messages). See docs/wire.md."""

BAD_RECORDING = 21
"""The exit code of a --replay file that cannot be served (malformed, cut short, over a
limit): the row of ``asyncsports``' exit codes (asyncsports.cli.exits.EXIT_CODES)."""

DESCRIPTION = (
    "Serve the sports data service, the snooker proxy and the live stream events listing "
    "from generated data (or a recording) until Ctrl-C, printing the addresses, token "
    "and credentials a caller needs."
)
EXIT_CODES = (
    "Exit codes: 0 stopped by SIGTERM, 1 a file that cannot be read, 2 usage (a port in "
    f"use, naming --port or --live-port), {BAD_RECORDING} a --replay file that is not a "
    "recording or is malformed, cut short or over a limit (one line: FILE:LINE: what), "
    "130 interrupted (Ctrl-C)."
)


def moment(text: str) -> dt.datetime:
    """An ISO 8601 time (``2026-06-01T12:00``), in UTC unless it names its zone."""
    value = dt.datetime.fromisoformat(text)
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


@dataclass(frozen=True, slots=True)
class Flag:
    """One option: its name, how its text is read (None: a switch, on when given), its
    default, its help (which says the default) and metavar."""

    name: str
    kind: Callable[[str], Any] | None
    default: Any
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        """Its keyword: ``live_port`` for ``--live-port``."""
        return self.name.removeprefix("--").replace("-", "_")


FLAGS = (
    Flag("--host", str, "127.0.0.1", "Address to bind (default 127.0.0.1).", "ADDRESS"),
    Flag("--port", int, 8080, "Port of the services (default 8080; 0 picks a free one).", "PORT"),
    Flag(
        "--live-port",
        int,
        None,
        "Port of the live feeds' websockets (default --port + 1; 0 with --port 0).",
        "PORT",
    ),
    Flag(
        "--live-heartbeat",
        float,
        20.0,
        "Seconds of silence before a live feed sends a heartbeat (default 20).",
        "SECONDS",
    ),
    Flag(
        "--live-dialect",
        str,
        "emulator",
        "How the live feeds speak besides packets: "
        "emulator (default), vendor or golf (the vendor's documented messages).",
        choices=DIALECTS,
    ),
    Flag("--seed", int, 0, "Data seed: the same seed, the same data (default 0).", "N"),
    Flag(
        "--now",
        moment,
        DEFAULT_NOW,
        f"Start time, ISO 8601, UTC unless it names its zone (default {DEFAULT_NOW.isoformat()}).",
        "TIME",
    ),
    Flag("--frozen", None, False, "Keep the clock still (as --speed 0)."),
    Flag("--speed", float, None, "Run the clock X times faster than real time (default 1).", "X"),
    Flag(
        "--token",
        str,
        "emulator-token",
        "Bearer token it accepts (default emulator-token).",
        "TOKEN",
    ),
    Flag("--fixtures-per-season", int, 24, "Fixtures in each season (default 24).", "N"),
    Flag(
        "--actions-per-fixture",
        int,
        120,
        "Actions in a fixture's whole timeline (default 120).",
        "N",
    ),
    Flag("--big-fixture-list", int, 0, "Add a basketball season of N fixtures.", "N"),
    Flag("--big-timeline", int, 0, "Add an american-football fixture of N actions.", "N"),
    Flag("--latency", float, 0.0, "Seconds added to each response (default 0).", "SECONDS"),
    Flag(
        "--rate-limit",
        int,
        None,
        "Requests a second it answers; beyond, 429 with Retry-After (default: no limit).",
        "N",
    ),
    Flag(
        "--replay",
        str,
        None,
        "Serve this recording (asyncsports --record FILE) instead "
        "of generated data; live feeds keep their recorded gaps, at --speed.",
        "FILE",
    ),
)
"""Every option, in the order --help lists them."""
