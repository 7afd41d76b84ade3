"""The secrets policy, sans I/O: what a client's secrets are, the forms a server may echo
them in, and how they are hidden. Errors, ``repr``, log records, hooks' ``RequestInfo``,
spans and recordings all hide secrets through this module; nothing else redacts.

**What is a secret** (docs/wire.md, "Secrets"):

- the client's token (also one from a callable), the stream ``auth`` (fixed or signed for
  the request) and stream secret, the live ``authToken``;
- the value of any header, query parameter or sent JSON key whose *name says credential*
  (:func:`is_credential`): ``Authorization`` and ``Proxy-Authorization`` in any case
  (and the part after ``Bearer``), ``Cookie``, ``X-Api-Key``, ``token=``, ``apiKey=``,
  ``sig=``, ``password=`` ...;
- the userinfo of any URL, in any scheme: the password of ``user:password@host`` (the
  user is kept), the whole of ``token@host`` (a NATS token, a Redis user); and the value
  of a credential parameter in a URL's query or fragment (``#access_token=``).

**Their forms**: verbatim, percent-encoded either way (``quote``, ``quote_plus``; upper and
lower case hex), as Python's ``repr`` and ``ascii`` quote it, JSON-escaped (with and
without ``\\/``, and ASCII-only), and base64 of the value alone (standard and URL-safe,
with and without padding); and each of those as the URL rule leaves it (a value holding
``//...@``). A value under :data:`SHORTEST` characters is not looked for in free text (it
would match ordinary words); found by its name it is hidden whatever its length.

**Where a URL's userinfo ends**: at the URL's *last* ``@``, so that a password may hold
any character (``/``, ``#``, ``?``, ``@``, ``:``, unicode, percent-encoded or not): the
userinfo runs from the ``//`` to the last ``@`` of the URL (:func:`hide_url`, one URL, any
character) or of its run of characters in a text quoting it (:func:`hide_urls`: a run
ends at a blank, ``"``, ``<`` or ``>``; ``\\"`` in JSON does not end it). A URL with an
``@`` in its path or query so loses more than its userinfo, never less.

**Clipped texts**: a text cut for display (an error's snippet) is cut by :func:`clip`,
which hides URL secrets before it cuts and marks the cut with :data:`CLIPPED`;
:meth:`Secrets.text` hides the head of a secret cut there (:data:`EDGE`).
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

__all__ = [
    "CLIPPED",
    "EDGE",
    "HIDDEN",
    "SHORTEST",
    "Secrets",
    "clip",
    "forms",
    "hide_url",
    "hide_urls",
    "is_credential",
    "normalize_userinfo",
    "split_userinfo",
    "url_secrets",
]

HIDDEN = "***"
"""What a secret is shown as."""

SHORTEST = 8
"""The shortest value looked for in free text."""

EDGE = 6
"""A clipped text (an error's snippet) may hold only the start or the end of a secret: that
many characters of one, or more, at the very end or start of a text are hidden too."""

CLIPPED = "..."
"""What ends a text :func:`clip` cut."""

_HIDDEN_BYTES = HIDDEN.encode()
_UNCHECKED = "(not shown: too deep to check for secrets)"

# A name says credential when, folded (lower case, letters and digits only), it is one of
# these or ends with one of the endings: "X-Auth-Token", "client_secret", "sslpassword".
_NAMES = frozenset(
    {
        "auth",
        "sig",
        "key",
        "cookie",
        "setcookie",
        "session",
        "sessionid",
        "credential",
        "credentials",
        "pwd",
        "pass",
    }
)
_ENDINGS = ("token", "secret", "password", "passwd", "apikey", "signature", "authorization")
_FOLD = re.compile(r"[^a-z0-9]")


def is_credential(name: str) -> bool:
    """Whether a header, query parameter or JSON key called ``name`` holds a credential."""
    folded = _FOLD.sub("", name.lower())
    return folded in _NAMES or folded.endswith(_ENDINGS)


def forms(value: str) -> set[str]:
    """``value`` as sent and as a server may quote it back (see the module's text)."""
    import msgspec  # here: the command's --help imports this module

    found = {value}
    for quoted in (
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote(value),
        urllib.parse.quote_plus(value),
        urllib.parse.quote_plus(value, safe="/"),
    ):
        found.add(quoted)
        found.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quoted))
    # As Python quotes it ("{value!r}" in a message), and as JSON does.
    found |= {repr(value)[1:-1], ascii(value)[1:-1]}
    for escaped in (msgspec.json.encode(value).decode()[1:-1], json.dumps(value)[1:-1]):
        found.add(escaped)
        found.add(escaped.replace("/", "\\/"))
    raw = value.encode("utf-8", "surrogatepass")
    for b64 in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        found.add(b64)
        found.add(b64.rstrip("="))
    # A value that reads as a URL's userinfo or query pair ("ab//c@d") is seen by the URL
    # rule first where a text is clipped (clip): what is left of it is a form too.
    found |= {
        shown
        for shown in map(hide_urls, found)
        if len(shown.replace(HIDDEN, "")) >= SHORTEST and shown not in found
    }
    return found


