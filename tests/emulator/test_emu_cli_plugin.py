"""The standalone command and the pytest plugin."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from support import Standalone
from support.api import ACCEPT
from support.cli import project_env

from asyncsports.client import Client
from asyncsports.emulator import Emulator
from asyncsports.emulator.__main__ import _parser, describe, serve

RECORDING = Path(__file__).parents[1] / "data" / "replay-small.jsonl.gz"


@pytest.mark.slow
async def test_the_command_serves_what_it_prints() -> None:
    server = Standalone("--seed", "3")
    try:
        info = server.info
        base = info["base URL"]
        assert info["streaming URL"] == base + "/streaming"
        assert info["Accept"] == ACCEPT and info["snooker feed"] == "tvfeed"
        assert "running" in info["clock"]
        auth, stamp = (part.partition("=")[2] for part in info["static auth"].split())
        headers = {"Accept": ACCEPT, "Authorization": f"Bearer {info['token']}"}
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/soccer/fixtures", headers=headers) as r:
                assert r.status == 200 and len(await r.json()) == 96
            params = {"operatorId": info["operator id"], "auth": auth, "timestamp": stamp}
            events = info["streaming URL"] + "/api/v2/streaming/events"
            async with session.get(events, params=params) as r:
                assert r.status == 200 and await r.json()
    finally:
        assert server.stop() == 0


async def test_describe_names_everything_a_caller_needs() -> None:
    async with Emulator(big_fixture_list=10, big_timeline=10) as emu:
        text = describe(emu)
        for part in (
            emu.base_url,
            emu.streaming_url,
            emu.token,
            "tvfeed",
            "curl",
            "emulator-static-auth",
            str(emu.big_season_id),
            str(emu.big_fixture_id),
        ):
            assert part in text


def tried(text: str) -> list[tuple[dict[str, str], str]]:
    """The curl lines under "Try:" as (headers, URL)."""
    found = []
    for line in text.partition("\nTry:\n")[2].splitlines():
        words = shlex.split(line)
        assert words[0] == "curl", line
        headers = dict(h.split(": ", 1) for h in words[2:-1:2])
        found.append((headers, words[-1]))
    return found


async def answers(text: str) -> list[tuple[str, int]]:
    """Each URL "Try:" prints, and the status it answers with its headers."""
    async with aiohttp.ClientSession() as session:
        statuses = []
        for headers, url in tried(text):
            async with session.get(url, headers=headers) as r:
                statuses.append((url, r.status))
    return statuses


async def test_each_url_it_says_to_try_answers() -> None:
    async with Emulator(seed=3) as emu:
        found = await answers(describe(emu))
    assert len(found) >= 2 and all(status == 200 for _, status in found), found


async def test_a_replay_says_to_try_what_was_recorded() -> None:
    # What it printed before (a seeded world's listing and snooker tournaments) is a 404
    # from a replay, which answers only the requests recorded.
    async with Emulator(replay=RECORDING) as emu:
        found = await answers(describe(emu))
        assert all(url.startswith(emu.base_url) for url, _ in found)
    assert found and all(status == 200 for _, status in found), found


def test_a_busy_port_is_a_usage_error_naming_its_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """It exited 1 with "[Errno 98] error while attempting to bind ...", no option named."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        # serve(), not main(): main owns the process's signals, this one is pytest's.
        assert serve(_parser().parse_args(["--port", str(port)])) == 2  # a usage error
    said = capsys.readouterr().err
    assert said.startswith(
        f"asyncsports-emulator: error: argument --port: cannot listen on {port}: "
    )
    assert "address already in use" in said


async def test_emulator_fixture(sports_emulator: Emulator) -> None:
    assert sports_emulator.base_url.startswith("http://127.0.0.1:")
    assert sports_emulator.seed == 0 and sports_emulator.world.scale.fixtures_per_season == 24


@pytest.mark.emulator(5, fixtures_per_season=3, token="marked")
async def test_the_marker_configures_the_emulator(sports_emulator: Emulator) -> None:
    assert sports_emulator.seed == 5 and sports_emulator.token == "marked"
    assert sports_emulator.world.scale.fixtures_per_season == 3


async def test_sports_client_fixture_is_bound_to_the_emulator(
    sports_client: Client, sports_emulator: Emulator
) -> None:
    assert isinstance(sports_client, Client)
    assert sports_emulator.client().__class__ is Client


async def test_attributes_need_a_running_emulator() -> None:
    emu = Emulator()
    with pytest.raises(RuntimeError):
        _ = emu.base_url
    async with emu:
        with pytest.raises(RuntimeError):
            await emu.start()
    await emu.close()  # closing twice is fine
    creds = emu.streaming_credentials
    assert creds.operator_id == 1 and creds.clock() == emu.clock.time()


async def test_the_old_emulator_fixture_name_still_works_and_warns(
    recwarn: pytest.WarningsRecorder, emulator: Emulator, sports_emulator: Emulator
) -> None:
    assert emulator is sports_emulator
    assert any(
        issubclass(w.category, DeprecationWarning) and "sports_emulator" in str(w.message)
        for w in recwarn
    )


SCOPE_PROBE = """
async def test_probe(request, sports_client):
    print("loop scope:", request.config.getini("asyncio_default_fixture_loop_scope"))
"""


def loop_scope(project: Path, *options: str) -> str:
    """The fixture loop scope a project's pytest run sees, with the plugin installed."""
    (project / "test_probe.py").write_text(SCOPE_PROBE)
    env = project_env(PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-q", *options]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PytestDeprecationWarning" not in result.stdout + result.stderr
    return result.stdout.partition("loop scope: ")[2].split()[0]


@pytest.mark.slow
def test_the_plugin_defaults_the_fixture_loop_scope_and_keeps_a_projects_own(
    tmp_path: Path,
) -> None:
    # No configuration: pytest-asyncio would warn that the option is unset.
    assert loop_scope(tmp_path) == "function"
    assert loop_scope(tmp_path, "-o", "asyncio_default_fixture_loop_scope=session") == "session"
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = module\n")
    assert loop_scope(tmp_path) == "module"
