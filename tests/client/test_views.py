"""``client.with_json``: one wrapper makes the view of every method (what the pairs hold:
test_raw.py)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from support.samples import FIXTURE_ID, fixture
from support.stub import Stub

from asyncsports import Client, RawRecord
from asyncsports.live import LiveResource
from asyncsports.resources import (
    ActionsResource,
    EventsResource,
    FixturesResource,
    SnookerResource,
    SquadsResource,
    StandingsResource,
    StatisticsResource,
)
from asyncsports.views import (
    ActionsWithJSON,
    ClientWithJSON,
    EventsWithJSON,
    FixturesWithJSON,
    LiveWithJSON,
    SnookerWithJSON,
    SquadsWithJSON,
    StandingsWithJSON,
    StatisticsWithJSON,
)

VIEWS: dict[type, type] = {
    ActionsResource: ActionsWithJSON,
    EventsResource: EventsWithJSON,
    FixturesResource: FixturesWithJSON,
    SnookerResource: SnookerWithJSON,
    SquadsResource: SquadsWithJSON,
    StandingsResource: StandingsWithJSON,
    StatisticsResource: StatisticsWithJSON,
    LiveResource: LiveWithJSON,
}
# Merging takes feeds, plain or paired, and hands out what they give: nothing to pair.
UNPAIRED = {(LiveResource, "merge")}
ROOT = Path(__file__).resolve().parents[2]


def methods(cls: type) -> list[str]:
    return sorted(
        name
        for name, member in vars(cls).items()
        if inspect.isfunction(member) and not name.startswith("_") and (cls, name) not in UNPAIRED
    )


def test_every_namespace_and_method_has_its_view(client: Client) -> None:
    namespaces = {n: type(r) for n, r in vars(client).items() if type(r) in VIEWS}
    assert sorted(namespaces) == sorted(vars(client.with_json))
    for name, resource in namespaces.items():
        view = getattr(client.with_json, name)
        assert type(view) is VIEWS[resource]
        assert sorted(vars(view)) == methods(resource), resource.__name__


async def test_a_view_method_is_the_plain_one_paired(stub: Stub, client: Client) -> None:
    assert client.with_json is client.with_json  # made once, at first use
    assert isinstance(client.with_json, ClientWithJSON)
    for name in methods(SnookerResource):
        plain, paired = getattr(client.snooker, name), getattr(client.with_json.snooker, name)
        assert paired.__doc__ == plain.__doc__ and paired.__name__ == name
        assert inspect.signature(paired) == inspect.signature(plain)
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}", fixture())
    record: Any = await client.with_json.fixtures.get("basketball", FIXTURE_ID)
    assert isinstance(record, RawRecord) and msgspec.json.decode(record.json) == fixture()
    plain = await client.fixtures.get("basketball", FIXTURE_ID)  # the plain resource untouched
    assert not isinstance(plain, RawRecord) and plain == record.value


def test_old_raw_keyword_is_refused(client: Client) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'raw'"):
        client.actions.list("soccer", FIXTURE_ID, raw=True)  # type: ignore[call-arg]


@pytest.mark.slow
def test_mypy_types_each_shape_through_the_view(tmp_path: Path) -> None:
    """Listings, gets, a get of a list, changes and feeds, each typed with RawRecord."""
    mypy = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path)]
    done = subprocess.run(
        [*mypy, "tests/support/typed_with_json.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
