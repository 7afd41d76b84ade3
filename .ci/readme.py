"""The README's commands, as a new user copies them: what .ci/run runs verbatim.

``python .ci/readme.py setup`` prints the set-up commands (the ``sh`` blocks of the
"Set up" section: install and run the main job, install and run the tests), one per
line; ``python .ci/readme.py docs`` prints the command that builds the site. Anything
else in the README's shape (a third set-up block, a multi-line one, no docs command) is
an error, so that CI never runs less than the README says. Standard library only: it
runs before any virtual environment exists.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## Set up"
DOCS = re.compile(r"`(pip install -e '\.\[docs\]' && mkdocs build)`")


def setup(text: str) -> list[str]:
    """The commands of the ``sh`` blocks in the "Set up" section, in order."""
    start = text.index(SECTION) + len(SECTION)
    end = text.find("\n## ", start)
    section = text[start : end if end >= 0 else None]
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.S | re.M)
    commands = [block.strip() for block in blocks]
    if len(commands) != 2 or any("\n" in c for c in commands):
        raise ValueError(f"README.md's {SECTION!r} must hold two one-line sh blocks: {commands}")
    return commands


def docs(text: str) -> str:
    """The command that installs the docs extra and builds the site."""
    found = DOCS.findall(text)
    if len(found) != 1:
        raise ValueError(f"README.md must name the docs command once: {DOCS.pattern}")
    return str(found[0])


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    if argv == ["setup"]:
        print("\n".join(setup(text)))
    elif argv == ["docs"]:
        print(docs(text))
    else:
        print("usage: readme.py setup|docs", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
