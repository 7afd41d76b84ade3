"""Text as a person reads it on a terminal: what a program echoes of its input (a path, a
name, a URL) with its control characters escaped. Pure: no I/O."""

from __future__ import annotations

import re

__all__ = ["printable"]

# C0 and C1 controls and DEL; the marks that reorder or break a line (bidi, U+2028/9);
# surrogates: a byte of an argument that was not UTF-8, as Python decodes argv.
_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(found: re.Match[str]) -> str:
    ch = found.group()
    if "\udc80" <= ch <= "\udcff":
        return f"\\x{ord(ch) - 0xDC00:02x}"  # the byte itself
    return repr(ch)[1:-1]


def printable(text: str) -> str:
    """``text`` with its control characters written as Python escapes (``\\x1b``,
    ``\\n``, ``\\u202e``; a byte that was not UTF-8 as ``\\xff``), the rest as it is.

    Everything the command and the standalone emulator say on stderr passes through it
    (``asyncsports.cli.messages.say``, the command's log lines): a path, a name or a URL
    they echo cannot move the cursor, recolour the terminal or split the line.
    """
    return _CONTROL.sub(_escape, text)
