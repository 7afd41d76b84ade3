"""``asyncsports changes``: a mirror database's change feed as JSON Lines, from any process."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from asyncsports._signals import interrupts
from asyncsports._wire.defaults import CONNECT_TIMEOUT
from asyncsports.errors import SinkError

from .app import command
from .exits import INTERRUPTED, TERMINATED
from .logs import sync_logging
from .messages import fail, say
from .metrics import listen
from .options import ConnectTimeout, Globals, MetricsPort, db_location
from .running import run_async

if TYPE_CHECKING:
    from asyncsports.bus import Publisher
    from asyncsports.sync import Standby

__all__ = ["changes"]

EPILOG = (
    "Each line: seq, op (insert, update or delete), table, key, committed_at and the "
    "record as the service sent it (null for a row gone). With --consumer, the cursor "
    "NAME is kept in the database and moves past each change printed: a restarted "
    "follower resumes where it stopped (the same cursors as sync --changes). --follow "
    "on PostgreSQL is woken by each commit (LISTEN/NOTIFY); a SQLite file is looked at "
    "20 times a second. A database that holds records but never logged a change (a "
    "backfill's) has no feed: refused, exit 13; one a mirror has not committed to yet "
    "prints nothing (and says so on stderr), or with --follow waits for its first "
    "change. SIGTERM (and a first Ctrl-C) ends it after the changes "
    f"committed so far, exit 0 with --follow (Ctrl-C: {INTERRUPTED}; without --follow, "
    f"SIGTERM: {TERMINATED}). --to publishes the feed to a bus "
    "instead of printing it: redis://HOST:PORT/DB (a stream per table, "
    "PREFIX:TABLE, entry id SEQ-0; ?prefix=, ?maxlen= (0 to 2^63-1), and redis-py's "
    "?db=, ?socket_timeout=, ?socket_connect_timeout=, ?socket_keepalive=, "
    "?retry_on_timeout=, ?max_connections=, ?health_check_interval=, ?username=, "
    "?password=, ?client_name=, rediss:// also ?ssl_check_hostname=, ?ssl_cert_reqs=, "
    "?ssl_ca_certs=, ?ssl_certfile=, ?ssl_keyfile=) or nats://HOST:PORT (JetStream "
    "stream ASYNCSPORTS, created if missing, subjects PREFIX.SPORT.TABLE, Nats-Msg-Id "
    "ORIGIN:SEQ; ?prefix=, ?stream=, ?duplicate_window= (seconds, 0.1 to 86400)), "
    "each change once, in commit order, resuming where the bus says it stopped; or "
    "https://HOST/PATH (http:// to this machine only): each change POSTed as a Standard "
    "Webhooks request signed with the secret in $ASYNCSPORTS_WEBHOOK_SECRET (whsec_...), "
    "webhook-id ORIGIN:SEQ, at least once, in commit order, retried on 5xx, 408, 429 and "
    "timeouts, held on any other answer (exit 22), resuming from a cursor the database "
    "keeps for the endpoint; ?concurrency= (1 to 64: requests in flight, each table's in "
    "order), ?timeout= (seconds a request may take, 0.1 to 3600). An "
    "unknown option or a value out of range is a usage error before anything is "
    "reached; a second --to of the same stream stands by and takes over within 15 s "
    "of the first's end."
)


async def _mirrored(db: str, reach: float) -> tuple[str, bool]:
    """How messages name the database ``db``, and whether a mirror has kept anything in
    it yet (a change, a cursor, a mark); a SinkError for one whose feed
    is empty for good: records in it, but no mirror ever kept anything there (a
    backfill's database: every database holds the change log's table, so it is not
    missing, only empty), which a follower would wait on for ever."""
    from asyncsports.store import open_changes

    store = await open_changes(db, connect_timeout=reach)
    try:
        contents = await store.contents()
    finally:
        await store.close()
    if contents == "records":
        raise SinkError(
            f"{store.name} is not a mirror: it holds records but never logged a change "
            "(a backfill logs none), so its change feed is empty; asyncsports sync --db "
            f"{store.name} makes it a mirror, logging each change from then on"
        )
    return store.name, contents == "mirror"


async def _print(db: str, after: int, consumer: str | None, follow: bool, reach: float) -> None:
    import asyncio

    from asyncsports.sync import feed

    name, mirrored = await _mirrored(db, reach)
    if not mirrored and not follow:  # a mirror just started: nothing yet, and it is said
        say(f"asyncsports: no change committed to {name} yet")
        return
    stop = asyncio.Event()
    with interrupts.stopping(stop.set):
        async for change in feed(
            db, after, consumer=consumer, follow=follow, until=stop, connect_timeout=reach
        ):
            sys.stdout.write(change.as_json().decode() + "\n")
            sys.stdout.flush()


async def _publish(db: str, to: str, follow: bool, reach: float, port: int | None) -> None:
    from asyncsports.bus import Publisher
    from asyncsports.sync import Standby

    publisher = Publisher(db, to, connect_timeout=reach)
    await _mirrored(db, reach)
    # Publishers of one stream elect one through the database's lease; the others wait.
    standby = Standby(publisher, name=f"bus {publisher.target.shown}")
    runner = None
    if port is not None:
        from asyncsports.bus import serve_publisher_metrics

        runner = await listen(serve_publisher_metrics(publisher, port, standby=standby), port)
    try:
        with interrupts.stopping(standby.stop):
            await standby.run(once=not follow)
    finally:
        if runner is not None:
            await runner.cleanup()
    say(_published(publisher, standby))


def _published(publisher: "Publisher", standby: "Standby") -> str:
    """The closing line: what this run published, and where the bus's feed stands (or
    that it was never read: a bus never reached, a lease never held)."""
    shown = publisher.target.shown
    if not standby.takeovers:  # stopped while another process published the stream
        return f"asyncsports: nothing published to {shown}: this process stood by"
    if publisher.position is None:  # where the feed stands is the bus's first answer
        return f"asyncsports: nothing published: {shown} was never reached"
    return (
        f"asyncsports: {publisher.published} changes published to {shown} "
        f"({publisher.duplicates} already there); it holds the feed up to change "
        f"{publisher.position}"
    )


def _hidden(exc: BaseException, to: str) -> BaseException:
    """``exc`` and its causes without the secrets of the bus URL ``to`` (and the webhook
    secret), in place: a message may quote a piece of a URL that a reader split wrong (a
    password's "/" read as a path)."""
    import os

    from asyncsports._wire.secrets import Secrets, url_secrets
    from asyncsports._wire.webhooks import SECRET_ENV, secret_forms

    secrets = Secrets([*url_secrets(to), *secret_forms(os.environ.get(SECRET_ENV))])
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        secrets.scrub(error)
        error = error.__cause__ or error.__context__
    return exc


def _check(
    cfg: Globals, db: str, to: str | None, consumer: str | None, after: int, port: int | None
) -> None:
    """A usage error for a --to that is no bus, or options that do not go together; the
    error of a SQLite file that is not there."""
    from asyncsports._wire.bus import parse_target
    from asyncsports.store import is_postgres

    if to is not None:
        try:
            if parse_target(to).kind == "webhook":
                import os

                from asyncsports._wire.webhooks import SECRET_ENV, secret_key

                secret_key(os.environ.get(SECRET_ENV))  # its words never quote it
        except ValueError as exc:
            raise typer.BadParameter(str(_hidden(exc, to)), param_hint="'--to'") from None
        if consumer is not None or after:
            raise typer.BadParameter(
                "the bus (or, for an endpoint, its own cursor) says where the feed stands: "
                "--to takes no --consumer or --after",
                param_hint="'--to'",
            )
        sync_logging(cfg.verbose)
    elif port is not None:
        raise typer.BadParameter(
            "serves the publisher's metrics: give --to", param_hint="'--metrics-port'"
        )
    try:
        there = is_postgres(db) or Path(db).is_file()
    except OSError as exc:  # a name longer than the system takes, say
        fail(cfg, SinkError(f"cannot open {db}: {exc.strerror or exc}"))
    if not there:
        # Opening would make an empty database, and a follower would wait on it for ever.
        fail(cfg, SinkError(f"no mirror database at {db}: asyncsports sync --db makes one"))


@command(epilog=EPILOG, example="changes --db asyncsports-mirror.sqlite --follow")
def changes(
    db: Annotated[
        str,
        typer.Option(
            callback=db_location,
            metavar="FILE|URL",
            help="The mirror's SQLite file, or a postgresql://... URL.",
        ),
    ] = "asyncsports-mirror.sqlite",
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing changes as they are committed.")
    ] = False,
    consumer: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Start from NAME's cursor and move it on."),
    ] = None,
    after: Annotated[
        int,
        typer.Option(
            min=0,
            metavar="SEQ",
            show_default=False,
            help="Start after this seq (default: the --consumer's cursor, else the start).",
        ),
    ] = 0,
    to: Annotated[
        str | None,
        typer.Option(
            metavar="BUS_URL",
            help="Publish the feed to redis://..., nats://... or a webhook endpoint "
            "https://... instead of printing it (its options: below).",
        ),
    ] = None,
    metrics_port: MetricsPort = None,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Print a mirror database's change feed (asyncsports sync writes it) as JSON Lines,
    in commit order, without running a mirror: from this machine or any other; or
    publish it to a bus (--to)."""
    _check(cfg, db, to, consumer, after, metrics_port)

    async def main() -> None:
        if to is None:
            await _print(db, after, consumer, follow, connect_timeout)
            return
        try:
            await _publish(db, to, follow, connect_timeout, metrics_port)
        except Exception as exc:
            _hidden(exc, to)  # in place: the error as it was, less the bus URL's secrets
            raise

    run_async(cfg, main, until_stopped=follow)
