"""The snooker proxy: tournaments, matches, players, centuries, winners and images.

An ``int`` id addresses the numeric path; a ``str`` or ``uuid.UUID`` the ``external/`` one.
Every body is wrapped in ``data``, which holds an array or one record. Every method takes
``extra_query`` and ``extra_headers`` (see :class:`~asyncsports.RequestOptions`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any, TypeVar, Unpack, cast

from asyncsports._http import request as arg
from asyncsports._http.request import Param, Request, RequestOptions
from asyncsports._http.session import Response, Session
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
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.raw import RawRecord, elements
from asyncsports.resources._base import Body, Resource, renamed, traced

T = TypeVar("T")
Id = int | str | uuid.UUID
SortOptions = str | Sequence[str] | bool


def id_path(name: str, value: Id) -> str:
    """``123`` for an int id, ``external/<id>`` for a str or UUID."""
    if isinstance(value, bool) or not isinstance(value, int | str | uuid.UUID):
        raise TypeError(f"{name}: expected an int or an external id (str or UUID), got {value!r}")
    if isinstance(value, int):
        return arg.integer(name, value, low=0)
    return f"external/{arg.segment(name, value)}"


def sort_params(sort: SortOptions | None, *, boolean: bool = False) -> list[Param]:
    """``sortOptions``: repeated strings, or ``true``/``false`` where the endpoint types it boolean."""
    if sort is None:
        return []
    if isinstance(sort, bool):
        if not boolean:
            raise TypeError("sort: a bool is accepted only by tournament_players(external id)")
        return [("sortOptions", arg.boolean("sort", sort))]
    return arg.sort_params("sort", sort, wire="sortOptions")


def _records(body: Data[Any]) -> list[Any]:
    data = body.data
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


class SnookerResource(Resource):
    """``client.snooker``: the snooker proxy under ``/snooker/{feed}``.

    A listing's ``sort`` is the proxy's ``sortOptions``: ``"field"`` or ``"field,desc"``,
    or a sequence of such (``sort_options=`` is its deprecated old name, until 0.3).
    """

    def __init__(self, session: Session, feed: str) -> None:
        super().__init__(session)
        self._prefix = f"/snooker/{arg.segment('snooker_feed', feed)}"

    def _request(
        self, suffix: str, params: Sequence[Param] = (), extra: RequestOptions | None = None
    ) -> Request:
        """The request of ``suffix``, with a method's ``extra_query`` and ``extra_headers``.

        Its route keeps the endpoint's name and ``external``; every other segment is an id.
        """
        name, *ids = suffix.split("/")
        route = "/".join(
            ["/snooker/{feed}", name, *(i if i == "external" else "{id}" for i in ids)]
        )
        req = Request(f"{self._prefix}/{suffix}", tuple(params), route=route)
        return arg.options(req, extra or {})

    def _list(self, req: Request, tp: type[T], resume: ResumeToken | str | None) -> AsyncList[Any]:
        return self._stream_list(req, tp, key="data", resume=resume)

    @traced
    def tournaments(
        self,
        *,
        season_id: int | None = None,
        start: dt.date | str | None = None,
        end: dt.date | str | None = None,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Tournament]:
        """Tournaments, optionally of one season or between ``start`` and ``end``."""
        params: list[Param] = []
        if season_id is not None:
            params.append(("seasonId", arg.integer("season_id", season_id, low=0)))
        if start is not None:
            params.append(("start", arg.date("start", start)))
        if end is not None:
            params.append(("end", arg.date("end", end)))
        params += sort_params(renamed("sort", sort, "sort_options", sort_options))
        return self._list(self._request("tournaments", params, extra), Tournament, resume)

    @traced
    def matches(
        self,
        tournament: Id,
        *,
        round_number: int | None = None,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Match]:
        """Matches of a tournament, optionally of one round."""
        params: list[Param] = []
        if round_number is not None:
            params.append(("roundNumber", arg.integer("round_number", round_number, low=0)))
        params += sort_params(renamed("sort", sort, "sort_options", sort_options))
        req = self._request(f"matches/{id_path('tournament', tournament)}", params, extra)
        return self._list(req, Match, resume)

    @traced
    def ast(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PlayerAst]:
        """Players' average shot times in a tournament (or its season with ``for_season``)."""
        sort = renamed("sort", sort, "sort_options", sort_options)
        return self._season_list("ast", PlayerAst, tournament, for_season, sort, resume, extra)

    @traced
    def centuries(
        self,
        tournament: Id,
        *,
        for_season: bool | None = None,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Break]:
        """Century breaks of a tournament (or its season with ``for_season``)."""
        sort = renamed("sort", sort, "sort_options", sort_options)
        return self._season_list("centuries", Break, tournament, for_season, sort, resume, extra)

    def _season_list(
        self,
        suffix: str,
        tp: type[T],
        tournament: Id,
        for_season: bool | None,
        sort: SortOptions | None,
        resume: ResumeToken | str | None,
        extra: RequestOptions,
    ) -> AsyncList[T]:
        """A listing of a tournament, or of its season with ``for_season`` (ast, centuries)."""
        params: list[Param] = []
        if for_season is not None:
            params.append(("forSeason", arg.boolean("for_season", for_season)))
        params += sort_params(sort)
        req = self._request(f"{suffix}/{id_path('tournament', tournament)}", params, extra)
        return self._list(req, tp, resume)

    @traced
    def tournament_players(
        self,
        tournament: Id,
        *,
        sort: SortOptions | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: SortOptions | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer]:
        """Players entered in a tournament. The external path types ``sort`` as a bool."""
        path = id_path("tournament", tournament)
        params = sort_params(
            renamed("sort", sort, "sort_options", sort_options),
            boolean=path.startswith("external/"),
        )
        return self._list(
            self._request(f"tournament-players/{path}", params, extra),
            TournamentPlayer,
            resume,
        )

    @traced
    def tour_players(
        self,
        *,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[TournamentPlayer]:
        """Players of the tour."""
        req = self._request(
            "tour-players", sort_params(renamed("sort", sort, "sort_options", sort_options)), extra
        )
        return self._list(req, TournamentPlayer, resume)

    @traced
    async def current_tournament_winner(
        self,
        tournament: Id,
        **extra: Unpack[RequestOptions],
    ) -> PlayerProfile:
        """The current winner of a tournament.

        NotFoundError if the service answers 404; NoRecordError if it answers with an
        empty ``data`` (null or ``[]``).
        """
        req = self._request(
            f"current-tournament-winner/{id_path('tournament', tournament)}", extra=extra
        )
        return await self._one(req, _WINNER)

    @traced
    def previous_tournament_winners(
        self,
        tournament: Id,
        *,
        sort: str | Sequence[str] | None = None,
        resume: ResumeToken | str | None = None,
        sort_options: str | Sequence[str] | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[PreviousWinner]:
        """Earlier winners of a tournament."""
        req = self._request(
            f"previous-tournament-winner/{id_path('tournament', tournament)}",
            sort_params(renamed("sort", sort, "sort_options", sort_options)),
            extra,
        )
        return self._list(req, PreviousWinner, resume)

    @traced
    async def player_info(
        self,
        player: Id,
        tournament: Id,
        **extra: Unpack[RequestOptions],
    ) -> PlayerImage:
        """A player's image (``file_content`` holds the decoded bytes).

        Both ids are numeric, or both external. NotFoundError if the service answers
        404; NoRecordError if it answers with an empty ``data`` (null or ``[]``).
        """
        p, t = id_path("player", player), id_path("tournament", tournament)
        if p.startswith("external/") != t.startswith("external/"):
            raise ValueError("player, tournament: pass two int ids or two external ids")
        suffix = f"external/{p[9:]}/{t[9:]}" if p.startswith("external/") else f"{p}/{t}"
        return await self._one(self._request(f"player-info/{suffix}", extra=extra), _IMAGE)


class _One(Body[T]):
    """The one record in a body's ``data`` (of type ``tp``); NoRecordError when there is none.

    A 404 from the service is a NotFoundError (from the session); a successful answer
    whose ``data`` is null or ``[]`` is a NoRecordError, since the service did not say
    the thing does not exist, only sent nothing. Paired, its JSON is that of the record
    in ``data``.
    """

    __slots__ = ()

    def __init__(self, tp: type[T]) -> None:
        super().__init__(Data[tp | list[tp] | None])  # type: ignore[valid-type]

    def __call__(self, resp: Response) -> T:
        body = cast(Data[Any], super().__call__(resp))
        records = _records(body)
        if not records:
            shown = "null" if body.data is None else "[]"
            raise NoRecordError(
                f"the body held no record: 'data' was {shown}", status=resp.status, url=resp.url
            )
        record: T = records[0]
        return record

    def paired(self, resp: Response) -> RawRecord[T]:
        return RawRecord(self(resp), elements(resp.body, "data")[0])


_WINNER = _One(PlayerProfile)
_IMAGE = _One(PlayerImage)
