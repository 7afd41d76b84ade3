"""A bus URL's secrets show in no output of ``asyncsports changes --to`` (issue 41, point 5):
a NATS token (``nats://TOKEN@host``), a password holding ``/``, ``#``, ``?``, ``@``, ``:``,
blanks or unicode (``redis://:my/Secret@host``), a credential query or fragment
parameter; neither in a usage error (exit 2), nor, with the bus unreachable, in the error
line, the ``--verbose`` log and traceback, nor in the lease row the publisher writes in the
mirror database (``sync_lease``, named after the bus).

Secrets are generated; neither one nor any 8-character piece of it may show.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import CLI, clean_env, invoke
from support.procs import Command, child_env
from support.servers import NatsBus, RedisBus, free_port, missing

from asyncsports._wire.secrets import normalize_userinfo
from asyncsports.cli.exits import code_for
from asyncsports.errors import BusError, SinkError
from asyncsports.store import open_mirror

pytestmark = pytest.mark.slow  # the command, 60 times in this process and in subprocesses

NASTY = "/#?@:%&;=+'!$,()[]~é€𝄞 "
POSITIONS = [
    "user-only",
    "user:pass",
    "pass-only",
    "query:token",
    "query:password",
    "fragment:access_token",
]
# URLs that are no bus, or a bus with options it does not take: usage errors.
BAD = [
    "ftp://{info}h.example/x",
    "nats://{info}h.example:4222/a/path",
    "nats://{info}h.example:4222?bogus=1",
    "nats://{info}h.example:4222?prefix=no.name",
    "redis://{info}h.example:6379/0?maxlen=-1",
]


def secrets() -> st.SearchStrategy[str]:
    chars = st.one_of(
        st.sampled_from(NASTY),
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
        st.sampled_from(["%2F", "%40", "%3A", "%zz"]),
    )
    return st.lists(chars, min_size=8, max_size=24).map(lambda cs: "Zq" + "".join(cs))


def pieces(secret: str) -> set[str]:
    out = set()
    for text in {secret, urllib.parse.unquote(secret), urllib.parse.quote(secret, safe="")}:
        out |= {text[i : i + 8] for i in range(len(text) - 7)}
    return {p for p in out if sum(c.isalnum() for c in p) > 2}


def shown(text: str, secret: str) -> list[str]:
    return sorted(p for p in pieces(secret) if p in text)


def with_secret(form: str, position: str, secret: str) -> str:
    quoted = urllib.parse.quote(secret, safe="")
    if position == "user-only":
        url = form.format(info=secret.replace(":", "") + "@")
    elif position == "user:pass":
        url = form.format(info=f"someone:{secret}@")
    elif position == "pass-only":
        url = form.format(info=f":{secret}@")
    elif position.startswith("query:"):
        base, sep, query = form.format(info="").partition("?")
        url = f"{base}?{position[6:]}={quoted}" + (f"&{query}" if sep else "")
    else:
        url = form.format(info="") + f"#{position[9:]}={quoted}"
    return url


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    form=st.sampled_from(BAD),
    position=st.sampled_from(POSITIONS),
    secret=secrets(),
    verbose=st.booleans(),
)
@example(form=BAD[1], position="pass-only", secret="Zqmy/Secret-0123456789", verbose=False)
@example(form=BAD[2], position="user-only", secret="ZqTOKEN-0123456789abcdef", verbose=True)
# The host that urlsplit reads ("Zq&0%2F%2F", up to the "?") was quoted lowercased, which
# the secrets' scrubber did not match.
@example(form=BAD[1], position="user-only", secret="Zq:::&0%2F%2F?", verbose=False)
def test_a_usage_error_shows_no_secret_of_the_url(
    tmp_path: Path, form: str, position: str, secret: str, verbose: bool
) -> None:
    url = with_secret(form, position, secret)
    db = tmp_path / "absent.sqlite"
    result = invoke(*(["-v"] if verbose else []), "changes", "--db", str(db), "--to", url)
    # 2, or (a URL that its reader splits elsewhere, "nats://Zq/#/@h/a/path" is host
    # "Zq") the error of the database that is not there.
    assert result.exit_code in (2, code_for(SinkError)), result.output
    assert shown(result.stdout + result.stderr, secret) == [], result.stderr


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty mirror database, for the publisher to hold its lease in."""
    db = tmp_path_factory.mktemp("mirror") / "m.sqlite"

    async def make() -> None:
        store = await open_mirror(str(db))
        await store.close()

    asyncio.run(make())
    return db