# A query pair ("name=value" after ?, &, ;, # or a blank) in a URL or in a text quoting
# URLs. A value runs to the next "&", "#", blank, double quote or backslash; a single quote
# ends it only where it closes a quoted URL (followed by a blank, ")", "]", "," or the end).
_PAIR = re.compile(
    r"(?P<lead>^|[?&;#\s])(?P<name>[^=&;#\s?'\"<>]+)="
    r"(?P<value>(?:[^&#\s'\"<>\\]|'(?=[^\s)\],&#]))*)"
)
# A URL in a text: from "//" (or JSON's "\/\/") to the end of its run (a blank, '"', "<"
# or ">"; a backslash escapes the next character); its userinfo runs to the run's last "@"
# (found by _userinfo: the match takes the whole run, so a text is scanned once).
_USERINFO = re.compile(r'(?P<lead>//|\\/\\/)(?P<rest>(?:[^\s"<>\\]|\\.)*)')
_HINT = re.compile(r"(?i)auth|token|secret|pass|pwd|key|sig|cookie|session|credential|%|@")


def _pair(match: re.Match[str]) -> str:
    name = match["name"]
    if match["value"] and is_credential(urllib.parse.unquote_plus(name)):
        return f"{match['lead']}{name}={HIDDEN}"
    return match.group()


def _hidden_info(info: str) -> str:
    """A userinfo as shown: ``user:***`` (a user that is plainly one), else ``***``."""
    user, colon, _ = info.partition(":")
    if colon and not any(c in user for c in "/?#\\"):
        return f"{user}:{HIDDEN}"
    return HIDDEN


def _userinfo(match: re.Match[str]) -> str:
    rest = match["rest"]
    at = rest.rfind("@")
    if at <= 0:
        return match.group()
    return f"{match['lead']}{_hidden_info(rest[:at])}{rest[at:]}"


