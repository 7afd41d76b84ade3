"""The change feed on NATS JetStream under a hostile world (issue 41), against a real
``nats-server``: two databases racing onto one stream never interleave; a stream holding
a message that this database did not publish is refused naming it; each refusal of the
server (a full stream, a message over a limit, a stream that cannot be made, bad
credentials) is a :class:`~asyncsports.errors.BusError` naming the change and the limit,
never an outage waited for; JetStream away (no responders) is one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ainvoke, until
from support.bus import consume, once_in_order, seqs
from support.servers import NatsBus, bus_server
from support.sqlite import sqlite

from asyncsports import RetryPolicy
from asyncsports._wire.bus import message, origin
from asyncsports.emulator import Emulator
from asyncsports.errors import BusError
from asyncsports.store import open_mirror
from asyncsports.sync import Mirror, Publisher

nats = pytest.importorskip("nats")
api = pytest.importorskip("nats.js.api")

pytestmark = pytest.mark.slow  # a nats-server each

FAST = RetryPolicy(max_retries=2**31, base=0.05, cap=0.5)
WITHIN = 30  # seconds any one condition may take on a loaded machine


@pytest.fixture
def server() -> Iterator[NatsBus]:
    got = bus_server("nats")
    assert isinstance(got, NatsBus)
    try:
        yield got
    finally:
        got.close()


@pytest.fixture
async def two(tmp_path: Path, sports_emulator: Emulator) -> list[str]:
    """Two mirror databases (two origins) after a pass over basketball each."""
    dbs = [str(tmp_path / f"{n}.sqlite") for n in "ab"]
    async with sports_emulator.client() as client:
        for db in dbs:
            await Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time).once()
    return dbs


async def jetstream(url: str) -> AsyncIterator[Any]:
    nc = await nats.connect(url)
    try:
        yield nc
    finally:
        await nc.close()


async def stored(url: str, stream: str) -> list[tuple[str, str, bytes]]:
    """Every message of ``stream``, in stream order: (its id, subject, body)."""
    got = []
    async for nc in jetstream(url):
        js = nc.jetstream()
        info = await js.stream_info(stream)
        if not info.state.messages:
            return []
        # One ordered consumer over the stream, not a request per message: a round of the
        # racing test read thousands, and that was most of this module's CPU time.
        (subjects,) = info.config.subjects or [">"]
        sub = await js.subscribe(subjects, stream=stream, ordered_consumer=True)
        try:
            for _ in range(info.state.messages):
                msg = await sub.next_msg(timeout=WITHIN)
                got.append(((msg.headers or {}).get("Nats-Msg-Id", ""), msg.subject, msg.data))
        finally:
            await sub.unsubscribe()
    return got


def one_origin_in_order(held: list[tuple[str, str, bytes]], want: dict[str, list[int]]) -> str:
    """Every message of ``held`` is of one database (of ``want``: origin -> its seqs), each
    of its changes once, in seq order; that origin."""
    origins = {i.rpartition(":")[0] for i, _, _ in held}
    assert len(origins) == 1, f"{len(held)} messages of {len(origins)} origins: {origins}"
    (origin,) = origins
    order = [int(i.rpartition(":")[2]) for i, _, _ in held]
    assert order == [json.loads(body)["seq"] for _, _, body in held]
    assert order == want[origin], "not each change once, in order"
    return origin


async def origin_of(db: str) -> str:
    store = await open_mirror(db)
    try:
        return origin((await store.change_rows(0, 1))[0].committed_at)
    finally:
        await store.close()


# ------------------------------------------------------------ 1. one database a stream


async def test_two_databases_racing_onto_one_stream_never_interleave(
    two: list[str], server: NatsBus
) -> None:
    """Started together, again and again: one publishes all its changes, the other is
    refused naming the stream, whatever the timing (each round a fresh stream)."""
    want = {await origin_of(db): await seqs(db) for db in two}
    refused = 0
    for n in range(12):
        url = f"{server.url}?stream=R{n}&prefix=r{n}"
        a, b = (Publisher(db, url, batch=40 + 7 * n) for db in two)
        got = await asyncio.gather(a.once(), b.once(), return_exceptions=True)
        errors = [g for g in got if isinstance(g, BaseException)]
        assert len(errors) == 1 and isinstance(errors[0], BusError), got
        assert f"stream R{n}" in str(errors[0]), errors[0]
        refused += 1
        winner = one_origin_in_order(await stored(server.url, f"R{n}"), want)
        # The loser, started again, is refused before it writes anything.
        loser = two[1] if await origin_of(two[0]) == winner else two[0]
        with pytest.raises(BusError, match="another database"):
            await Publisher(loser, url).once()
        one_origin_in_order(await stored(server.url, f"R{n}"), want)
    assert refused == 12


async def test_a_second_database_following_onto_a_claimed_stream_is_refused(
    two: list[str], server: NatsBus
) -> None:
    """The second starts while the first is publishing (after its first batch): it
    reads a stream holding another origin and is refused; the first goes on alone."""
    want = {await origin_of(db): await seqs(db) for db in two}
    url = f"{server.url}?stream=F&prefix=f"
    first = Publisher(two[0], url, batch=20)
    task = asyncio.create_task(first.run())
    try:
        await until(lambda: (first.position or 0) > 0, within=WITHIN)
        with pytest.raises(BusError, match="another database"):
            await Publisher(two[1], url, batch=20).once()
        await until(lambda: first.position == want[next(iter(want))][-1], within=WITHIN)
    finally:
        first.stop()
        await asyncio.wait_for(task, WITHIN)
    one_origin_in_order(await stored(server.url, "F"), want)


async def test_racing_publishers_of_one_database_publish_each_change_once(
    two: list[str], server: NatsBus
) -> None:
    """Copies of one database (a standby's race): duplicates or a harmless refusal,
    never a change twice, never an error."""
    for n in range(6):
        url = f"{server.url}?stream=D{n}&prefix=d{n}"
        racers = [Publisher(two[0], url, batch=b) for b in (30, 45, 70)]
        await asyncio.gather(*(r.once() for r in racers))
        assert sum(r.published for r in racers) == len(await seqs(two[0]))
        once_in_order(await consume(url), await seqs(two[0]))


# ------------------------------------------------- 2. where the feed stands: foreign ids


async def put(url: str, subject: str, headers: dict[str, str] | None) -> int:
    async for nc in jetstream(url):
        ack = await nc.jetstream().publish(subject, b"{}", headers=headers)
        return int(ack.seq)
    raise AssertionError


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        (None, "no Nats-Msg-Id"),
        ({"Nats-Msg-Id": "hello"}, "'hello'"),
        ({"Nats-Msg-Id": "0123456789abcdef:100"}, "another database"),
    ],
    ids=["no-id", "foreign-id", "other-origin"],
)
async def test_a_message_this_database_did_not_publish_is_refused_naming_it(
    two: list[str], server: NatsBus, headers: dict[str, str] | None, named: str
) -> None:
    url = f"{server.url}?stream=X&prefix=x"
    await Publisher(two[0], url, batch=100).once()
    seq = await put(server.url, "x.basketball.actions", headers)
    for publisher in (Publisher(two[0], url), Publisher(two[1], url)):
        with pytest.raises(BusError) as got:
            await publisher.once()
        text = str(got.value)
        assert named in text and "stream X" in text, text
        assert "x.basketball.actions" in text and f"stream seq {seq}" in text, text
    held = await stored(server.url, "X")
    assert len(held) == len(await seqs(two[0])) + 1  # nothing written after it


async def test_a_database_without_changes_is_refused_by_a_stream_with_any(
    two: list[str], server: NatsBus, tmp_path: Path
) -> None:
    url = f"{server.url}?stream=E&prefix=e"
    await Publisher(two[0], url, batch=500).once()
    empty = str(tmp_path / "empty.sqlite")
    shutil.copy(two[0], empty)
    with sqlite(empty) as conn:
        conn.execute("DELETE FROM changes")
    with pytest.raises(BusError, match="another database") as got:
        await Publisher(empty, url).once()
    assert "stream E" in str(got.value) and "e.basketball." in str(got.value)


# ------------------------------------------------------------- 3. refusals, not outages


async def make_stream(url: str, **limits: Any) -> None:
    async for nc in jetstream(url):
        await nc.jetstream().add_stream(
            api.StreamConfig(name="L", subjects=["l.>"], storage=api.StorageType.FILE, **limits)
        )


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        ({"max_msgs": 10, "discard": api.DiscardPolicy.NEW}, "max_msgs 10"),
        ({"max_bytes": 6000, "discard": api.DiscardPolicy.NEW}, "max_bytes 6000"),
        (
            {
                "max_msgs_per_subject": 3,
                "discard": api.DiscardPolicy.NEW,
                "discard_new_per_subject": True,
            },
            "max_msgs_per_subject 3",
        ),
        ({"max_msg_size": 300}, "max_msg_size 300"),
    ],
    ids=["max_msgs", "max_bytes", "per-subject", "max_msg_size"],
)
async def test_a_stream_refusing_a_change_is_a_bus_error_naming_it_and_the_limit(
    two: list[str], server: NatsBus, limits: dict[str, Any], named: str
) -> None:
    """Followed, not once: a refusal ends :meth:`run` at once, it is no outage (it
    looped, cannot reach / is back, 5 times a second)."""
    await make_stream(server.url, **limits)
    publisher = Publisher(two[0], f"{server.url}?stream=L&prefix=l", batch=7, backoff=FAST)
    with pytest.raises(BusError) as got:
        await asyncio.wait_for(publisher.run(), WITHIN)
    text = str(got.value)
    assert "stream L" in text and named in text, text
    assert publisher.outages == 0
    # A prefix of the feed is there, each once in order; the change after it is named.
    held = [int(i.rpartition(":")[2]) for i, _, _ in await stored(server.url, "L")]
    assert held == (await seqs(two[0]))[: len(held)]
    assert f"change {held[-1] + 1 if held else 1} " in text, text


class SmallPayload(NatsBus):
    """A nats-server whose max_payload is 2 KB."""

    def argv(self) -> list[str]:
        conf = self.dir / "small.conf"
        conf.write_text(f"max_payload: 2048\nlisten: 127.0.0.1:{self.port}\n")
        return [self.binary, "-js", "-c", str(conf), "-sd", str(self.dir / "js")]


async def test_a_change_over_the_servers_max_payload_is_refused_before_it_is_sent(
    two: list[str],
) -> None:
    binary = shutil.which("nats-server")
    assert binary is not None
    server = SmallPayload(binary)
    try:
        body = dict(await bodies(two[0]))
        publisher = Publisher(two[0], server.url, batch=1000)
        with pytest.raises(BusError) as got:
            await asyncio.wait_for(publisher.run(), WITHIN)
        text = str(got.value)
        assert "max_payload 2048" in text, text
        named = int(text.split(" change ", 1)[1].split()[0])
        # The first change too big with its headers (about 100 bytes), and every one
        # before it on the stream, once, in order: not the rest of its batch.
        assert len(body[named]) > 2048 - 150 and all(
            len(b) <= 2048 for s, b in body.items() if s < named
        )
        held = [int(i.rpartition(":")[2]) for i, _, _ in await stored(server.url, "ASYNCSPORTS")]
        assert held == [s for s in body if s < named]
        assert publisher.outages == 0
    finally:
        server.close()


async def bodies(db: str) -> list[tuple[int, bytes]]:
    store = await open_mirror(db)
    try:
        return [(line.seq, message(*line).body) for line in await store.change_rows(0, 10**9)]
    finally:
        await store.close()


async def test_a_stream_that_cannot_be_made_is_refused_naming_it(
    two: list[str], server: NatsBus
) -> None:
    async for nc in jetstream(server.url):
        await nc.jetstream().add_stream(api.StreamConfig(name="OTHER", subjects=["o.basketball.>"]))
    publisher = Publisher(two[0], f"{server.url}?stream=MINE&prefix=o", backoff=FAST)
    with pytest.raises(BusError) as got:
        await asyncio.wait_for(publisher.run(), WITHIN)
    text = str(got.value)
    assert "stream MINE" in text and "o.>" in text and "overlap" in text, text


class Meddler:
    """A loopback TCP proxy to ``port`` that, the first time a client sends ``trigger``,
    awaits ``hook()`` before passing those bytes on: something done to the server right
    between two requests of the client's."""

    def __init__(self, port: int, trigger: bytes, hook: Callable[[], Awaitable[None]]) -> None:
        self.port, self.trigger, self.hook = port, trigger, hook
        self.hooked = False
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Meddler:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    @property
    def listen(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, down_r: asyncio.StreamReader, down_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, up: bool) -> None:
            while data := await src.read(65536):
                if up and not self.hooked and self.trigger in data:
                    self.hooked = True
                    await self.hook()
                dst.write(data)
                await dst.drain()

        pipes = [
            asyncio.ensure_future(pipe(down_r, up_w, True)),
            asyncio.ensure_future(pipe(up_r, down_w, False)),
        ]
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in pipes:
                t.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            down_w.transport.abort()
            up_w.transport.abort()
            self.tasks.discard(task)


async def test_a_stream_made_by_another_right_before_ours_is_used(
    two: list[str], server: NatsBus
) -> None:
    """The stream missing when the publisher looked, and made by someone else (an operator
    with settings of their own; another publisher, whose create nats-server 2.9 may answer
    "subjects overlap" to a second one racing it) before the publisher's own create: it is
    used, as one found there is, where its create's refusal used to be a BusError."""

    async def made() -> None:
        async for nc in jetstream(server.url):
            config = api.StreamConfig(name="MADE", subjects=["m.>"], max_age=3600)
            await nc.jetstream().add_stream(config)

    async with Meddler(server.port, b"$JS.API.STREAM.CREATE.MADE", made) as proxy:
        url = f"nats://127.0.0.1:{proxy.listen}?stream=MADE&prefix=m"
        await Publisher(two[0], url).once()
        assert proxy.hooked
    want = {await origin_of(two[0]): await seqs(two[0])}
    one_origin_in_order(await stored(server.url, "MADE"), want)
    async for nc in jetstream(server.url):
        info = await nc.jetstream().stream_info("MADE")
        assert info.config.max_age == 3600  # theirs, as it was made


class Token(NatsBus):
    """A nats-server asking for a token."""

    def argv(self) -> list[str]:
        return [*super().argv(), "--auth", "s3cret"]


async def test_bad_credentials_are_a_refusal_not_an_outage(two: list[str]) -> None:
    binary = shutil.which("nats-server")
    assert binary is not None
    server = Token(binary)
    try:
        url = f"nats://wrong@127.0.0.1:{server.port}"
        publisher = Publisher(two[0], url, backoff=FAST)
        with pytest.raises(BusError, match="refuses") as got:
            await asyncio.wait_for(publisher.run(), WITHIN)
        assert "wrong" not in str(got.value) and publisher.outages == 0
        good = Publisher(two[0], f"nats://s3cret@127.0.0.1:{server.port}")
        await good.once()
        assert good.published == len(await seqs(two[0]))
    finally:
        server.close()


class Switch(NatsBus):
    """A nats-server with JetStream on or off (``js``), on one port."""

    js = False

    def argv(self) -> list[str]:
        plain = [self.binary, "-a", "127.0.0.1", "-p", str(self.port)]
        return [*plain, "-js", "-sd", str(self.dir / "js")] if self.js else plain


async def test_jetstream_not_there_is_an_outage_waited_for(two: list[str]) -> None:
    """No responders (a server up before its JetStream): waited for, then caught up."""
    binary = shutil.which("nats-server")
    assert binary is not None
    server = Switch(binary)
    try:
        publisher = Publisher(two[0], server.url, backoff=FAST)
        task = asyncio.create_task(publisher.run())
        try:
            await until(lambda: publisher.outages == 1 or task.done(), within=WITHIN)
            assert not task.done(), task
            server.stop()
            server.js = True
            server.start()
            want = await seqs(two[0])
            await until(lambda: publisher.position == want[-1] or task.done(), within=WITHIN)
            assert publisher.position == want[-1], task
        finally:
            publisher.stop()
            await asyncio.wait_for(task, WITHIN)
        once_in_order(await consume(server.url), want)
    finally:
        server.close()


async def test_a_restart_past_the_duplicate_window_keeps_the_chain(
    tmp_path: Path, sports_emulator: Emulator, server: NatsBus
) -> None:
    """nats-server forgets the last message id at a restart once that message is older
    than the duplicate window (and at a purge); the stream's last sequence, which a
    batch's first message expects, it keeps: publishing goes on after it."""
    db = str(tmp_path / "m.sqlite")
    url = f"{server.url}?duplicate_window=1"
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        await Publisher(db, url).once()
        server.stop()
        since = asyncio.get_running_loop().time()
        # The window is the server's clock's: wait it out (1 s and a margin).
        await until(lambda: asyncio.get_running_loop().time() > since + 1.5, within=WITHIN)
        server.start()
        sports_emulator.clock.advance(3600)  # live fixtures move on: more actions
        await mirror.once()
        later = Publisher(db, url, batch=50)
        await later.once()
    want = await seqs(db)
    assert later.position == want[-1] and later.published > 0
    one_origin_in_order(await stored(server.url, "ASYNCSPORTS"), {await origin_of(db): want})


async def test_changes_to_a_full_stream_exits_22_naming_the_change_and_the_limit(
    two: list[str], server: NatsBus
) -> None:
    """``changes --to ... --follow`` onto a stream at its max_msgs (discard new): one
    error line, exit 22, not an outage said and waited for without end."""
    await make_stream(server.url, max_msgs=10, discard=api.DiscardPolicy.NEW)
    url = f"{server.url}?stream=L&prefix=l"
    result = await asyncio.wait_for(
        ainvoke("changes", "--db", two[0], "--to", url, "--follow"), WITHIN
    )
    assert result.exit_code == 22, result.output
    errors = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    assert len(errors) == 1, result.stderr
    assert "change 11 " in errors[0] and "max_msgs 10" in errors[0], errors[0]
    assert "cannot reach" not in result.stderr and "Traceback" not in result.stderr


class Acl(NatsBus):
    """A nats-server whose one user (``pub:pw``) may not publish to ``deny``."""

    deny = ""

    def argv(self) -> list[str]:
        conf = self.dir / "acl.conf"
        user = f'{{user: pub, password: pw, permissions: {{publish: {{deny: ["{self.deny}"]}}}}}}'
        conf.write_text(
            f"listen: 127.0.0.1:{self.port}\njetstream {{ store_dir: {self.dir / 'js'} }}\n"
            f"authorization {{ users = [ {user} ] }}\n"
        )
        return [self.binary, "-c", str(conf)]


@pytest.mark.parametrize(
    "deny", ["asyncsports.basketball.>", "$JS.API.STREAM.INFO.>"], ids=["subjects", "api"]
)
async def test_a_publish_the_user_may_not_make_is_a_refusal_not_an_outage(
    two: list[str], deny: str
) -> None:
    """A permissions violation (the server says it and keeps the connection): a
    BusError naming what it refused, not acks waited for and an outage each 10 s."""
    binary = shutil.which("nats-server")
    assert binary is not None
    Acl.deny = deny
    server = Acl(binary)
    try:
        publisher = Publisher(two[0], f"nats://pub:pw@127.0.0.1:{server.port}", backoff=FAST)
        with pytest.raises(BusError) as got:
            await asyncio.wait_for(publisher.run(), WITHIN)
        text = str(got.value).lower()  # as nats-py says it
        assert "permissions violation" in text and deny.rstrip(">").lower() in text, text
        assert publisher.outages == 0 and "pub:pw" not in text
    finally:
        server.close()


async def test_a_purge_or_a_trim_under_the_publisher_loses_its_place_for_nothing(
    tmp_path: Path, sports_emulator: Emulator, server: NatsBus
) -> None:
    """A purge keeps the stream's last sequence, which the next batch expects: a
    follower goes on after it; a publisher started on the purged stream past the
    duplicate window publishes the feed again. A stream trimmed by its limits (discard
    old) keeps its last message: the publisher goes on after it."""
    db = str(tmp_path / "m.sqlite")
    url = f"{server.url}?duplicate_window=1"
    async with sports_emulator.client() as client, jetstream_of(server.url) as js:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        first = await seqs(db)
        publisher = Publisher(db, url, batch=100)
        task = asyncio.create_task(publisher.run())
        try:
            await until(lambda: publisher.position == first[-1], within=WITHIN)
            await js.purge_stream("ASYNCSPORTS")
            sports_emulator.clock.advance(3600)
            await mirror.once()
            later = await seqs(db)
            await until(lambda: publisher.position == later[-1], within=WITHIN)
        finally:
            publisher.stop()
            await asyncio.wait_for(task, WITHIN)
        mine = {await origin_of(db): [s for s in later if s > first[-1]]}
        one_origin_in_order(await stored(server.url, "ASYNCSPORTS"), mine)
        # Started on it past the window: the whole feed again, once, in order.
        await js.purge_stream("ASYNCSPORTS")
        since = asyncio.get_running_loop().time()
        await until(lambda: asyncio.get_running_loop().time() > since + 1.5, within=WITHIN)
        again = Publisher(db, url, batch=300)
        await again.once()
        assert again.published == len(later)
        one_origin_in_order(await stored(server.url, "ASYNCSPORTS"), {next(iter(mine)): later})
        # Trimmed to its last 50 (discard old): it goes on after its last message.
        await js.update_stream(
            api.StreamConfig(name="ASYNCSPORTS", subjects=["asyncsports.>"], max_msgs=50)
        )
        sports_emulator.clock.advance(3600)
        await mirror.once()
        last = await seqs(db)
        trimmed = Publisher(db, url, batch=20)
        await trimmed.once()
        assert trimmed.published == len(last) - len(later)
        one_origin_in_order(await stored(server.url, "ASYNCSPORTS"), {next(iter(mine)): last[-50:]})


@contextlib.asynccontextmanager
async def jetstream_of(url: str) -> AsyncIterator[Any]:
    nc = await nats.connect(url)
    try:
        yield nc.jetstream()
    finally:
        await nc.close()


async def test_a_message_slipped_in_under_a_follower_stops_it_naming_the_message(
    tmp_path: Path, sports_emulator: Emulator, server: NatsBus
) -> None:
    """Written between two of its batches by someone else: the next batch is refused
    by the stream (not after ours), and the publisher, reading the stream, names it."""
    db = str(tmp_path / "m.sqlite")
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        first = await seqs(db)
        publisher = Publisher(db, server.url, batch=100, backoff=FAST)
        task = asyncio.create_task(publisher.run())
        try:
            await until(lambda: publisher.position == first[-1], within=WITHIN)
            seq = await put(server.url, "asyncsports.basketball.actions", {"Nats-Msg-Id": "x:1"})
            sports_emulator.clock.advance(3600)
            await mirror.once()
            with pytest.raises(BusError) as got:
                await asyncio.wait_for(task, WITHIN)
        finally:
            publisher.stop()
            if not task.done():
                await asyncio.wait_for(task, WITHIN)
    text = str(got.value)
    assert f"stream seq {seq}" in text and "asyncsports.basketball.actions" in text, text
    held = await stored(server.url, "ASYNCSPORTS")
    assert len(held) == len(first) + 1 and held[-1][0] == "x:1"  # nothing of ours after it


async def test_a_request_under_way_when_the_connection_is_lost_ends_at_once(
    server: NatsBus, two: list[str]
) -> None:
    """A JetStream API request (where the stream stands) in flight when the connection
    is cut ends with it, an outage, rather than waiting out its 10 s time-out: so a
    publisher told to stop while its bus went away stops at once (nats-py fails no
    pending request when a connection closes)."""
    from support.proxy import Proxy

    from asyncsports._wire.bus import ACK_TIMEOUT, parse_target
    from asyncsports.bus import classify, connect

    async with Proxy(server.port) as proxy:
        bus = await connect(parse_target(f"nats://127.0.0.1:{proxy.port}"), 5.0)
        try:
            proxy.hold()
            asking = asyncio.ensure_future(bus.position(None))
            await asyncio.sleep(0)  # the request written, its answer held
            loop = asyncio.get_running_loop()
            began = loop.time()
            proxy.cut()
            with pytest.raises(Exception) as caught:
                await asyncio.wait_for(asking, ACK_TIMEOUT + 5)
            took = loop.time() - began
        finally:
            proxy.release()
            await bus.close()
    assert classify(caught.value) == "away", repr(caught.value)
    assert took < ACK_TIMEOUT / 2, f"the request waited {took:.1f} s after the connection ended"


@pytest.mark.parametrize("how", ["reset", "closed"])
async def test_a_connection_dropped_in_its_handshake_is_an_outage(
    server: NatsBus, how: str
) -> None:
    """A server (or a proxy before it) that accepts and drops the connection before its
    INFO, with a reset or a plain close: nats-py says the close with a bare ``Error``
    ("empty response ... expecting INFO"), which is an outage here (waited for), not a
    refusal that would end a follower."""
    from support.proxy import Proxy

    from asyncsports._wire.bus import parse_target
    from asyncsports.bus import classify, connect

    async def close(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async with contextlib.AsyncExitStack() as stack:
        if how == "reset":
            proxy = await stack.enter_async_context(Proxy(server.port))
            proxy.dropping = True
            port = proxy.port
        else:
            closing = await asyncio.start_server(close, "127.0.0.1", 0)
            stack.push_async_callback(closing.wait_closed)
            stack.callback(closing.close)
            port = closing.sockets[0].getsockname()[1]
        with pytest.raises(Exception) as caught:
            await connect(parse_target(f"nats://127.0.0.1:{port}"), 5.0)
    assert classify(caught.value) == "away", repr(caught.value)


async def _answering(reply: bytes | None) -> asyncio.Server:
    """A server that says nothing until asked, then ``reply`` (None: never a word)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            if await reader.read(100) and reply is not None:
                writer.write(reply)
                await writer.drain()
            await reader.read()  # held open until the other end lets go
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


@pytest.mark.parametrize("follow", [[], ["--follow"]], ids=["once", "follow"])
@pytest.mark.parametrize("who", ["redis", "http"])
async def test_a_nats_url_at_another_servers_port_is_refused_naming_who_answered(
    tmp_path: Path, who: str, follow: list[str]
) -> None:
    """Issue 43, item 7: ``--to nats://<a Redis's port>`` waited out the connect timeout
    (10 s) for the INFO a NATS server sends at once, then said only "TimeoutError" (a
    follower would have waited on, as for an outage). A connection without its INFO
    after half a second has a look of its own at who listens (what it says unasked, or
    to a PING): another server is a BusError naming it, exit 22, at once."""
    db = str(tmp_path / "m.sqlite")
    await (await open_mirror(db)).close()  # a mirror with nothing yet: it publishes
    async with contextlib.AsyncExitStack() as stack:
        if who == "redis":
            redis = bus_server("redis")
            stack.callback(redis.close)
            port, said = redis.port, "a Redis server answered (+PONG)"
        else:
            http = await _answering(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            stack.push_async_callback(http.wait_closed)
            stack.callback(http.close)
            port = http.sockets[0].getsockname()[1]
            said = "an HTTP server answered (HTTP/1.1 400 Bad Request)"
        loop = asyncio.get_running_loop()
        began = loop.time()
        result = await ainvoke("changes", "--db", db, "--to", f"nats://127.0.0.1:{port}", *follow)
        took = loop.time() - began
    assert result.exit_code == 22, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    target = f"nats://127.0.0.1:{port} stream ASYNCSPORTS (asyncsports.>)"
    assert line == f"asyncsports: error: {target}: no NATS server there: {said}"
    assert took < 5, f"{took:.1f} s: the connect timeout (10 s) waited out"


async def test_a_nats_url_where_nothing_answers_says_so_within_the_connect_timeout(
    tmp_path: Path,
) -> None:
    """A server that takes the connection and says nothing, even to a PING (a NATS server
    stopped, a proxy with nothing behind it): no INFO within the connect timeout, an
    outage (``cannot publish`` without --follow, exit 22), said in words: it was a bare
    "TimeoutError"."""
    db = str(tmp_path / "m.sqlite")
    await (await open_mirror(db)).close()
    silent = await _answering(None)
    try:
        port = silent.sockets[0].getsockname()[1]
        to = f"nats://127.0.0.1:{port}"
        result = await ainvoke("changes", "--db", db, "--to", to, "--connect-timeout", "1")
    finally:
        silent.close()
        # Each connection closed (the server waits for them): none left open by nats-py.
        async with asyncio.timeout(WITHIN):
            await silent.wait_closed()
    assert result.exit_code == 22, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("asyncsports: error: ")]
    assert line == (
        f"asyncsports: error: cannot publish to {to} stream ASYNCSPORTS (asyncsports.>): "
        "no NATS server answered within 1 s (no INFO)"
    )