UNREACHABLE = [
    ("nats", "user-only", "ZqTOKEN-0123456789abcdef"),
    ("nats", "user:pass", "Zqpa/ss#wo?rd@-0123456789"),
    ("nats", "pass-only", "Zqmy/Secret-0123456789"),
    ("redis", "pass-only", "Zqmy/Secret-0123456789"),
    ("redis", "pass-only", "Zqmylongsecret/rest-0123"),
    ("redis", "user:pass", "Zqwith space@and#hash-0123"),
    ("redis", "user-only", "ZqUSERTOKEN-0123456789ab"),
    ("redis", "query:password", "Zq%2Fsecret-0123456789"),
    ("nats", "user:pass", "Zqunicodeé€𝄞/-0123456789"),
]


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize(("kind", "position", "secret"), UNREACHABLE)
def test_an_unreachable_bus_shows_no_secret_of_its_url(
    tmp_path: Path, mirror: Path, kind: str, position: str, secret: str, verbose: bool
) -> None:
    db = tmp_path / "m.sqlite"
    db.write_bytes(mirror.read_bytes())
    form = "redis://{info}127.0.0.1:%d/0" if kind == "redis" else "nats://{info}127.0.0.1:%d"
    url = with_secret(form % free_port(), position, secret)
    args = [*CLI, *(["-v"] if verbose else []), "changes", "--db", str(db), "--to", url]
    done = subprocess.run(args, capture_output=True, text=True, env=clean_env(), timeout=60)
    assert done.returncode != 0, done.stderr
    assert "asyncsports: error:" in done.stderr
    assert shown(done.stdout + done.stderr, secret) == [], done.stderr
    with closing(sqlite3.connect(db)) as conn:
        # No lease is taken for a URL refused as no bus (a usage error).
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        rows = conn.execute("SELECT * FROM sync_lease").fetchall() if "sync_lease" in tables else []
    assert shown(repr(rows), secret) == [], rows


class LockedRedis(RedisBus):
    """A Redis that takes only the password ``secret``."""

    def __init__(self, binary: str, secret: str) -> None:
        self.secret = secret
        super().__init__(binary)

    def argv(self) -> list[str]:
        return [*super().argv(), "--requirepass", self.secret]

    def with_secret(self, secret: str) -> str:
        # redis-py reads a password percent-decoded: any character, encoded.
        return f"redis://:{urllib.parse.quote(secret, safe='')}@127.0.0.1:{self.port}/0"


class LockedNats(NatsBus):
    """A NATS server that takes only the token ``secret``."""

    def __init__(self, binary: str, secret: str) -> None:
        self.secret = secret
        super().__init__(binary)

    def argv(self) -> list[str]:
        return [*super().argv(), "--auth", self.secret]

    def with_secret(self, secret: str) -> str:
        return f"nats://{secret}@127.0.0.1:{self.port}"  # nats-py reads a token as written


SECRETS = {"redis": "Zq/pw#?@:é€-5f0c1e9a7b3d", "nats": "ZqTOKEN-5f0c1e9a7b3d5f0c"}


@pytest.fixture(params=["redis", "nats"])
def locked(request: pytest.FixtureRequest) -> Iterator[LockedRedis | LockedNats]:
    kind = request.param
    binary = shutil.which(f"{kind}-server")
    if binary is None:
        missing(f"{kind} ({kind}-server)")
    assert binary is not None
    server = (LockedRedis if kind == "redis" else LockedNats)(binary, SECRETS[kind])
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize("verbose", [False, True])
def test_a_bus_that_takes_the_secret_shows_it_nowhere(
    tmp_path: Path, mirror: Path, locked: LockedRedis | LockedNats, verbose: bool
) -> None:
    """Publishing (``--follow``, metrics served): its lines, ``/healthz``, ``/metrics`` and
    the lease row; then a wrong secret, refused: its error line."""
    db = tmp_path / "m.sqlite"
    db.write_bytes(mirror.read_bytes())
    secret = locked.secret
    flags = ["-v"] if verbose else []
    args = [*flags, "changes", "--db", str(db), "--follow", "--metrics-port", "0"]
    command = Command([*CLI, *args, "--to", locked.with_secret(secret)])
    try:
        command.wait_for("metrics on ", 30)
        deadline = time.monotonic() + 30
        while not command.health().get("connected"):
            assert command.proc.poll() is None, command.drain()
            assert time.monotonic() < deadline, (command.health(), command.drain())
            time.sleep(0.05)
        served = [repr(command.health()), *command.scrape()]
    finally:
        assert command.stop() == 0, command.drain()
    texts = [*served, *command.drain()]
    assert shown(" ".join(texts), secret) == [], texts
    assert any("bus_connected 1" in t for t in texts)
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT * FROM sync_lease").fetchall()
    assert rows and shown(repr(rows), secret) == [], rows

    wrong = secret[:2] + "X" + secret[3:]
    refused = subprocess.run(
        [*CLI, *flags, "changes", "--db", str(db), "--to", locked.with_secret(wrong)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    assert refused.returncode == code_for(BusError), refused.stderr
    assert shown(refused.stdout + refused.stderr, secret) == [], refused.stderr
    assert shown(refused.stdout + refused.stderr, wrong) == [], refused.stderr


@pytest.mark.parametrize("locked", ["redis"], indirect=True)
async def test_normalize_userinfo_lets_redis_py_connect_with_any_password(
    locked: LockedRedis,
) -> None:
    """For the connection (not wired yet: the bus opens ``target.url`` as written): the
    password as a user writes it, unencoded, reaches the server whole."""
    import redis.asyncio as aioredis

    raw = f"redis://:{locked.secret}@127.0.0.1:{locked.port}/0"
    with pytest.raises(ValueError):  # as written, redis-py reads "Zq" as the port
        aioredis.Redis.from_url(raw)
    client = aioredis.Redis.from_url(normalize_userinfo(raw))
    try:
        assert await client.ping()
    finally:
        await client.aclose()
