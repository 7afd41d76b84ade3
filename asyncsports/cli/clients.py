"""A client for the global options: the service they name, or the embedded emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from asyncsports import errors
from asyncsports._http.config import check_url

from .exits import ConfigError, OutputFileError
from .names import PATH_MAX, check_length
from .options import SETTINGS, Globals, query_params

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from asyncsports.auth import StreamingCredentials
    from asyncsports.client import Client
    from asyncsports.emulator import Emulator

__all__ = ["client_kwargs", "emulator_scale", "emulator_speed", "opened"]


def _address(option: str, value: str, *, websocket: bool = False) -> str:
    """``value``, checked by the client's own rule, ConfigError naming ``option``."""
    try:
        check_url(option, value, websocket=websocket)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return value


def _credentials(cfg: Globals) -> StreamingCredentials | None:
    from asyncsports.auth import StreamingCredentials

    if cfg.operator_id is None:
        if cfg.stream_secret or cfg.stream_auth:
            raise ConfigError("streaming credentials need --operator-id (ASYNCSPORTS_OPERATOR_ID)")
        return None
    if cfg.stream_secret is not None:
        if not cfg.stream_ip:
            raise ConfigError("--stream-secret needs --stream-ip, your IPv4 address")
        return StreamingCredentials.from_secret(cfg.operator_id, cfg.stream_secret, cfg.stream_ip)
    if cfg.stream_auth is not None and cfg.stream_timestamp is not None:
        return StreamingCredentials(cfg.operator_id, cfg.stream_auth, cfg.stream_timestamp)
    raise ConfigError(
        "--operator-id needs --stream-secret with --stream-ip, "
        "or --stream-auth with --stream-timestamp"
    )


SHARED = ("rate_limit_url", "rate_limit_key", "rate_limit_sharers")
"""The settings of a budget shared through Redis: given only with a --rate-limit."""


def _rate(cfg: Globals) -> dict[str, Any]:
    """``--rate-limit`` (0: no limit) and, with ``--rate-limit-url``, how it is shared."""
    rate = cfg.rate_limit or None
    if rate is None or not cfg.rate_limit_url:
        return {"rate_limit": rate}
    return {"rate_limit": rate, **{name: getattr(cfg, name) for name in SHARED}}


def client_kwargs(cfg: Globals, *, streaming: bool = False) -> dict[str, Any]:
    """The Client arguments the settings give, or ConfigError saying what is missing.

    Every setting the command line takes (:data:`~.options.SETTINGS`) by its own name,
    its addresses checked, and the streaming credentials its options make.
    """
    creds = _credentials(cfg)
    streaming_url = _address("--streaming-url", cfg.streaming_url) if cfg.streaming_url else None
    if streaming:
        if streaming_url is None:
            raise ConfigError(
                "no live stream address: pass --streaming-url URL "
                "(or set ASYNCSPORTS_STREAMING_URL), or use --emulator"
            )
        if creds is None:
            raise ConfigError(
                "no streaming credentials: pass --operator-id with --stream-secret and "
                "--stream-ip (or ASYNCSPORTS_OPERATOR_ID, ...), or use --emulator"
            )
    base_url = cfg.base_url or (streaming_url if streaming else None)
    if not base_url:
        raise ConfigError(
            "no service address: pass --base-url URL (or set ASYNCSPORTS_BASE_URL), "
            "or add --emulator to try the embedded emulator"
        )
    _address("--base-url", base_url)
    if not streaming and not cfg.token:
        raise ConfigError("no token: pass --token TOKEN or set ASYNCSPORTS_TOKEN")
    given = {name: getattr(cfg, name) for name in SETTINGS if name not in SHARED}
    return {
        **given,
        **_rate(cfg),
        "base_url": base_url,
        "streaming_url": streaming_url,
        "streaming_credentials": creds,
        "live_url": _address("--live-url", cfg.live_url, websocket=True) if cfg.live_url else None,
    }


SCALE_KEYS = ("competitions", "seasons", "teams", "fixtures_per_season", "actions_per_fixture")


def emulator_scale(text: str | None) -> dict[str, int]:
    """``--emulator-scale`` (``fixtures_per_season=4,teams=4``) as Emulator keywords."""
    values: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in SCALE_KEYS or not value.strip().isdigit():
            raise ConfigError(
                f"--emulator-scale: expected name=number,... with names from "
                f"{', '.join(SCALE_KEYS)}; got {item!r}"
            )
        values[name] = int(value)
    return values


def emulator_speed(cfg: Globals, follows: float | None) -> float:
    """The embedded emulator's clock speed for a command: ``--emulator-speed`` or the
    command's default ``follows`` where it follows, 0 (still) where it does not."""
    if follows is None:
        # The same command then shows the same data every time (backfill relies on it),
        # whatever a profile's ASYNCSPORTS_EMULATOR_SPEED says.
        return 0.0
    return cfg.emulator_speed if cfg.emulator_speed is not None else follows


def _check_record(path: str, overwrite: bool) -> None:
    """A wrong --record path is the user's, and so is an earlier recording there: said
    before anything is sent (the client's own rule, in the command's words)."""
    from asyncsports._http.transports.record import prepare_a_recording, refuse_a_recording

    check_length("'--record'", "a path", path, PATH_MAX)
    try:
        prepare_a_recording(path)  # never blocks: a FIFO is refused, not waited on
    except errors.RecordingWriteError as exc:
        why = exc.strerror or exc
        raise OutputFileError(f"--record: cannot write {path}: {why}") from None
    if not overwrite:
        try:
            refuse_a_recording(path)
        except FileExistsError:
            raise OutputFileError(
                f"--record: {path} holds a recording already; --record-overwrite replaces it"
            ) from None


@asynccontextmanager
async def opened(
    cfg: Globals, *, streaming: bool = False, follows: float | None = None, **options: Any
) -> AsyncIterator[tuple[Client, Emulator | None]]:
    """A client for the settings, and the embedded emulator it talks to with --emulator.

    ``streaming``: the command uses the events listing; ``follows``: it follows changes
    as they happen, so an embedded emulator's clock runs, at ``--emulator-speed`` or else
    this speed (None: it reads once, and the clock stands still); ``options``: more
    Client keywords.
    """
    from asyncsports.client import Client

    if cfg.query:
        options = {**options, "default_query": query_params(cfg.query)}
    if cfg.record:
        _check_record(cfg.record, cfg.record_overwrite)
        options = {**options, "record": cfg.record, "record_overwrite": cfg.record_overwrite}
    if cfg.emulator:
        from asyncsports.emulator import Emulator

        # The emulator serves its own addresses and credentials: of the settings, only
        # how fast to ask is the command line's.
        scale: dict[str, Any] = emulator_scale(cfg.emulator_scale)
        speed = emulator_speed(cfg, follows)
        emulator = Emulator(seed=cfg.seed, speed=speed, **scale)
        async with emulator, emulator.client(**_rate(cfg), **options) as client:
            yield client, emulator
        return
    async with Client(**client_kwargs(cfg, streaming=streaming), **options) as client:
        yield client, None
