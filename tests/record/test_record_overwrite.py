"""No capture lost (issue 30, part 4): ``Client(record=FILE)`` and ``asyncsports --record``
never replace an earlier recording unless told to (``record_overwrite=True``,
``--record-overwrite``); the same client opened again still appends to its own file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from support import invoke

from asyncsports.emulator import Emulator

SCALE = {
    "competitions": 1,
    "seasons": 1,
    "teams": 2,
    "fixtures_per_season": 2,
    "actions_per_fixture": 5,
}


@pytest.mark.parametrize("name", ["earlier.jsonl", "earlier.jsonl.gz"])
async def test_a_client_refuses_an_earlier_recording_unless_told_to_replace_it(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    async with Emulator(**SCALE) as emu:
        async with emu.client(record=path) as client:
            await client.fixtures.list("basketball").collect()
        earlier = path.read_bytes()
        client = emu.client(record=path)
        with pytest.raises(FileExistsError) as caught:
            await client.open()
        assert caught.value.filename == str(path) and "record_overwrite=True" in str(caught.value)
        assert path.read_bytes() == earlier and not client._session.is_open
        await client.aclose()
        async with emu.client(record=path, record_overwrite=True) as client:
            await client.events.list().collect()
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rb") as f:
        text = f.read().decode()
    assert text.count('"format":"asyncsports-recording"') == 1
    assert "/events" in text and "/fixtures" not in text


async def test_an_empty_file_is_taken_and_the_same_client_appends_when_opened_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()
    async with Emulator(**SCALE) as emu:
        client = emu.client(record=path)
        async with client:
            await client.fixtures.list("basketball").collect()
        async with client:  # its own file: appended to
            await client.events.list().collect()
    text = path.read_text()
    assert text.count('"format":"asyncsports-recording"') == 1
    assert "/fixtures" in text and "/events" in text


def test_the_command_refuses_an_earlier_recording_unless_record_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "cli.jsonl"
    args = ("--emulator", "--record", str(path), "fixtures", "basketball", "--limit", "1", "--json")
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    earlier = path.read_bytes()
    again = invoke(*args)
    assert again.exit_code == 17 and again.stdout == ""
    assert again.stderr.strip().endswith(
        "holds a recording already; --record-overwrite replaces it"
    )
    assert path.read_bytes() == earlier
    replaced = invoke(*args, "--record-overwrite")
    assert replaced.exit_code == 0, replaced.stderr
    assert replaced.stdout == first.stdout and path.read_bytes() != earlier
    from_env = invoke(*args, ASYNCSPORTS_RECORD_OVERWRITE="1")
    assert from_env.exit_code == 0, from_env.stderr
