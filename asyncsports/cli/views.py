"""Output: JSON Lines (the service's own records) or a table a record type's View lays out.

A table shows the columns that fit the terminal, in each view's order of priority (the
name and the id first); ``--wide`` shows them all, ``--columns`` the ones named.
"""

from __future__ import annotations

import datetime as dt
import enum
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from asyncsports._iter.watch import Change
from asyncsports.models import (
    Action,
    Break,
    Event,
    Fixture,
    Match,
    Playback,
    PlayerAst,
    PlayerImage,
    PlayerProfile,
    PreviousWinner,
    Squad,
    Standings,
    Statistics,
    Tournament,
    TournamentPlayer,
    encode,
)
from asyncsports.paging import AsyncList

from .columns import GAP, Fit, choose, prefix, total
from .messages import stderr
from .options import Globals

__all__ = [
    "VIEWS",
    "Column",
    "ColumnsError",
    "Kind",
    "Layout",
    "View",
    "layout",
    "show",
    "show_changes",
    "show_list",
]

Row = Sequence[object]


class Kind(enum.Enum):
    """How a column's cells may narrow."""

    TEXT = "text"
    """A name: wraps at spaces, and only when the table's first columns do not fit."""
    WHOLE = "whole"
    """A status, a code, an address: never wrapped or cut."""
    NUMBER = "number"
    """As WHOLE, aligned right."""
    DATE = "date"
    """A datetime: ``2026-11-28 19:30``, or ``11-28 19:30`` where room is short."""
    ID = "id"
    """An id: whole, or the prefix that tells the table's ids apart where room is short."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a view: its header, how it narrows, its name for ``--columns``."""

    header: str
    kind: Kind = Kind.TEXT
    name: str = ""
    """The header in lower case when empty."""
    fields: tuple[str, ...] = ()
    """The record's JSON field names this column shows under another name, which
    ``--columns`` takes as well (``name`` for the fixture column): what ``--json`` prints."""

    @property
    def key(self) -> str:
        """The column's name for ``--columns``."""
        return self.name or self.header.lower()


@dataclass(frozen=True, slots=True)
class View:
    """How a record type shows in a table: its columns, in the order shown, and the rows
    of one record (a cell a column each)."""

    columns: tuple[Column, ...]
    rows: Callable[[Any], Iterable[Row]]
    first: tuple[str, ...] = ()
    """Names of the columns kept longest as the width shrinks, most wanted first (the name,
    then the id): the others follow in the order shown."""
    keep: int = 2
    """How many of those show however narrow the terminal (names wrap to make room)."""

    def priority(self) -> list[int]:
        """The columns' positions, the most wanted first."""
        keys = [c.key for c in self.columns]
        lead = [keys.index(name) for name in self.first]
        return lead + [i for i in range(len(keys)) if i not in lead]


