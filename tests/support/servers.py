"""Throwaway PostgreSQL, Redis and NATS servers for the tests, from the Debian packages.

``postgres`` (session) is one PostgreSQL cluster made by ``initdb`` in a temporary
directory, listening on 127.0.0.1 at a free port; ``postgres_url`` (per test) is a fresh
database in it. ``redis`` (session) is one ``redis-server`` on a free port, with no
persistence; ``redis_url`` (per test) is a URL to a database of its own (flushed first).
:class:`Bus` servers (a Redis with AOF, a ``nats-server -js`` with a file store) are
each a test's own, to stop, restart and kill (``tests/bus/conftest.py``).

Where a server is not installed the tests that use it skip, saying how to install it;
with ``ASYNCSPORTS_TEST_SERVERS=required`` (set by ``.ci/run``) they fail instead.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

INSTALL = "apt-get install -y postgresql redis-server nats-server (Debian, as root), or run .ci/run"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, below the kernel's ephemeral
    range: a server stopped by a test and started again keeps its port, where one from
    the range could be given meanwhile to any socket bound to port 0 (another test's
    server, on another worker), and the test would meet that one instead."""
    while True:
        port = _random.randrange(_PORTS_FROM, _ephemeral_from())
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use
        _given.add(port)
        return port


_PORTS_FROM = 10000
_given: set[int] = set()  # handed out by this process (not reused while its tests run)
# Its own source: pytest-randomly seeds the random module alike in every worker, and the
# workers would pick the same ports in turn.
_random = random.SystemRandom()


