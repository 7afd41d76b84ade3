"""The pytest marker and the command lines: --record, asyncsports-emulator --replay."""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec
import pytest
from support import CLI, clean_env, invoke
from support.standalone import Standalone

from asyncsports import Client
from asyncsports.emulator import Emulator

SMALL = "tests/data/replay-small.jsonl.gz"
"""Made by recording an emulator (competitions=1, seasons=2, teams=4, fixtures_per_season=4,
actions_per_fixture=20): the basketball fixtures (size=5, two pages) and the first one's
live actions feed (speed=fast)."""


@pytest.mark.emulator(replay=SMALL)
async def test_the_marker_serves_a_checked_in_recording(
    sports_client: Client, sports_emulator: Emulator
) -> None:
    fixtures = await sports_client.fixtures.list("basketball", page_size=5).collect()
    live = [
        r async for r in sports_client.live.actions("basketball", fixtures[0].id, replay="fast")
    ]
    assert len(fixtures) == 8 and len(live) == 102 and live[-1].finished
    assert sports_emulator.requests["replay"] == 2 and sports_emulator.requests["live.actions"] == 1


def test_record_from_the_environment_and_an_unwritable_file(tmp_path: Path) -> None:
    path = tmp_path / "env.jsonl"
    result = invoke(
        "--emulator",
        "fixtures",
        "basketball",
        "--limit",
        "2",
        "--json",
        ASYNCSPORTS_RECORD=str(path),
    )
    assert result.exit_code == 0, result.stderr
    assert path.read_text().count('"e":"get"') >= 1
    bad = invoke(
        "--emulator", "--record", str(tmp_path / "no" / "such.jsonl"), "fixtures", "basketball"
    )
    assert bad.exit_code == 17 and "--record: cannot write" in bad.stderr


@pytest.mark.slow
def test_record_any_command_then_serve_it_with_the_standalone_emulator(tmp_path: Path) -> None:
    path = tmp_path / "cli.jsonl.gz"
    scale = "competitions=1,seasons=2,teams=4,fixtures_per_season=4,actions_per_fixture=20"
    recorded = subprocess.run(
        [
            *CLI,
            "--emulator",
            "--emulator-scale",
            scale,
            "--record",
            str(path),
            "fixtures",
            "basketball",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert recorded.returncode == 0, recorded.stderr
    assert "emulator-token" not in path.read_bytes().decode("latin-1")
    with Standalone("--replay", str(path)) as emu:
        replayed = subprocess.run(
            [
                *CLI,
                "--base-url",
                emu.base_url,
                "--token",
                "whatever",
                "fixtures",
                "basketball",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
        )
    assert replayed.returncode == 0, replayed.stderr
    lines = recorded.stdout.splitlines()
    assert len(lines) == 8 and replayed.stdout.splitlines() == lines
    assert msgspec.json.decode(lines[0])["name"]