def _name(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


# ------------------------------------------------------------- data service


def _fixture_rows(f: Fixture) -> Iterable[Row]:
    comp = f.stage.season.competition if f.stage and f.stage.season else None
    status = f"{f.status} (deleted)" if f.fixture_deleted else f.status
    yield (f.start_date_utc, status, f.name, comp.name if comp else "", f.id)


def _squad_rows(s: Squad) -> Iterable[Row]:
    for p in s.players:
        country = p.location.country.name if p.location and p.location.country else None
        yield (s.team.name if s.team else "", p.shirt_number, p.full_name, country, p.id)


def _action_rows(a: Action) -> Iterable[Row]:
    fa, s = a.fixture_action, a.fixture_summary
    score = f"{s.home_team_score}-{s.away_team_score}" if s else ""
    who = fa.player.name if fa.player else (fa.team.name if fa.team else "")
    yield (
        fa.fixture_seq_num,
        fa.period,
        fa.clock_time,
        fa.fixture_action_type,
        who,
        score,
        fa.send_type,
    )


def _standings_rows(p: Standings) -> Iterable[Row]:
    for t in p.teams_statistics:
        yield (
            t.rank,
            t.name,
            t.games_played,
            t.total_wins,
            t.total_draws,
            t.total_losses,
            t.points,
            p.group.name if p.group else "",
        )


def _statistics_rows(p: Statistics) -> Iterable[Row]:
    for team in p.team_action_aggregates:
        for agg in team.game_action_aggregates:
            yield (team.team.name if team.team else "", agg.action, agg.action_aggregate)


# ------------------------------------------------------------------ snooker


def _tournament_rows(t: Tournament) -> Iterable[Row]:
    yield (t.tournament_id, t.tournament_name, t.season_name, t.start_date, t.end_date)


def _match_rows(m: Match) -> Iterable[Row]:
    one = _name(m.player1_first_name, m.player1_last_name)
    two = _name(m.player2_first_name, m.player2_last_name)
    frames = f"{m.player1_frames}-{m.player2_frames}"
    yield (m.match_id, m.round_name or m.round_number, one, frames, two, m.best_out_of_frames)


def _ast_rows(p: PlayerAst) -> Iterable[Row]:
    yield (p.player_id, _name(p.player_first_name, p.player_last_name), p.player_ast)


def _player_rows(p: TournamentPlayer) -> Iterable[Row]:
    born = p.date_of_birth.date() if p.date_of_birth else ""
    yield (p.player_id, _name(p.player_first_name, p.player_second_name), p.country, born)


def _break_rows(b: Break) -> Iterable[Row]:
    player = _name(b.player_first_name, b.player_last_name)
    opponent = _name(b.opponent_first_name, b.opponent_last_name)
    yield (b.break_, player, opponent, b.round_name, b.frame, b.date)


def _profile_rows(p: PlayerProfile) -> Iterable[Row]:
    yield (
        p.player_id,
        _name(p.player_first_name, p.player_last_name),
        p.nationality,
        p.season_ranking,
        p.matches_played,
        p.matches_won,
        p.highest_break,
    )


def _winner_rows(w: PreviousWinner) -> Iterable[Row]:
    yield (w.year, w.player_id, _name(w.player_first_name, w.player_last_name))


def _image_rows(i: PlayerImage) -> Iterable[Row]:
    yield (i.file_name, i.file_type, len(i.file_content))


# ------------------------------------------------------------ stream events


def _event_rows(e: Event) -> Iterable[Row]:
    t = e.tournament
    sport = t.property.sport if t and t.property else None
    yield (
        e.id,
        e.title,
        e.start_date,
        e.end_date,
        t.name if t else "",
        sport.name if sport else "",
    )


def _playback_rows(p: Playback) -> Iterable[Row]:
    yield (p.event_id, p.hls_url)


TEXT, WHOLE, NUMBER, DATE, ID = Kind.TEXT, Kind.WHOLE, Kind.NUMBER, Kind.DATE, Kind.ID


def _cols(
    *columns: str | Column | tuple[str, Kind] | tuple[str, Kind, str],
) -> tuple[Column, ...]:
    return tuple(
        c if isinstance(c, Column) else Column(c) if isinstance(c, str) else Column(*c)
        for c in columns
    )


VIEWS: dict[type, View] = {
    Fixture: View(
        _cols(
            Column("start (UTC)", DATE, "start", ("startDateUTC",)),
            ("status", WHOLE),
            Column("fixture", fields=("name",)),
            "competition",
            ("id", ID),
        ),
        _fixture_rows,
        ("fixture", "id", "start", "status"),
        keep=3,
    ),
    Squad: View(
        _cols("team", ("shirt", NUMBER), "player", "country", ("id", ID)),
        _squad_rows,
        ("player", "id", "shirt", "team"),
    ),
    Action: View(
        _cols(
            ("seq", NUMBER),
            ("period", WHOLE),
            ("clock", WHOLE),
            "action",
            "by",
            ("score", WHOLE),
            ("send", WHOLE),
        ),
        _action_rows,
        ("seq", "action", "by", "clock", "score", "period"),
    ),
    Standings: View(
        _cols(
            ("rank", NUMBER),
            "team",
            ("P", NUMBER),
            ("W", NUMBER),
            ("D", NUMBER),
            ("L", NUMBER),
            ("points", NUMBER),
            "group",
        ),
        _standings_rows,
        ("team", "rank", "points"),
    ),
    Statistics: View(
        _cols("team", "action", ("total", NUMBER)), _statistics_rows, ("action", "total")
    ),
    Tournament: View(
        _cols(
            Column("id", ID, fields=("tournamentId",)),
            Column("tournament", fields=("tournamentName",)),
            ("season", WHOLE),
            Column("start", DATE, fields=("startDate",)),
            Column("end", DATE, fields=("endDate",)),
        ),
        _tournament_rows,
        ("tournament", "id", "start", "end"),
    ),
    Match: View(
        _cols(
            ("id", ID),
            ("round", WHOLE),
            ("player 1", TEXT, "player1"),
            ("frames", WHOLE),
            ("player 2", TEXT, "player2"),
            ("best of", NUMBER, "best-of"),
        ),
        _match_rows,
        ("player1", "player2", "frames", "id"),
    ),
    PlayerAst: View(
        _cols(("id", ID), "player", ("AST (s)", NUMBER, "ast")), _ast_rows, ("player", "id")
    ),
    TournamentPlayer: View(
        _cols(("id", ID), "player", "country", ("born", WHOLE)), _player_rows, ("player", "id")
    ),
    Break: View(
        _cols(
            ("break", NUMBER),
            "player",
            "opponent",
            ("round", WHOLE),
            ("frame", NUMBER),
            ("date", DATE),
        ),
        _break_rows,
        ("player", "break", "date", "opponent"),
        keep=3,
    ),
    PlayerProfile: View(
        _cols(
            ("id", ID),
            "player",
            "nationality",
            ("ranking", NUMBER),
            ("played", NUMBER),
            ("won", NUMBER),
            ("highest break", NUMBER, "highest-break"),
        ),
        _profile_rows,
        ("player", "id", "ranking"),
    ),
    PreviousWinner: View(
        _cols(("year", NUMBER), ("id", ID), "player"), _winner_rows, ("player", "year")
    ),
    PlayerImage: View(_cols(("name", WHOLE), ("type", WHOLE), ("bytes", NUMBER)), _image_rows),
    Event: View(
        _cols(
            ("id", ID),
            Column("event", fields=("title",)),
            Column("start (UTC)", DATE, "start", ("startDate",)),
            Column("end (UTC)", DATE, "end", ("endDate",)),
            "tournament",
            "sport",
        ),
        _event_rows,
        ("event", "id", "start", "end", "sport"),
        keep=3,
    ),
    Playback: View(_cols(("event", ID), ("HLS address", WHOLE, "hls")), _playback_rows),
}


# ------------------------------------------------------------------ laying out

DATE_FULL = "%Y-%m-%d %H:%M"
DATE_SHORT = "%m-%d %H:%M"
TEXT_FLOOR = 10
"""The narrowest a name wraps to: its longest word if wider (up to WORD_MOST)."""
WORD_MOST = 20

STREAM_TEXT = 16
"""The width a name column of a stream takes at the least (a team's or a player's name
whole, most often): its first row may have an empty one, and its later rows longer ones."""
CHANGE = 6
"""The width of a change's kind (new, update...), the first column of a stream."""


class ColumnsError(ValueError):
    """``--columns`` names a column the table does not have (a usage error: exit 2)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """The columns a table shows: (position in the view, width, compact form or not),
    in the order shown, and what was left out."""

    shown: list[tuple[int, int, bool]]
    hidden: int
    """Columns left out for want of room."""
    shortened: bool
    """Ids shown by their prefix."""

    @property
    def width(self) -> int:
        """The table's width."""
        return total([w for _, w, _ in self.shown])


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _form(kind: Kind, value: object, compact: bool, n: int) -> str:
    if kind is Kind.DATE and isinstance(value, dt.datetime):
        return value.strftime(DATE_SHORT if compact else DATE_FULL)
    if kind is Kind.ID and compact:
        return _cell(value)[:n]
    return _cell(value)


def _fit(column: Column, cells: list[str], short: frozenset[Kind], text: int = 0) -> Fit:
    """``cells`` in their full forms; ``short``: the kinds that may take their compact one;
    ``text``: a name column's width at the least."""
    full = max(map(len, [column.header, *cells]))
    if column.kind is Kind.TEXT:
        full = max(full, text)
    compact = full
    if column.kind is Kind.DATE and Kind.DATE in short and any(cells):
        compact = max(len(column.header), len(dt.datetime.min.strftime(DATE_SHORT)))
    elif column.kind is Kind.ID and Kind.ID in short:
        compact = max(len(column.header), prefix(cells))
    compact = min(compact, full)
    if column.kind is not Kind.TEXT:
        return Fit(full, compact, compact, eager=column.kind is Kind.ID)
    words = [len(w) for text in [column.header, *cells] for w in text.split()]
    return Fit(full, full, min(full, max(TEXT_FLOOR, min(max(words, default=0), WORD_MOST))))


def _order(view: View, names: str | None) -> list[int]:
    if not names:  # not given, or ASYNCSPORTS_COLUMNS set empty
        return view.priority()
    keys = [c.key for c in view.columns]
    # A column's JSON field names name it too (lower case: as its own name is matched).
    named = {f.lower(): i for i, c in enumerate(view.columns) for f in c.fields}
    named.update((k, i) for i, k in enumerate(keys))
    asked = [n.strip().lower() for n in names.split(",") if n.strip()]
    unknown = [n for n in asked if n not in named]
    if unknown or not asked:
        what = f"no column {unknown[0]!r} in this table" if unknown else "no column named"
        raise ColumnsError(f"--columns: {what}; its columns: {', '.join(keys)}")
    return list(dict.fromkeys(named[n] for n in asked))


def _this_year(values: Iterable[object], year: int) -> bool:
    """Whether every date of ``values`` is in ``year``: then they may show without it."""
    return all(v.year == year for v in values if isinstance(v, dt.datetime))


def layout(
    view: View,
    rows: Sequence[Row],
    cfg: Globals,
    width: int,
    *,
    stream: bool = False,
    year: int | None = None,
) -> Layout:
    """Which of ``view``'s columns ``rows`` show in ``width`` characters, how wide, and in
    which form: ``cfg.wide`` shows all whole (wrapping names), ``cfg.columns`` the ones it
    names in its order. A date column loses its year only if every date in it is in
    ``year`` (the current one, UTC, when None). ``stream``: for rows still to come, ids
    whole (they may share a prefix)."""
    order = _order(view, cfg.columns)
    short = frozenset() if cfg.wide else frozenset({Kind.DATE} if stream else {Kind.DATE, Kind.ID})
    year = dt.datetime.now(dt.UTC).year if year is None else year
    full = [[_form(view.columns[i].kind, row[i], False, 0) for row in rows] for i in order]
    fits = [
        _fit(
            view.columns[i],
            cells,
            short if _this_year((row[i] for row in rows), year) else short - {Kind.DATE},
            STREAM_TEXT if stream else 0,
        )
        for i, cells in zip(order, full, strict=True)
    ]
    keep = len(order) if cfg.wide or cfg.columns else view.keep
    widths = choose(fits, width, keep)
    shown = [(order[k], w, w < fits[k].full) for k, w in enumerate(widths)]
    shortened = any(c and view.columns[i].kind is Kind.ID for i, _, c in shown)
    if cfg.columns:  # the ones asked for, in their order: none hidden for want of room
        return Layout(shown, 0, shortened)
    return Layout(sorted(shown), len(view.columns) - len(shown), shortened)


# ------------------------------------------------------------------ showing


def _line(record: object) -> None:
    sys.stdout.buffer.write(encode(record) + b"\n")
    sys.stdout.flush()


def _check(cfg: Globals, record: object) -> None:
    """A name --columns gets wrong is an error with JSON Lines too, which it leaves as
    they are: a script's typo shows at once, not on a terminal some day."""
    if cfg.columns:
        _order(VIEWS[type(record)], cfg.columns)


def _caption(count: str | None, plan: Layout) -> str | None:
    notes = ["whole ids"] if plan.shortened else []
    if plan.hidden:
        notes.append(f"{plan.hidden} more column{'s' if plan.hidden > 1 else ''}")
    hint = f"--wide for {', '.join(notes)}" if notes else None
    return " · ".join(t for t in (count, hint) if t) or None


def _cells(view: View, plan: Layout, rows: Sequence[Row]) -> Iterable[list[str]]:
    n = {i: prefix([_cell(r[i]) for r in rows]) for i, _, c in plan.shown if c}
    for row in rows:
        yield [_form(view.columns[i].kind, row[i], c, n.get(i, 0)) for i, _, c in plan.shown]


def show(cfg: Globals, records: Sequence[Any], what: str | None = None) -> None:
    """Print records: JSON Lines, or a table on a terminal (captioned ``N what``) of the
    columns that fit it."""
    if cfg.as_json:
        if records:
            _check(cfg, records[0])
        for record in records:
            _line(record)
        return
    if not records:
        stderr().print(f"no {what or 'records'}", style="dim")
        return
    view = VIEWS[type(records[0])]
    rows = [row for record in records for row in view.rows(record)]
    console = Console()
    plan = layout(view, rows, cfg, console.width)
    # One space after each cell and the rule's own between columns: columns.GAP apart.
    table = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        caption=_caption(f"{len(records)} {what}" if what else None, plan),
    )
    for i, width, _ in plan.shown:
        _add_column(table, view.columns[i], width)
    for cells in _cells(view, plan, rows):
        table.add_row(*map(Text, cells))  # Text: "[A] Team" is data, not markup
    if plan.width > console.width:  # wider than the terminal, rather than cut
        console = Console(width=plan.width)
    console.print(table)


