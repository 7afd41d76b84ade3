"""Action records (api-spec 2.3): a fixture's timeline, each with a summary of the fixture.

The metadata of an action depends on its type. It is kept as the raw JSON of the wire
(``msgspec.Raw``: no cost while decoding a long timeline) and decoded on each access of
:attr:`FixtureAction.metadata`; bind it to a local when it is used more than once.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Final, TypeAlias, TypeVar, overload

import msgspec
from msgspec import Struct, field

from asyncsports._wire.decoding import FAILURES, Source, body_error, type_name
from asyncsports.models._types import Ref, TeamRef, decoder, flag, utc

__all__ = [
    "Action",
    "ActionType",
    "ActionTypeName",
    "ClockState",
    "CollectionStatus",
    "CurrentStatus",
    "DeviceLocation",
    "FixtureAction",
    "FixtureSummary",
    "LineupPlayer",
    "Lineups",
    "MatchConditions",
    "Metadata",
    "Period",
    "PitchConditions",
    "SendType",
    "SendTypeId",
    "ShotPosition",
    "TeamColours",
    "ThreePointShot",
    "WeatherConditions",
]

T = TypeVar("T")


class ActionType:
    """Known ``fixture_action_type_id`` values (the field is a plain int)."""

    MATCH_CONDITIONS: Final = 1
    TEAM_COLOURS: Final = 2
    LINEUPS: Final = 3
    START_FIXTURE: Final = 4
    START_PERIOD: Final = 6
    START_CLOCK: Final = 8
    DEVICE_LOCATION: Final = 19
    POST_MATCH_CHECK_COMPLETE: Final = 21
    THREE_POINT_SHOT: Final = 233


class ActionTypeName:
    """Known ``fixture_action_type`` names (the field is a plain str)."""

    MATCH_CONDITIONS: Final = "Match Conditions"
    TEAM_COLOURS: Final = "Team Colours"
    LINEUPS: Final = "Lineups"
    START_FIXTURE: Final = "Start Fixture"
    START_PERIOD: Final = "Start Period"
    START_CLOCK: Final = "Start Clock"
    DEVICE_LOCATION: Final = "Device Location"
    POST_MATCH_CHECK_COMPLETE: Final = "Post Match Check Complete"
    THREE_POINT_SHOT: Final = "3PT Shot"


class SendType:
    """Known ``send_type`` values (the field is a plain str; others occur, e.g. deletions)."""

    PENDING: Final = "Pending"
    UPDATED: Final = "Updated"
    CONFIRMED: Final = "Confirmed"


class SendTypeId:
    """Known ``send_type_id`` values (the field is a plain int)."""

    PENDING: Final = 1
    UPDATED: Final = 2
    CONFIRMED: Final = 5


class CurrentStatus:
    """Known ``FixtureSummary.current_status`` values (the field is a plain str)."""

    SCHEDULED: Final = "Scheduled"
    LINEUPS: Final = "LineUps"
    LIVE: Final = "Live"
    COMPLETED: Final = "Completed"


class CollectionStatus:
    """Known ``collection_status`` values (fixture and summary; the field is a plain str).

    The way to spot a coverage drop: ``COLLECTION_SUSPENDED`` or ``COLLECTION_DROPPED``
    during a match (the summary's ``reason``/``reason_id`` may say why).
    """

    COLLECTION_SCHEDULED: Final = "CollectionScheduled"
    COLLECTING_LIVE: Final = "CollectingLive"
    COLLECTING_POST_MATCH: Final = "CollectingPostMatch"
    COLLECTION_SUSPENDED: Final = "CollectionSuspended"
    COLLECTION_DROPPED: Final = "CollectionDropped"
    COLLECTION_COMPLETED: Final = "CollectionCompleted"
    POST_MATCH_CHECKED: Final = "PostMatchChecked"


class ClockState:
    """Known ``FixtureSummary.current_clock_state`` values (a plain str; case varies on the wire)."""

    RUNNING: Final = "running"
    STOPPED: Final = "stopped"


# --------------------------------------------------------------------------- metadata


class TeamColours(Struct, gc=False, kw_only=True, rename="camel"):
    """Metadata of Team Colours (type 2): each colour is the text ``"R, G, B"``."""

    away_team_colour: str | None = None
    home_team_colour: str | None = None


class PitchConditions(Struct, gc=False, kw_only=True):
    """Pitch conditions, as integer codes."""

    quality: int | None = None
    surface: int | None = None


class WeatherConditions(Struct, gc=False, kw_only=True):
    """Weather conditions, as integers."""

    rain: int | None = None
    wind: int | None = None
    temperature: int | None = None


class MatchConditions(Struct, gc=False, kw_only=True, rename="camel"):
    """Metadata of Match Conditions (type 1)."""

    pitch_conditions: PitchConditions | None = None
    weather_conditions: WeatherConditions | None = None


class DeviceLocation(Struct, gc=False, kw_only=True):
    """Metadata of Device Location (type 19): where the scoring device is."""

    latitude: float | None = None
    longitude: float | None = None


class LineupPlayer(Struct, gc=False, kw_only=True, rename="camel"):
    """A player in a lineup; ``first_name`` may be null, ``shirt_number`` is text."""

    id: uuid.UUID
    full_name: str | None = None
    last_name: str | None = None
    first_name: str | None = None
    shirt_number: str | None = None


class Lineups(Struct, gc=False, kw_only=True, rename="camel"):
    """Metadata of Lineups (type 3): one team's starting lineup and substitutes."""

    team_id: uuid.UUID | None = None
    substitutes: list[LineupPlayer] = []
    starting_lineup: list[LineupPlayer] = []


class ShotPosition(Struct, gc=False, kw_only=True):
    """Where on the court a shot was taken."""

    x: float | None = None
    y: float | None = None
    zone: str | None = None


class ThreePointShot(Struct, gc=False, kw_only=True, rename="camel"):
    """Metadata of 3PT Shot (type 233)."""

    court_position: ShotPosition | None = None


Metadata: TypeAlias = (
    TeamColours | MatchConditions | DeviceLocation | Lineups | ThreePointShot | dict[str, Any]
)
"""What :attr:`FixtureAction.metadata` returns (or None)."""

_METADATA_BY_ID: dict[int, type[Struct]] = {
    ActionType.MATCH_CONDITIONS: MatchConditions,
    ActionType.TEAM_COLOURS: TeamColours,
    ActionType.LINEUPS: Lineups,
    ActionType.DEVICE_LOCATION: DeviceLocation,
    ActionType.THREE_POINT_SHOT: ThreePointShot,
}
_METADATA_BY_NAME: dict[str, type[Struct]] = {
    ActionTypeName.MATCH_CONDITIONS: MatchConditions,
    ActionTypeName.TEAM_COLOURS: TeamColours,
    ActionTypeName.LINEUPS: Lineups,
    ActionTypeName.DEVICE_LOCATION: DeviceLocation,
    ActionTypeName.THREE_POINT_SHOT: ThreePointShot,
}
_METADATA_PATH = "$.fixtureAction.metadata"


def _lower_keys(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k[:1].lower() + k[1:]: _lower_keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_lower_keys(v) for v in obj]
    return obj


def _capitalised(buf: bytes) -> bool:
    """Whether the first key of the JSON object ``buf`` starts upper case (version 1)."""
    body = buf.lstrip()
    if body[:1] != b"{":
        return False
    q = body.find(b'"')
    return q >= 0 and body[q + 1 : q + 2].isupper()


# --------------------------------------------------------------------------- records


class FixtureAction(Struct, gc=False, kw_only=True, rename="camel", omit_defaults=True):
    """One action on a fixture's timeline.

    ``timestamp`` is aware UTC. ``metadata`` is decoded on access (see :attr:`metadata`).
    ``send_type``/``fixture_action_type`` are the service's text; any value decodes.
    ``related_fixture_action_ids`` links this action to others (a disallowed goal to its
    goal); ``delay_status`` is the service's text for an action not sent in real time.
    ``team.home_team`` says which side the team is.
    """

    action_id: uuid.UUID
    fixture_id: uuid.UUID
    fixture_seq_num: int | None = None
    timeline_sequence: float | None = None
    fixture_action_type: str | None = None
    fixture_action_type_id: int | None = None
    fixture_action_sub_type: str | None = None
    fixture_action_sub_type_id: int | None = None
    period: int | None = None
    clock_time: str | None = None
    _timestamp: datetime | None = field(name="timestamp", default=None)
    send_type: str | None = None
    send_type_id: int | None = None
    team: TeamRef | None = None
    player: Ref | None = None
    related_fixture_action_ids: tuple[uuid.UUID, ...] = ()
    delay_status: str | None = None
    _metadata: msgspec.Raw = field(name="metadata", default=msgspec.Raw())

    timestamp = utc("_timestamp")

    @property
    def metadata_type(self) -> type[Struct] | None:
        """The typed metadata Struct of this action's type, or None when it is not one of five."""
        tid = self.fixture_action_type_id
        if tid is not None:
            return _METADATA_BY_ID.get(tid)
        return _METADATA_BY_NAME.get(self.fixture_action_type or "")

    @property
    def metadata(self) -> Metadata | None:
        """The metadata, decoded now: a typed Struct for the five known types, else a dict.

        Version-1 capitalised keys (``AwayTeamColour``) are accepted for the typed ones.
        None when the action has no metadata. Raises DecodeError when it does not decode.
        """
        tp = self.metadata_type
        if tp is None:
            return self.metadata_as(dict[str, Any])
        return self.metadata_as(tp)  # type: ignore[return-value]

    @overload
    def metadata_as(self, tp: type[T]) -> T | None: ...
    @overload
    def metadata_as(self, tp: Any) -> Any: ...
    def metadata_as(self, tp: Any) -> Any:
        """Decode the metadata into ``tp`` (for types this library does not know); None if absent.

        For a Struct type, capitalised (version-1) keys are lowered first.
        """
        buf = bytes(self._metadata)
        if not buf or buf.strip() == b"null":
            return None
        try:
            if isinstance(tp, type) and issubclass(tp, Struct) and _capitalised(buf):
                buf = msgspec.json.encode(_lower_keys(msgspec.json.decode(buf)))
            try:
                return decoder(tp).decode(buf)
            except msgspec.ValidationError:
                # The live feeds quote decimals ("latitude": "63.1"): read them laxly,
                # as the live packet around them was; a real mismatch fails both ways.
                return decoder(tp, lax=True).decode(buf)
        except FAILURES as exc:
            name = type_name(tp)
            lead = (
                f"metadata of action {self.action_id} "
                f"({self.fixture_action_type_id} {self.fixture_action_type}) is not a {name}: "
            )
            raise body_error(Source(name), exc, buf, path=_METADATA_PATH, lead=lead) from exc


class Period(Struct, gc=False, kw_only=True, rename="camel"):
    """A period in a fixture summary; ``start``/``end`` are aware UTC, ``end`` None while running.

    ``*_team_score`` are cumulative, ``*_team_period_score`` this period's.
    """

    id: int
    type: str | None = None
    label: str | None = None
    _start: datetime | None = field(name="start", default=None)
    _end: datetime | None = field(name="end", default=None)
    away_team_score: int | None = None
    home_team_score: int | None = None
    away_team_period_score: int | None = None
    home_team_period_score: int | None = None

    start = utc("_start")
    end = utc("_end")


class FixtureSummary(Struct, gc=False, kw_only=True, rename="camel"):
    """The state of the fixture as of an action.

    ``current_status``, ``collection_status`` (see :class:`CollectionStatus`) and
    ``current_clock_state`` (see :class:`ClockState`) are the service's text; ``reason`` and
    ``reason_id`` say why collection paused. ``finished`` repeats the record's flag.

    :attr:`is_home_team_in_possession` reads the possession flag under either spelling the
    service uses (``isHomeTeamInPossesion`` as sent, ``isHomeTeamInPossession`` as
    documented), as a bool whether it came as a boolean or as text.
    """

    is_tied: bool | None = None
    away_team_score: int | None = None
    home_team_score: int | None = None
    current_period: int | None = None
    current_status: str | None = None
    collection_status: str | None = None
    current_clock_time: str | None = None
    current_clock_state: str | None = None
    periods: list[Period] = []
    finished: bool | None = None
    reason: str | None = None
    reason_id: int | str | None = None
    _possesion: bool | str | None = field(name="isHomeTeamInPossesion", default=None)
    _possession: bool | str | None = field(name="isHomeTeamInPossession", default=None)

    _possesion_flag = flag("_possesion")
    _possession_flag = flag("_possession")

    @property
    def is_home_team_in_possession(self) -> bool | None:
        """Whether the home team has the ball; None when the record does not say.

        The documented spelling wins when a record carries both.
        """
        documented = self._possession_flag
        return self._possesion_flag if documented is None else documented

    @property
    def is_home_team_in_possesion(self) -> bool | None:
        """The same as :attr:`is_home_team_in_possession` (the wire's spelling, kept for old code)."""
        return self.is_home_team_in_possession


class Action(Struct, gc=False, kw_only=True, rename="camel"):
    """An action record: the action and the fixture summary at that moment.

    ``finished`` is true on the record that closes the fixture. ``trace_id`` is the
    service's id of the record in its logs (quote it when reporting a problem).
    """

    fixture_action: FixtureAction
    fixture_summary: FixtureSummary | None = None
    version: int | None = None
    finished: bool = False
    trace_id: str | None = None