def split_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without its userinfo, and the user and password it held, as written (None:
    none). The userinfo runs from the ``//`` to the URL's last ``@`` (see the module's
    text): ``redis://:my/Secret@h/0`` is ``("redis://h/0", "", "my/Secret")``,
    ``nats://TOKEN@h`` is ``("nats://h", "TOKEN", None)``. A URL with no authority
    (``unix:///tmp/s.sock``: a third ``/`` at once) has none: an ``@`` in its path or query
    is no userinfo's end."""
    start = url.find("//")
    at = url.rfind("@")
    if start < 0 or at < start + 2 or url.startswith("/", start + 2):
        return url, None, None
    user, colon, password = url[start + 2 : at].partition(":")
    return url[: start + 2] + url[at + 1 :], user, password if colon else None


def url_secrets(url: str) -> list[str]:
    """The secrets a URL's userinfo holds, for :class:`Secrets` to hide in what a library
    says of it: the password (or the user of ``token@host``), as written and decoded, and
    what a reader that splits it at one of ``/ ? # @ : [ ]`` may quote (a port, a path, a
    query, a bracketed host): each part of it from and to one of those (for a userinfo
    of up to :data:`_CUTS` of them; beyond, its heads and tails)."""
    _, user, password = split_userinfo(url)
    found = [v for v in (password, user if password is None else None) if v]
    found += [urllib.parse.unquote(v) for v in found]
    found += [urllib.parse.unquote_plus(v) for v in found]
    parts: set[str] = set()
    for value in set(found):
        cuts = sorted({i + k for m in _CUT.finditer(value) for i in [m.start()] for k in (0, 1)})
        ends = [0, *cuts, len(value)]
        if len(cuts) > 2 * _CUTS:
            parts |= {value[:i] for i in ends} | {value[i:] for i in ends}
            continue
        parts |= {value[i:j] for i in ends for j in ends if j - i >= SHORTEST}
    return [*found, *sorted(parts)]


_CUT = re.compile(r"[/?#@:\[\]]")
_CUTS = 24


def normalize_userinfo(url: str) -> str:
    """``url`` with its userinfo (:func:`split_userinfo`) percent-encoded where a reader
    that splits the URL first (``urllib.parse.urlsplit``, redis-py) would misread it:
    where the host it finds has a port that is no number, or no name, or one of other
    characters than letters, digits and ``.-_``, or an ``@`` follows in its path, fragment
    or the name of a query parameter (``redis://:my/Secret@h``, ``nats://u:p#w@h``). A ``%XX`` escape is kept, any
    other character (``/``, ``#``, ``?``, ``@``, ``:``, ``%`` alone, unicode) encoded, so
    that ``unquote`` reads the user and password back. Any other URL is returned as it
    is: ``redis://h/0?a=b@c`` has no userinfo, ``redis://u:12/x@h`` is host ``u`` (a user
    name holding ``/``, ``?`` or ``#``, or a password starting with digits then one of
    them, must be percent-encoded by hand)."""
    bare, user, password = split_userinfo(url)
    if user is None or not _misread(url):
        return url
    start = bare.find("//") + 2

    def encode(part: str) -> str:
        quoted = urllib.parse.quote(part, safe="%!$&'()*+,;=")
        return re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", quoted)

    info = encode(user) + ("" if password is None else ":" + encode(password))
    return f"{bare[:start]}{info}@{bare[start:]}"


def _misread(url: str) -> bool:
    """Whether ``urlsplit`` reads ``url``'s host wrong (see :func:`normalize_userinfo`)."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (a port that is no number raises)
    except ValueError:  # that, or "[" in what it takes for the host
        return True
    host = parts.hostname or ""
    named = all(c.isalnum() or c in ".-_" or (c == ":" and "[" in parts.netloc) for c in host)
    # An "@" in a query's name (not its value: "?a=b@c") is a password's, read as a query.
    keyed = any("@" in pair.partition("=")[0] for pair in parts.query.split("&"))
    return not host or not named or keyed or "@" in parts.path or "@" in parts.fragment


_SEEN: dict[str, bool] = {}
""":func:`is_credential` of the query names met, for :func:`hide_url`."""


def hide_url(url: str) -> str:
    """One URL with its secrets hidden (see the module's text: its userinfo, whatever
    characters it holds, and the values of credential parameters), quick when it holds no
    secret (every request's URL goes through it: 0.8 us for three parameters, where the
    text scan takes 8)."""
    bare, user, password = split_userinfo(url)
    if user is not None:
        start = bare.find("//") + 2
        info = user if password is None else f"{user}:{password}"
        url = f"{bare[:start]}{_hidden_info(info)}@{bare[start:]}"
        return _PAIR.sub(_pair, url)
    if "@" in url:
        return hide_urls(url)
    _, _, query = url.partition("?")
    if "#" in url:
        query = query.replace("#", "&") if query else url.partition("#")[2]
    if query:
        for pair in query.split("&"):
            name, _, value = pair.partition("=")
            known = _SEEN.get(name)
            if known is None:
                known = is_credential(urllib.parse.unquote_plus(name))
                if len(_SEEN) < 4096:  # names come from the code, not from servers
                    _SEEN[name] = known
            if known and value:
                return hide_urls(url)
    return url


def hide_urls(text: str) -> str:
    """``text`` (a URL, or a message quoting some) with URL userinfo and the values of
    credential query and fragment parameters (:func:`is_credential`) as :data:`HIDDEN`."""
    if _HINT.search(text) is None:
        return text
    if "@" in text:
        text = _USERINFO.sub(_userinfo, text)
    return _PAIR.sub(_pair, text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters for display, its URL secrets hidden first (a
    cut URL would not show where its userinfo ends), the cut marked with :data:`CLIPPED`
    (so that :meth:`Secrets.text` hides the head of a client's secret cut there)."""
    text = hide_urls(text)
    if len(text) <= limit:
        return text
    return text[: limit - len(CLIPPED)] + CLIPPED


# A JSON member whose value is a string: hidden when its name says credential, at any depth.
_JSON_PAIR = re.compile(r'"(?P<name>[^"\\]{1,64})":"(?P<value>(?:[^"\\]|\\.)*)"')


def _json_pair(match: re.Match[str]) -> str:
    if match["value"] and is_credential(match["name"]):
        return f'"{match["name"]}":"{HIDDEN}"'
    return match.group()


E = TypeVar("E", bound=BaseException)


class Secrets:
    """A set of secret values in every form, and their removal from what is shown or kept.

    Built with the client's own secrets; :meth:`learn` adds one met later (a query's
    credential, a bearer header, a sent ``authToken``).
    """

    __slots__ = ("_bytes", "values")

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self.values: tuple[str, ...] = ()
        self._bytes: tuple[bytes, ...] = ()
        self.learn(*values)

    def learn(self, *values: str | None) -> None:
        """Remember ``values`` (None, or one under :data:`SHORTEST` characters, is skipped)."""
        found = set(self.values)
        for value in values:
            if not isinstance(value, str):
                continue
            scheme, _, credential = value.partition(" ")
            # "Bearer <token>", "Basic <...>": the credential alone is a secret too.
            parts = (value, credential.strip()) if scheme.isalpha() else (value,)
            for part in parts:
                if len(part) >= SHORTEST:
                    found |= forms(part)
        if len(found) != len(self.values):
            # Longest first: a secret that contains another is hidden whole.
            self.values = tuple(sorted(found, key=len, reverse=True))
            self._bytes = tuple(v.encode("utf-8", "surrogatepass") for v in self.values)

    def with_(self, *more: str | None) -> Secrets:
        """A copy that knows ``more`` too."""
        copy = Secrets()
        copy.values, copy._bytes = self.values, self._bytes
        copy.learn(*more)
        return copy

    @property
    def longest(self) -> int:
        """The length of the longest form in bytes (0: none)."""
        return len(self._bytes[0]) if self._bytes else 0

    def text(self, text: str) -> str:
        """``text`` with every form of every secret (and a clipped one at either end) and
        every URL secret (:func:`hide_urls`) as :data:`HIDDEN`."""
        for value in self.values:
            if value in text:
                text = text.replace(value, HIDDEN)
            # The head of a secret at the end, or just before the mark of a clip.
            end = len(text) - len(CLIPPED) if text.endswith(CLIPPED) else len(text)
            for n in range(len(value) - 1, EDGE - 1, -1):
                if text.endswith(value[:n], 0, end):
                    text = text[: end - n] + HIDDEN + text[end:]
                    break
            for n in range(len(value) - 1, EDGE - 1, -1):
                if text.startswith(value[-n:]):
                    text = HIDDEN + text[n:]
                    break
        return hide_urls(text)

    def bytes(self, data: bytes) -> bytes:
        """``data`` (a body's piece, a message) with every form of every secret hidden."""
        for value in self._bytes:
            if value in data:
                data = data.replace(value, _HIDDEN_BYTES)
        return data

    def pairs(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """Query pairs or headers: a credential's value learnt and hidden, others scrubbed."""
        out = []
        for name, value in pairs:
            if is_credential(name):
                self.learn(value)
                out.append((name, HIDDEN))
            else:
                out.append((name, self.text(value)))
        return out

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """:meth:`pairs` of a mapping of headers, as a dict."""
        return dict(self.pairs(headers.items()))

    def sent(self, text: str) -> str:
        """A message the client sends: a JSON object's credential keys hidden (and learnt),
        anything else scrubbed."""
        import msgspec  # here: the command's --help imports this module

        try:
            doc = msgspec.json.decode(text)
        except msgspec.DecodeError:
            return self.text(text)
        if isinstance(doc, dict) and any(is_credential(k) for k in doc):
            for k in doc:
                if is_credential(k):
                    self.learn(str(doc[k]))
                    doc[k] = HIDDEN
            return self.text(msgspec.json.encode(doc).decode())
        return self.text(text)

    def scrub(self, error: E) -> E:
        """``error`` with the secrets hidden in its args and every text it keeps; in place."""
        # Only what holds a secret is set: an error is otherwise left as built.
        args = tuple(self._clean(a) for a in error.args)
        if any(a is not b for a, b in zip(args, error.args, strict=True)):
            error.args = args
        for name, value in list(vars(error).items()):
            cleaned = self._clean(value)
            if cleaned is not value:
                setattr(error, name, cleaned)
        return error

    def _clean(self, value: Any) -> Any:
        import msgspec  # here: the command's --help imports this module

        if isinstance(value, str):
            cleaned = self.text(value)
            return value if cleaned == value else cleaned
        if isinstance(value, Mapping | list | tuple):
            # A body may nest deeper than recursion goes: look through its JSON instead.
            try:
                data = msgspec.json.encode(dict(value) if isinstance(value, Mapping) else value)
            except (TypeError, RecursionError, msgspec.EncodeError):
                # Too deep to look through: not kept, since it cannot be checked.
                return _UNCHECKED
            text = data.decode()
            cleaned = text
            for secret in self.values:
                cleaned = cleaned.replace(msgspec.json.encode(secret).decode()[1:-1], HIDDEN)
            cleaned = _JSON_PAIR.sub(_json_pair, hide_urls(cleaned))
            if cleaned == text:
                return value
            try:
                return msgspec.json.decode(cleaned)
            # No rule here cuts a JSON string (a URL in a text ends at '"'): kept in case.
            except msgspec.DecodeError:  # pragma: no cover  (kept as text, in case)
                return cleaned
        return value
