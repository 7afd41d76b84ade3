"""A griffe extension: the docstrings' reStructuredText roles, read as Markdown.

The package's docstrings use Sphinx roles (``:meth:`get```) and literal blocks (``::``),
which mkdocstrings would print as they are. This rewrites them when the API reference is
built, so the source keeps one convention and the site reads cleanly.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

# :class:`~asyncsports.Client` -> `Client`; :meth:`get` -> `get`
ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")
# "Configure it like this::" before an indented block -> "... like this:"
LITERAL = re.compile(r"::[ \t]*\n(?=[ \t]*\n)")
# A "::" paragraph of its own before an indented block: nothing to say in Markdown.
BARE = re.compile(r"^[ \t]*::[ \t]*\n", re.M)


def markdown(text: str) -> str:
    """The docstring with its roles as code spans and its literal-block markers as colons."""
    text = ROLE.sub(_code, text)
    return LITERAL.sub(":\n", BARE.sub("", text))


def _code(m: re.Match[str]) -> str:
    tilde, target = m.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"  # ~ shows the last part


class RstRoles(griffe.Extension):
    """Rewrites every loaded object's docstring (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
