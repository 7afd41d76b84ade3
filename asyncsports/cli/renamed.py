"""Old spellings of renamed options: still accepted for a release, with a deprecation line.

One table, read by every command as it parses (:class:`~asyncsports.cli.app.Command`): a
renamed option keeps no second parameter in the command's signature and no line in its
--help; the old spelling is rewritten to the new before click sees it, and stderr says
so once per invocation. The CHANGELOG lists each rename and the release that drops it.
"""

from collections.abc import Callable, Sequence

__all__ = ["REMOVED_IN", "RENAMED", "rewrite"]

REMOVED_IN = "0.3"
"""The release that stops accepting the old spellings."""

_SORTED = (
    "tournaments",
    "matches",
    "ast",
    "tournament-players",
    "tour-players",
    "centuries",
    "previous-tournament-winners",
)
"""The snooker listings, whose ``--sort`` was ``--sort-options`` (the wire's name)."""

RENAMED: dict[str, dict[str, str]] = {
    # command name -> {old option -> new option}
    "fixtures": {"--size": "--page-size"},
    "backfill": {"--seasons": "--season-id"},
    **{name: {"--sort-options": "--sort"} for name in _SORTED},
    "actions": {"--speed": "--replay"},
    "statistics": {"--speed": "--replay"},
    # documented before the emulator's clock speed was a global option
    "sync": {"--speed": "--emulator-speed"},
}


def rewrite(command: str, args: Sequence[str], warn: Callable[[str], None]) -> list[str]:
    """``args`` with ``command``'s old option names replaced by the new ones.

    Both ``--old VALUE`` and ``--old=VALUE`` are rewritten, up to a ``--`` (after which
    everything is an argument); ``warn`` gets one line per old name used.
    """
    renamed = RENAMED.get(command)
    if not renamed:
        return list(args)
    out: list[str] = []
    told: set[str] = set()
    for i, arg in enumerate(args):
        if arg == "--":
            return out + list(args[i:])
        name, eq, value = arg.partition("=")
        new = renamed.get(name)
        if new is None:
            out.append(arg)
            continue
        if name not in told:
            told.add(name)
            warn(
                f"asyncsports: warning: {command} {name} is deprecated: use {new} "
                f"(the old name goes in {REMOVED_IN})"
            )
        out.append(new + eq + value)
    return out
