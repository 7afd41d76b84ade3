"""Exit codes a script can trust (issue 32, point 1): ``sync --once`` fails when its pass
could not complete, as backfill does, and a running mirror's ``/healthz`` names the tasks
that keep failing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import run
from support.servers import free_port

from asyncsports import Client
from asyncsports.cli.running import code_for
from asyncsports.errors import TransportError
from asyncsports.sync import Mirror
from asyncsports.sync._metrics import HEALTHY_WITHIN, healthy

UNREACHABLE = code_for(TransportError)


def _error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith("asyncsports: error: ")]
    return line


@pytest.mark.slow  # the command in subprocesses, each waiting out its retries
@pytest.mark.parametrize("command", ["sync --once", "backfill"])
def test_an_unreachable_service_fails_sync_once_and_backfill_alike(
    command: str, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    db = str(tmp_path / "m.sqlite")
    args = [*command.split(), "--db", db, "--sports", "soccer", "--rate-limit", "0"]
    proc = run("--base-url", url, "--token", "x", *args)
    assert proc.returncode == UNREACHABLE, proc.stderr
    line = _error_line(proc.stderr)
    assert f"cannot reach {url} after 4 attempts" in line
    if command == "sync --once":  # backfill stops at its first listing; sync tries all
        first = "asyncsports: error: 2 tasks failed, first (window|fixtures):soccer: "
        assert re.match(first, line), line
        assert line.endswith("run the same command again to retry them")
    assert "\N{SOCCER BALL}" not in proc.stderr  # "fixtures:soccer:" is no emoji code


async def test_healthz_names_the_tasks_that_keep_failing(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with Client(url, token="x", max_retries=0) as client:
        mirror = Mirror(client, tmp_path / "m.sqlite", sports=["soccer"], live=False)
        await mirror.once()
    assert set(mirror.failing) == {"fixtures:soccer", "window:soccer"}
    since = max(at for at, _ in mirror.failing.values())
    # One failure the next turn may mend: healthy yet, and named.
    ok, state = healthy(mirror, since + 1)
    assert ok is True
    failing = state["failing"]
    assert isinstance(failing, dict) and set(failing) == {"fixtures:soccer", "window:soccer"}
    assert "127.0.0.1" in failing["fixtures:soccer"]["error"]
    ok, state = healthy(mirror, since + HEALTHY_WITHIN + 1)
    assert ok is False and state["ok"] is False
