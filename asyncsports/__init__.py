"""asyncsports: an asyncio client for the sports data service, the snooker proxy and the
live stream events listing."""

from asyncsports._request import Sport
from asyncsports._version import __version__
from asyncsports.auth import StreamingCredentials

__all__ = ["Sport", "StreamingCredentials", "__version__"]
