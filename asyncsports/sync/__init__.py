"""``asyncsports.sync``: a database mirror kept current, with a change feed.

::

    async with Client(base_url, token=token, rate_limit=5) as client:
        mirror = Mirror(client, "sports.sqlite", sports=["basketball"])
        runner = asyncio.create_task(mirror.run())
        async for change in mirror.changes(consumer="my-app"):
            print(change.seq, change.op, change.table, change.key)

:class:`Mirror` follows fixtures in a window around now, live fixtures' actions, each
ended fixture's actions and statistics (once), standings after a match ends, squads
daily, live stream events every 30 s and snooker tournaments daily, at the cadences of
:data:`DEFAULT_EVERY` (overridable), within the client's ``rate_limit``. Writes are
transactions that only change rows whose content changed; each change is logged and
served by :meth:`Mirror.changes` in commit order, resumable by cursor. The database is a
SQLite file or a ``postgresql://`` URL; :func:`feed` follows any mirror database's changes
from another process (on PostgreSQL, woken by each commit's ``NOTIFY``);
:class:`Publisher` (of :mod:`asyncsports.bus`, named here too) puts that feed on a bus
(Redis Streams, NATS JetStream), each change once, in commit order.
"""

from asyncsports.bus import Publisher
from asyncsports.store import MIRROR_COLUMNS as TABLES
from asyncsports.store import MIRROR_KEYS as KEYS
from asyncsports.store import ChangeLog, MirrorStore, RowChange, open_changes, open_mirror
from asyncsports.sync._changes import feed
from asyncsports.sync._jobs import ActionFeed, StatisticsFeed
from asyncsports.sync._mirror import ALL_SPORTS, Mirror
from asyncsports.sync._plan import DEFAULT_EVERY, PRIORITY, parse_every
from asyncsports.sync._standby import Standby

__all__ = [
    "ALL_SPORTS",
    "DEFAULT_EVERY",
    "KEYS",
    "PRIORITY",
    "TABLES",
    "ActionFeed",
    "ChangeLog",
    "Mirror",
    "MirrorStore",
    "Publisher",
    "RowChange",
    "Standby",
    "StatisticsFeed",
    "feed",
    "open_changes",
    "open_mirror",
    "parse_every",
]
