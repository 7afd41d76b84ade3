"""The snooker proxy: tournaments, matches, players, centuries, winners and images.

An ``int`` id addresses the numeric path; a ``str`` or ``uuid.UUID`` the ``external/`` one.
Every body is wrapped in ``data``, which holds an array or one record. Every method takes
``extra_query`` and ``extra_headers`` (see :class:`~asyncsports.RequestOptions`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any, Literal, TypeVar, Unpack, overload

import msgspec

from asyncsports import _request as q
from asyncsports._request import Param, Request, RequestOptions
from asyncsports._session import Response, Session
from asyncsports.errors import NoRecordError
from asyncsports.models import (
    Break,
    Data,
    Match,
    PlayerAst,
    PlayerImage,
    PlayerProfile,
    PreviousWinner,
    Tournament,
    TournamentPlayer,
)
from asyncsports.models._types import decode
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.raw import RawRecord, elements
from asyncsports.resources._base import Resource

T = TypeVar("T")
Id = int | str | uuid.UUID
SortOptions = str | Sequence[str] | bool


def id_path(name: str, value: Id) -> str:
    """``123`` for an int id, ``external/<id>`` for a str or UUID."""
    if isinstance(value, bool) or not isinstance(value, int | str | uuid.UUID):
        raise TypeError(f"{name}: expected an int or an external id (str or UUID), got {value!r}")
    if isinstance(value, int):
        return q.integer(name, value, low=0)
    return f"external/{q.segment(name, value)}"


def sort_params(sort_options: SortOptions | None, *, boolean: bool = False) -> list[Param]:
    """``sortOptions``: repeated strings, or ``true``/``false`` where the endpoint types it boolean."""
    if sort_options is None:
        return []
    if isinstance(sort_options, bool):
        if not boolean:
            raise TypeError(
                "sort_options: a bool is accepted only by tournament_players(external id)"
            )
        return [("sortOptions", q.boolean("sort_options", sort_options))]
    return q.sort_params("sort_options", sort_options, wire="sortOptions")


class _RawData(msgspec.Struct, gc=False):
    """The ``data`` of a snooker body as JSON (the record, or the array of them)."""

    data: msgspec.Raw = msgspec.Raw(b"null")


_RAW_DATA = msgspec.json.Decoder(_RawData)


def _decoded(tp: Any, resp: Response) -> Data[Any]:
    body: Data[Any] = decode(tp, resp.body, url=resp.url, status=resp.status)
    return body


def _records(body: Data[Any]) -> list[Any]:
    data = body.data
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


class SnookerResource(Resource):
    """``client.snooker``: the snooker proxy under ``/snooker/{feed}``."""

    def __init__(self, session: Session, feed: str) -> None:
        super().__init__(session)
        self._prefix = f"/snooker/{q.segment('snooker_feed', feed)}"

    def _request(
        self, suffix: str, params: Sequence[Param] = (), extra: RequestOptions | None = None
    ) -> Request:
        """The request of ``suffix``, with a method's ``extra_query`` and ``extra_headers``."""
        return q.options(Request(f"{self._prefix}/{suffix}", tuple(params)), extra or {})

    def _list(
        self, req: Request, tp: type[T], resume: ResumeToken | str | None, raw: bool
    ) -> AsyncList[Any]:
        return self._stream_list(req, tp, key="data", resume=resume, raw=raw)

    async def _single(self, req: Request, tp: type[T], raw: bool = False) -> Any:
        """The one record in ``data``; NoRecordError when the service sent none.

        A 404 from the service is a NotFoundError (from the session); a successful
        answer whose ``data`` is null or ``[]`` is a NoRecordError, since the service
        did not say the thing does not exist, only sent nothing. With ``raw`` the
        record comes as a RawRecord, its JSON that of the record in ``data``.
        """
        tp_ = Data[tp | list[tp] | None]  # type: ignore[valid-type]
        resp, body = await self._session.read(req, lambda r: (r, _decoded(tp_, r)))
        records = _records(body)
        if not records:
            shown = "null" if body.data is None else "[]"
            raise NoRecordError(
                f"the body held no record: 'data' was {shown}", status=resp.status, url=resp.url
            )
        record: T = records[0]
        if raw:
            return RawRecord(record, elements(_RAW_DATA.decode(resp.body).data)[0])
        return record

    @overload
    def tournaments(
        self,
        *,
        season_id: int | None = None,
        start: dt.date | str | None = None,
        end: dt.date | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Tournament]: ...
    @overload
    def tournaments(
        self,
        *,
        season_id: int | None = None,
        start: dt.date | str | None = None,
        end: dt.date | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[Tournament]]: ...
    def tournaments(
        self,
        *,
        season_id: int | None = None,
        start: dt.date | str | None = None,
        end: dt.date | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Tournament] | AsyncList[RawRecord[Tournament]]:
        """Tournaments, optionally of one season or between ``start`` and ``end``."""
        params: list[Param] = []
        if season_id is not None:
            params.append(("seasonId", q.integer("season_id", season_id, low=0)))
        if start is not None:
            params.append(("start", q.date("start", start)))
        if end is not None:
            params.append(("end", q.date("end", end)))
        params += sort_params(sort_options)
        return self._list(self._request("tournaments", params, extra), Tournament, resume, raw)

    @overload
    def matches(
        self,
        tournament: Id,
        *,
        round_number: int | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Match]: ...
    @overload
    def matches(
        self,
        tournament: Id,
        *,
        round_number: int | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[Match]]: ...
    def matches(
        self,
        tournament: Id,
        *,
        round_number: int | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Match] | AsyncList[RawRecord[Match]]:
        """Matches of a tournament, optionally of one round."""
        params: list[Param] = []
        if round_number is not None:
            params.append(("roundNumber", q.integer("round_number", round_number, low=0)))
        params += sort_params(sort_options)
        req = self._request(f"matches/{id_path('tournament', tournament)}", params, extra)
        return self._list(req, Match, resume, raw)

    @overload
    def ast(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PlayerAst]: ...
    @overload
    def ast(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[PlayerAst]]: ...
    def ast(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PlayerAst] | AsyncList[RawRecord[PlayerAst]]:
        """Players' average shot times in a tournament (or its season with ``for_season``)."""
        return self._list(
            self._season_request("ast", tournament, for_season, sort_options, extra),
            PlayerAst,
            resume,
            raw,
        )

    @overload
    def centuries(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Break]: ...
    @overload
    def centuries(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[Break]]: ...
    def centuries(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Break] | AsyncList[RawRecord[Break]]:
        """Century breaks of a tournament (or its season with ``for_season``)."""
        return self._list(
            self._season_request("centuries", tournament, for_season, sort_options, extra),
            Break,
            resume,
            raw,
        )

    def _season_request(
        self,
        suffix: str,
        tournament: Id,
        for_season: bool | None,
        sort_options: Any,
        extra: RequestOptions,
    ) -> Request:
        params: list[Param] = []
        if for_season is not None:
            params.append(("forSeason", q.boolean("for_season", for_season)))
        params += sort_params(sort_options)
        return self._request(f"{suffix}/{id_path('tournament', tournament)}", params, extra)

    @overload
    def tournament_players(
        self,
        tournament: Id,
        *,
        sort_options: SortOptions | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer]: ...
    @overload
    def tournament_players(
        self,
        tournament: Id,
        *,
        sort_options: SortOptions | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[TournamentPlayer]]: ...
    def tournament_players(
        self,
        tournament: Id,
        *,
        sort_options: SortOptions | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer] | AsyncList[RawRecord[TournamentPlayer]]:
        """Players entered in a tournament. The external path types ``sort_options`` as a bool."""
        path = id_path("tournament", tournament)
        params = sort_params(sort_options, boolean=path.startswith("external/"))
        return self._list(
            self._request(f"tournament-players/{path}", params, extra),
            TournamentPlayer,
            resume,
            raw,
        )

    @overload
    def tour_players(
        self,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer]: ...
    @overload
    def tour_players(
        self,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[TournamentPlayer]]: ...
    def tour_players(
        self,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer] | AsyncList[RawRecord[TournamentPlayer]]:
        """Players of the tour."""
        req = self._request("tour-players", sort_params(sort_options), extra)
        return self._list(req, TournamentPlayer, resume, raw)

    @overload
    async def current_tournament_winner(
        self,
        tournament: Id,
        *,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> PlayerProfile: ...
    @overload
    async def current_tournament_winner(
        self,
        tournament: Id,
        *,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> RawRecord[PlayerProfile]: ...
    async def current_tournament_winner(
        self,
        tournament: Id,
        *,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> PlayerProfile | RawRecord[PlayerProfile]:
        """The current winner of a tournament.

        NotFoundError if the service answers 404; NoRecordError if it answers with an
        empty ``data`` (null or ``[]``). ``raw=True``: a ``RawRecord(profile, json)``.
        """
        req = self._request(
            f"current-tournament-winner/{id_path('tournament', tournament)}", extra=extra
        )
        result: PlayerProfile | RawRecord[PlayerProfile] = await self._single(
            req, PlayerProfile, raw
        )
        return result

    @overload
    def previous_tournament_winners(
        self,
        tournament: Id,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PreviousWinner]: ...
    @overload
    def previous_tournament_winners(
        self,
        tournament: Id,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[PreviousWinner]]: ...
    def previous_tournament_winners(
        self,
        tournament: Id,
        *,
        sort_options: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PreviousWinner] | AsyncList[RawRecord[PreviousWinner]]:
        """Earlier winners of a tournament."""
        req = self._request(
            f"previous-tournament-winner/{id_path('tournament', tournament)}",
            sort_params(sort_options),
            extra,
        )
        return self._list(req, PreviousWinner, resume, raw)

    @overload
    async def player_info(
        self,
        player: Id,
        tournament: Id,
        *,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> PlayerImage: ...
    @overload
    async def player_info(
        self,
        player: Id,
        tournament: Id,
        *,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> RawRecord[PlayerImage]: ...
    async def player_info(
        self,
        player: Id,
        tournament: Id,
        *,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> PlayerImage | RawRecord[PlayerImage]:
        """A player's image (``file_content`` holds the decoded bytes).

        Both ids are numeric, or both external. NotFoundError if the service answers
        404; NoRecordError if it answers with an empty ``data`` (null or ``[]``).
        ``raw=True``: a ``RawRecord(image, json)``.
        """
        p, t = id_path("player", player), id_path("tournament", tournament)
        if p.startswith("external/") != t.startswith("external/"):
            raise ValueError("player, tournament: pass two int ids or two external ids")
        suffix = f"external/{p[9:]}/{t[9:]}" if p.startswith("external/") else f"{p}/{t}"
        result: PlayerImage | RawRecord[PlayerImage] = await self._single(
            self._request(f"player-info/{suffix}", extra=extra), PlayerImage, raw
        )
        return result