async def show_list(
    cfg: Globals, listing: AsyncList[Any], what: str | None, limit: int | None
) -> None:
    """Print a listing as it arrives (JSON Lines) or as one table at its end."""
    records: list[Any] = []  # kept for the table only: JSON Lines may be endless
    n = 0
    async with listing:
        async for record in listing:
            if limit is not None and n >= limit:
                break
            n += 1
            if cfg.as_json:
                if n == 1:
                    _check(cfg, record)
                _line(record)
            else:
                records.append(record)
    if not cfg.as_json:
        show(cfg, records, what or "records")


def _stream_widths(view: View, plan: Layout, width: int) -> list[int]:
    """The widths of a stream's columns: the layout's, what is left of ``width`` shared by
    its names, which may be longer in the rows to come than in the first."""
    widths = [w for _, w, _ in plan.shown]
    names = [k for k, (i, _, _) in enumerate(plan.shown) if view.columns[i].kind is Kind.TEXT]
    spare = max(width - plan.width, 0)
    for n, k in enumerate(names):
        widths[k] += spare // len(names) + (n < spare % len(names))
    return widths


def _stream_table(view: View, plan: Layout, widths: list[int], header: bool) -> Table:
    """One row of a stream (or its header alone) as a table of the stream's widths: each
    line printed as it comes lines up under the header; a longer name wraps in its column."""
    table = Table(
        box=None, show_header=header, pad_edge=False, padding=(0, 0, 0, GAP), header_style="bold"
    )
    table.add_column("change", width=CHANGE, no_wrap=True)
    for (i, _, _), width in zip(plan.shown, widths, strict=True):
        _add_column(table, view.columns[i], width)
    return table


