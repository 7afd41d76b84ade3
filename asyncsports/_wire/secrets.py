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
- the password of any URL (``user:password@host``).

**Their forms**: verbatim, percent-encoded either way (``quote``, ``quote_plus``; upper and
lower case hex), JSON-escaped (with and without ``\\/``, and ASCII-only), and base64 of the
value alone (standard and URL-safe, with and without padding). A value under
:data:`SHORTEST` characters is not looked for in free text (it would match ordinary
words); found by its name it is hidden whatever its length.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

__all__ = [
    "EDGE",
    "HIDDEN",
    "SHORTEST",
    "Secrets",
    "forms",
    "hide_url",
    "hide_urls",
    "is_credential",
]

HIDDEN = "***"
"""What a secret is shown as."""

SHORTEST = 8
"""The shortest value looked for in free text."""

EDGE = 6
"""A clipped text (an error's snippet) may hold only the start or the end of a secret: that
many characters of one, or more, at the very end or start of a text are hidden too."""

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
    for escaped in (msgspec.json.encode(value).decode()[1:-1], json.dumps(value)[1:-1]):
        found.add(escaped)
        found.add(escaped.replace("/", "\\/"))
    raw = value.encode("utf-8", "surrogatepass")
    for b64 in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        found.add(b64)
        found.add(b64.rstrip("="))
    return found


# A query pair ("name=value" after ?, &, ; or a blank) and a URL's password, in a URL or
# in a text quoting URLs. The hint skips the substitutions for a text that cannot hold one.
# A value runs to the next "&", "#", blank, double quote or backslash; a single quote
# ends it only where it closes a quoted URL (followed by a blank, ")", "]", "," or the end).
_PAIR = re.compile(
    r"(?P<lead>^|[?&;\s])(?P<name>[^=&;#\s?'\"<>]+)="
    r"(?P<value>(?:[^&#\s'\"<>\\]|'(?=[^\s)\],&#]))*)"
)
_PASSWORD = re.compile(r"(?P<lead>//[^/\s:@?#]*:)[^/\s?#]+@")
_HINT = re.compile(r"(?i)auth|token|secret|pass|pwd|key|sig|cookie|session|credential|%|@")


def _pair(match: re.Match[str]) -> str:
    name = match["name"]
    if match["value"] and is_credential(urllib.parse.unquote_plus(name)):
        return f"{match['lead']}{name}={HIDDEN}"
    return match.group()


_SEEN: dict[str, bool] = {}
""":func:`is_credential` of the query names met, for :func:`hide_url`."""


def hide_url(url: str) -> str:
    """:func:`hide_urls` of one URL, quick when it holds no secret (every request's URL
    goes through it: 0.8 us for three parameters, where the text scan takes 8)."""
    base, _, query = url.partition("?")
    if "@" in base:
        return hide_urls(url)
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
    """``text`` (a URL, or a message quoting some) with URL passwords and the values of
    credential query parameters (:func:`is_credential`) as :data:`HIDDEN`."""
    if _HINT.search(text) is None:
        return text
    text = _PASSWORD.sub(rf"\g<lead>{HIDDEN}@", text)
    return _PAIR.sub(_pair, text)


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
            for n in range(len(value) - 1, EDGE - 1, -1):
                if text.endswith(value[:n]):
                    text = text[:-n] + HIDDEN
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
            except msgspec.DecodeError:  # a hidden URL value cut a JSON string: keep it as text
                return cleaned
        return value
