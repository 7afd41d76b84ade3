"""Output: JSON Lines (the service's own records) or a table a record type's View lays out."""

from __future__ import annotations

import datetime as dt
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

from .options import Globals
from .running import stderr

__all__ = ["VIEWS", "View", "show", "show_changes", "show_list"]

Row = Sequence[object]


@dataclass(frozen=True, slots=True)
class View:
    """How a record type shows in a table: headers and the rows of one record."""

    headers: tuple[str, ...]
    rows: Callable[[Any], Iterable[Row]]
    whole: tuple[str, ...] = ()
    """Columns never wrapped or cut: UUIDs, which a reader copies into the next command."""


def _when(value: dt.datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def _name(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


# ------------------------------------------------------------- data service


def _fixture_rows(f: Fixture) -> Iterable[Row]:
    comp = f.stage.season.competition if f.stage and f.stage.season else None
    status = f"{f.status} (deleted)" if f.fixture_deleted else f.status
    yield (_when(f.start_date_utc), status, f.name, comp.name if comp else "", f.id)


def _squad_rows(s: Squad) -> Iterable[Row]:
    for p in s.players:
        country = p.location.country.name if p.location and p.location.country else None
        yield (s.team.name if s.team else "", p.shirt_number, p.full_name, country, p.id)


def _action_rows(a: Action) -> Iterable[Row]:
    fa, s = a.fixture_action, a.fixture_summary
    score = f"{s.home_team_score}-{s.away_team_score}" if s else ""
    who = fa.player.name if fa.player else (fa.team.name if fa.team else "")
    yield (fa.fixture_seq_num, fa.period, fa.clock_time, fa.fixture_action_type, who, score,
           fa.send_type)  # fmt: skip


def _standings_rows(p: Standings) -> Iterable[Row]:
    for t in p.teams_statistics:
        yield (t.rank, t.name, t.games_played, t.total_wins, t.total_draws, t.total_losses,
               t.points, p.group.name if p.group else "")  # fmt: skip


def _statistics_rows(p: Statistics) -> Iterable[Row]:
    for team in p.team_action_aggregates:
        for agg in team.game_action_aggregates:
            yield (team.team.name if team.team else "", agg.action, agg.action_aggregate)


# ------------------------------------------------------------------ snooker


def _tournament_rows(t: Tournament) -> Iterable[Row]:
    yield (t.tournament_id, t.tournament_name, t.season_name, _when(t.start_date),
           _when(t.end_date))  # fmt: skip


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
    yield (b.break_, player, opponent, b.round_name, b.frame, _when(b.date))


def _profile_rows(p: PlayerProfile) -> Iterable[Row]:
    yield (p.player_id, _name(p.player_first_name, p.player_last_name), p.nationality,
           p.season_ranking, p.matches_played, p.matches_won, p.highest_break)  # fmt: skip


def _winner_rows(w: PreviousWinner) -> Iterable[Row]:
    yield (w.year, w.player_id, _name(w.player_first_name, w.player_last_name))


def _image_rows(i: PlayerImage) -> Iterable[Row]:
    yield (i.file_name, i.file_type, len(i.file_content))


# ------------------------------------------------------------ stream events


def _event_rows(e: Event) -> Iterable[Row]:
    t = e.tournament
    sport = t.property.sport if t and t.property else None
    yield (e.id, e.title, _when(e.start_date), _when(e.end_date), t.name if t else "",
           sport.name if sport else "")  # fmt: skip


def _playback_rows(p: Playback) -> Iterable[Row]:
    yield (p.event_id, p.hls_url)


VIEWS: dict[type, View] = {
    Fixture: View(
        ("start (UTC)", "status", "fixture", "competition", "id"), _fixture_rows, ("id",)
    ),
    Squad: View(("team", "shirt", "player", "country", "id"), _squad_rows, ("id",)),
    Action: View(("seq", "period", "clock", "action", "by", "score", "send"), _action_rows),
    Standings: View(("rank", "team", "P", "W", "D", "L", "points", "group"), _standings_rows),
    Statistics: View(("team", "action", "total"), _statistics_rows),
    Tournament: View(("id", "tournament", "season", "start", "end"), _tournament_rows),
    Match: View(("id", "round", "player 1", "frames", "player 2", "best of"), _match_rows),
    PlayerAst: View(("id", "player", "AST (s)"), _ast_rows),
    TournamentPlayer: View(("id", "player", "country", "born"), _player_rows),
    Break: View(("break", "player", "opponent", "round", "frame", "date"), _break_rows),
    PlayerProfile: View(
        ("id", "player", "nationality", "ranking", "played", "won", "highest break"),
        _profile_rows,
    ),
    PreviousWinner: View(("year", "id", "player"), _winner_rows),
    PlayerImage: View(("name", "type", "bytes"), _image_rows),
    Event: View(("id", "event", "start (UTC)", "end (UTC)", "tournament", "sport"), _event_rows),
    Playback: View(("event", "HLS address"), _playback_rows),
}


# ------------------------------------------------------------------ showing


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _text(value: object) -> Text:
    # Text, not str: a name such as "[A] Team" is data, not rich markup.
    return Text(_cell(value))


def _line(record: object) -> None:
    sys.stdout.buffer.write(encode(record) + b"\n")
    sys.stdout.flush()


def show(cfg: Globals, records: Sequence[Any], what: str | None = None) -> None:
    """Print records: JSON Lines, or a table on a terminal (captioned ``N what``)."""
    if cfg.as_json:
        for record in records:
            _line(record)
        return
    if not records:
        stderr().print(f"no {what or 'records'}", style="dim")
        return
    view = VIEWS[type(records[0])]
    table = Table(box=box.SIMPLE_HEAD, caption=f"{len(records)} {what}" if what else None)
    for header in view.headers:
        whole = header in view.whole
        table.add_column(header, no_wrap=whole, min_width=36 if whole else None)
    for record in records:
        for row in view.rows(record):
            table.add_row(*map(_text, row))
    Console().print(table)


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
                _line(record)
            else:
                records.append(record)
    if not cfg.as_json:
        show(cfg, records, what or "records")


async def show_changes(
    cfg: Globals, changes: AsyncIterator[Change[Any]], limit: int | None = None
) -> None:
    """Print each change of a watcher as it comes (up to ``limit`` of them): a JSON line,
    or a line of cells."""
    console = Console(highlight=False)
    headed = False
    shown = 0
    async for change in changes:
        if cfg.as_json:
            head = b'{"change":"%s","record":' % change.kind.encode()
            sys.stdout.buffer.write(head + encode(change.record) + b"}\n")
            sys.stdout.flush()
        else:
            view = VIEWS[type(change.record)]
            if not headed:
                console.print(f"{'change':<7}" + " | ".join(view.headers), style="bold")
                headed = True
            for row in view.rows(change.record):
                console.print(f"{change.kind:<7}" + " | ".join(map(_cell, row)), markup=False)
        shown += 1
        if shown == limit:  # stop at once: the next change may be minutes away
            break