def _add_column(table: Table, column: Column, width: int) -> None:
    """``column`` added to ``table`` at ``width``: only text wraps, numbers to the right."""
    table.add_column(
        column.header,
        width=width,
        no_wrap=column.kind is not Kind.TEXT,
        overflow="fold",
        justify="right" if column.kind is Kind.NUMBER else "left",
    )


async def show_changes(
    cfg: Globals, changes: AsyncIterator[Change[Any]], limit: int | None = None
) -> None:
    """Print each change of a watcher as it comes (up to ``limit`` of them): a JSON line,
    or a row of the cells that fit the terminal, under a header (laid out by the first
    change, the columns as wide as the header's)."""
    console = Console(highlight=False)
    plan: Layout | None = None
    widths: list[int] = []
    shown = 0
    async for change in changes:
        view = VIEWS[type(change.record)]
        if cfg.as_json:
            if shown == 0:
                _check(cfg, change.record)
            head = b'{"change":"%s","record":' % change.kind.encode()
            sys.stdout.buffer.write(head + encode(change.record) + b"}\n")
            sys.stdout.flush()
        else:
            rows = list(view.rows(change.record))
            if plan is None:
                room = console.width - CHANGE - GAP
                plan = layout(view, rows, cfg, room, stream=True)
                widths = _stream_widths(view, plan, room)
                console.print(_stream_table(view, plan, widths, header=True))
            table = _stream_table(view, plan, widths, header=False)
            for cells in _cells(view, plan, rows):
                table.add_row(change.kind, *map(Text, cells))  # Text: data, not markup
            # as wide as the columns, rather than cut, should they be wider than the terminal
            console.print(table, width=max(console.width, CHANGE + GAP + total(widths)))
        shown += 1
        if shown == limit:  # stop at once: the next change may be minutes away
            break
