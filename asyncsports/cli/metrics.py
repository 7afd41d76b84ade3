"""``--metrics-port``: a command's metrics server, started and said where it listens."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

import typer

from .messages import say

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from aiohttp import web

__all__ = ["listen"]


async def listen(serving: Awaitable[web.AppRunner], port: int) -> web.AppRunner:
    """A metrics server started (``--metrics-port``), where it listens said on stderr; a
    port in use (or not ours to take) is a usage error (the user's to change)."""
    try:
        runner = await serving
    except OSError as exc:
        why = exc.strerror or exc
        raise typer.BadParameter(
            f"cannot listen on {port}: {why}", param_hint="'--metrics-port'"
        ) from None
    say(f"asyncsports: metrics on http://127.0.0.1:{runner.addresses[0][1]}/metrics")
    return runner
