"""The arithmetic that chooses a table's columns for a width (asyncsports.cli.columns), and
the layouts the views make of it (asyncsports.cli.views.layout)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports.cli.columns import GAP, Fit, choose, prefix, total
from asyncsports.cli.options import Globals
from asyncsports.cli.views import VIEWS, Column, ColumnsError, Kind, View, layout
from asyncsports.models import Fixture


@st.composite
def fits(draw: st.DrawFn) -> Fit:
    full = draw(st.integers(1, 60))
    compact = draw(st.integers(1, full))
    if draw(st.booleans()):  # a name: wraps
        return Fit(full, full, draw(st.integers(1, full)))
    return Fit(full, compact, compact, eager=draw(st.booleans()))


@given(st.lists(fits(), min_size=1, max_size=8), st.integers(1, 250), st.integers(1, 4))
def test_choose_keeps_the_first_columns_and_fits_the_rest_whole(
    columns: list[Fit], width: int, keep: int
) -> None:
    widths = choose(columns, width, keep)
    n = len(widths)
    assert min(keep, len(columns)) <= n <= len(columns)
    for fit, w in zip(columns, widths, strict=False):
        assert fit.floor <= w <= fit.full
        assert w >= fit.compact or fit.compact == fit.full  # only names go below compact
    if n < len(columns) and n > keep:
        # the next column, even compact, did not fit beside the ones shown: compact, or
        # full where eager (which took their full form before it was tried)
        before = [w if f.eager else f.compact for f, w in zip(columns, widths, strict=False)]
        assert total([*before, columns[n].compact]) > width
    if total(widths) > width:
        # over only when the kept columns do not fit: each at its compact form or floor
        assert n == min(keep, len(columns))
        assert all(w == min(f.compact, f.floor) for f, w in zip(columns, widths, strict=False))
    else:
        spare = width - total(widths)
        # a column in its compact form could not have had its full one
        assert all(f.full - w > spare for f, w in zip(columns, widths, strict=False) if w < f.full)
        # names wrap only when the kept columns do not fit whole
        if any(w < f.compact for f, w in zip(columns, widths, strict=False)):
            assert n == min(keep, len(columns))
            assert total([f.compact for f in columns[:n]]) > width


def test_choose_drops_the_lowest_rather_than_cut() -> None:
    name, uuid, date, status = Fit(36, 36, 10), Fit(36, 8, 8), Fit(16, 11, 11), Fit(9, 9, 9)
    assert choose([name, uuid, date, status], 200, keep=3) == [36, 36, 16, 9]
    assert choose([name, uuid, date, status], 80, keep=3) == [36, 8, 16, 9]
    least = 36 + 8 + 11 + 2 * GAP  # the kept columns whole, the date short
    assert choose([name, uuid, date, status], least, keep=3) == [36, 8, 11]
    assert choose([name, uuid, date, status], least - 1, keep=3) == [35, 8, 11]  # name wraps
    # 40 columns: the name wraps to make room for the kept ones, never under its floor
    assert choose([name, uuid, date, status], 40, keep=3) == [40 - 8 - 11 - 2 * GAP, 8, 11]
    assert choose([name, uuid, date, status], 10, keep=3) == [10, 8, 11]


def test_an_eager_column_is_whole_before_a_lower_one_shows() -> None:
    name, uuid, date, status = (
        Fit(36, 36, 10),
        Fit(36, 8, 8, eager=True),
        Fit(16, 11, 11),
        Fit(9, 9, 9),
    )
    # 120 columns: the whole id rather than a fifth column beside a short one
    assert choose([name, uuid, date, status, Fit(26, 26, 10)], 120, keep=3) == [36, 36, 16, 9]
    assert choose([name, uuid, date, status], 80, keep=3) == [36, 8, 16, 9]


@given(st.sets(st.text("0123456789abcdef-", min_size=1, max_size=36), min_size=1, max_size=30))
def test_prefix_tells_ids_apart(ids: set[str]) -> None:
    n = prefix(ids)
    if len({i[:n] for i in ids}) < len(ids):
        assert n == max(map(len, ids))  # no prefix can: the whole ids
    assert n >= min(8, max(map(len, ids)))


def test_prefix_grows_as_git_does() -> None:
    assert prefix(["27ebbfa9-ad38", "cc971350-4afb"]) == 8
    assert prefix(["27ebbfa9-ad38", "27ebbfa9-0000"]) == 10


# ------------------------------------------------------------------ layouts

VIEW = View(
    (
        Column("start (UTC)", Kind.DATE, "start"),
        Column("status", Kind.WHOLE),
        Column("fixture"),
        Column("competition"),
        Column("id", Kind.ID),
    ),
    lambda record: [record],
    ("fixture", "id", "start", "status"),
    keep=3,
)
ROWS = [
    (
        dt.datetime(2026, 11, 28, 19, 30),
        "Scheduled",
        "Westbrook Rangers v Ashford Storm",
        "Continental Basketball Cup",
        "27ebbfa9-ad38-4310-a438-d4280d40b95f",
    ),
    (
        dt.datetime(2026, 12, 1, 2, 0),
        "Live",
        "Oxford Titans v Milford Dragons",
        "Premier Basketball League",
        "cc971350-4afb-4c07-a3b1-0232514fa7f2",
    ),
]


def names(
    cfg: Globals, width: int, rows: list[tuple[object, ...]] = ROWS, year: int = 2026
) -> list[tuple[str, int, bool]]:
    plan = layout(VIEW, rows, cfg, width, year=year)
    assert plan.hidden == (0 if cfg.columns else len(VIEW.columns) - len(plan.shown))
    return [(VIEW.columns[i].key, w, c) for i, w, c in plan.shown]


def test_a_layout_keeps_the_order_shown_and_drops_by_priority() -> None:
    assert names(Globals(), 200) == [
        ("start", 16, False),
        ("status", 9, False),
        ("fixture", 33, False),
        ("competition", 26, False),
        ("id", 36, False),
    ]
    assert names(Globals(), 80) == [
        ("start", 16, False),
        ("status", 9, False),
        ("fixture", 33, False),
        ("id", 8, True),
    ]
    assert names(Globals(), 60) == [("start", 11, True), ("fixture", 33, False), ("id", 8, True)]


def test_wide_shows_every_column_whole_and_columns_the_ones_named() -> None:
    wide = names(Globals(wide=True), 60)
    assert [k for k, _, _ in wide] == ["start", "status", "fixture", "competition", "id"]
    assert dict((k, w) for k, w, _ in wide)["id"] == 36
    assert dict((k, w) for k, w, _ in wide)["start"] == 16
    assert names(Globals(columns=""), 200) == names(Globals(), 200)  # an empty variable
    picked = Globals(columns="ID, Fixture")
    assert names(picked, 80) == [("id", 36, False), ("fixture", 33, False)]
    assert names(picked, 60) == [("id", 8, True), ("fixture", 33, False)]


def test_dates_lose_their_year_only_when_every_row_is_this_years() -> None:
    # Issue 43, point 8: 2024's dates showed as 08-08 19:00 in 2026.
    assert names(Globals(), 60)[0] == ("start", 11, True)
    assert names(Globals(), 60, year=2027)[0] == ("start", 16, False)
    older = [ROWS[0], (dt.datetime(2025, 12, 31, 23, 0), *ROWS[1][1:])]
    assert names(Globals(), 60, older)[0] == ("start", 16, False)


@pytest.mark.parametrize(
    ("asked", "keys"),
    [("id,name", ["id", "fixture"]), ("startDateUTC, Name", ["start", "fixture"])],
)
def test_columns_takes_a_json_field_name_for_its_column(asked: str, keys: list[str]) -> None:
    # Issue 43, point 8: --columns id,name failed: the column is called fixture.
    view = VIEWS[Fixture]
    plan = layout(view, ROWS, Globals(columns=asked), 200, year=2026)
    assert [view.columns[i].key for i, _, _ in plan.shown] == keys


@pytest.mark.parametrize("asked", ["fixture,nope", " , "])
def test_columns_rejects_a_name_the_view_lacks_naming_them_all(asked: str) -> None:
    with pytest.raises(ColumnsError) as caught:
        layout(VIEW, ROWS, Globals(columns=asked), 80)
    assert str(caught.value).startswith("--columns: ")
    assert "start, status, fixture, competition, id" in str(caught.value)
    assert isinstance(caught.value, ValueError)  # exit 2: a usage error


@pytest.mark.parametrize("record", list(VIEWS), ids=lambda t: t.__name__)
def test_each_view_ranks_its_own_columns(record: type) -> None:
    view = VIEWS[record]
    keys = [c.key for c in view.columns]
    names = keys + [f.lower() for c in view.columns for f in c.fields]
    assert len(set(names)) == len(names)  # a JSON field name names one column, not two
    assert all(re.fullmatch(r"[a-z][a-z0-9-]*", k) for k in keys), keys  # typed in --columns
    assert sorted(view.priority()) == list(range(len(keys)))
    assert 1 <= view.keep <= len(keys)
