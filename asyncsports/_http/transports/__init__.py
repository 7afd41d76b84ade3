"""The transports under the session: :mod:`.base` holds the seam's protocols only;
:mod:`.aiohttp` (the default, websockets from :mod:`.picows`), :mod:`.pyreqwest` and
:mod:`.record` (which wraps another) fill it. Public as :mod:`asyncsports.transports`."""