def _ephemeral_from() -> int:
    """The first port of the kernel's ephemeral range (Linux's default where unreadable)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def missing(what: str) -> None:
    message = f"{what} is not installed: {INSTALL}"
    if os.environ.get("ASYNCSPORTS_TEST_SERVERS") == "required":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def pg_bin() -> Path | None:
    """The directory of PostgreSQL's server binaries (initdb, pg_ctl), newest version first."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def _wait_port(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class PostgresServer:
    """A PostgreSQL cluster in a temporary directory. PostgreSQL refuses to run as root,
    so under root it runs as the ``postgres`` user (made by the Debian package), or
    ``nobody``; trust authentication on 127.0.0.1 only, no fsync (it is thrown away).

    ``directory``: an empty directory to hold it (a small file system, to fill), instead
    of a temporary one; ``wal``: where its write-ahead log goes, if not inside.
    """

    def __init__(
        self, bin_dir: Path, directory: Path | None = None, wal: Path | None = None
    ) -> None:
        self.bin = bin_dir
        self.dir = directory or Path(tempfile.mkdtemp(prefix="asyncsports-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self._names = itertools.count()
        self._run_as: dict[str, Any] = {}
        if os.geteuid() == 0:
            user = "postgres" if _user_exists("postgres") else "nobody"
            entry = pwd.getpwnam(user)
            for path in (self.dir, wal):
                if path is not None:
                    os.chown(path, entry.pw_uid, entry.pw_gid)
            self._run_as = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        waldir = ("--waldir", str(wal / "pg_wal")) if wal is not None else ()
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
            *waldir,
        )
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        proc = subprocess.run(
            [str(self.bin / tool), *args],
            capture_output=True,
            text=True,
            cwd=self.dir,
            timeout=60,
            **self._run_as,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{tool} failed ({proc.returncode}): {proc.stderr or proc.stdout}")

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        # fsync off: the OS keeps what is written when the server crashes (stop
        # "immediate"); synchronous_commit stays on, or a crash would lose commits.
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` (clients disconnected, clean shutdown) or
        ``immediate`` (as a crash: every process quits at once, recovery at the next start)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self) -> str:
        """A new empty database; its URL."""
        name = f"t{next(self._names)}"
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.database_url(name)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL cluster of its own, closed at the end (skipped, or failed in CI, where
    PostgreSQL is not installed)."""
    bin_dir = pg_bin()
    if bin_dir is None:
        missing("PostgreSQL")
    assert bin_dir is not None
    server = PostgresServer(bin_dir)
    try:
        yield server
    finally:
        server.close()


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _resp(*args: str) -> list[bytes]:
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return parts


class RedisServer:
    """A ``redis-server`` on 127.0.0.1 at a free port, without persistence."""

    def __init__(self, binary: str) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="asyncsports-redis-"))
        self.port = free_port()
        self._databases = itertools.count()
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
                "--databases",
                "1000",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_port(self.port)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def command(self, *args: str, db: int = 0) -> bytes:
        """Send one command (RESP) to database ``db``; the last line of its reply."""
        body = b"".join(_resp("SELECT", str(db)) + _resp(*args))
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(body)
            reply = b""
            while reply.count(b"\r\n") < 2:  # +OK of SELECT, then the command's first line
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            return reply.split(b"\r\n")[1]

    def fresh(self) -> str:
        """The URL of a database no test has used yet (flushed: 1,000 go round)."""
        db = next(self._databases) % 1000
        self.command("FLUSHDB", db=db)
        return self.url(db)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Bus:
    """A bus server of a test's own, in a temporary directory, on a free port it keeps
    across restarts: :meth:`stop` (as asked, or ``kill``: SIGKILL), :meth:`start` again
    with what it had stored (Redis: its AOF, every write fsynced; NATS: JetStream's file
    store)."""

    kind = ""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix=f"asyncsports-{self.kind}-"))
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.dir / "log"
        self.start()

    @property
    def url(self) -> str:
        raise NotImplementedError

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        """Start it (again) and wait until it accepts connections."""
        assert self.proc is None, "already running"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=log, cwd=self.dir)
        try:
            _wait_port(self.port)
        except OSError:
            self.stop(kill=True)
            raise RuntimeError(
                f"{self.kind} did not start: {self.log.read_text()[-2000:]}"
            ) from None

    def stop(self, kill: bool = False) -> None:
        """Stop it (SIGTERM, or SIGKILL with ``kill``), within 10 s (then killed)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if kill:
            proc.kill()
        else:
            proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def close(self) -> None:
        self.stop(kill=True)
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisBus(Bus):
    """``redis-server`` with AOF on, every write fsynced (``appendfsync always``)."""

    kind = "redis"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def argv(self) -> list[str]:
        return [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            str(self.dir),
        ]


class NatsBus(Bus):
    """``nats-server -js`` with its JetStream file store in the directory."""

    kind = "nats"

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        return [
            self.binary,
            "-js",
            "-a",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-sd",
            str(self.dir / "js"),
        ]


class WebhookBus(Bus):
    """A webhook receiver (support/webhook_receiver.py), keeping each change it took in
    its directory's ``taken.jsonl`` across restarts; :func:`support.bus.consume` reads it."""

    kind = "webhook"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def taken(self) -> Path:
        return self.dir / "taken.jsonl"

    def argv(self) -> list[str]:
        script = Path(__file__).with_name("webhook_receiver.py")
        from support.webhooks import SECRET

        return [self.binary, str(script), str(self.port), str(self.taken), SECRET]

    def start(self) -> None:
        WEBHOOKS[self.url] = self.taken
        super().start()


WEBHOOKS: dict[str, Path] = {}
"""Each webhook receiver's file of changes taken, by its URL."""

BUSES: dict[str, tuple[type[Bus], str]] = {
    "redis": (RedisBus, "redis-server"),
    "nats": (NatsBus, "nats-server"),
    "webhook": (WebhookBus, "python3"),
}


def bus_server(kind: str) -> Bus:
    """A new bus server of ``kind`` (``redis`` or ``nats``); skipped (or failed, in CI)
    where its Debian package is not installed."""
    cls, name = BUSES[kind]
    binary = sys.executable if kind == "webhook" else shutil.which(name)
    if binary is None:
        missing(f"{kind} ({name})")
    assert binary is not None
    return cls(binary)
