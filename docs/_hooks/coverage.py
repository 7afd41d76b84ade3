"""A mkdocs hook: every public name has its entry in the API reference.

After the build, each name in the ``__all__`` of the public modules (``public_modules``)
must be in the site's inventory (``objects.inv``), under its public path; a missing one is a warning,
which ``mkdocs build --strict`` turns into a failure.

The package is read, not imported: griffe, which mkdocstrings' Python handler brings,
reads each ``__all__`` and follows each re-export from the source, so the site needs
nothing beyond the ``docs`` extra (``asyncsports.testing.plugin`` imports pytest, say).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import griffe

log = logging.getLogger("mkdocs.plugins.asyncsports.coverage")
ROOT = Path(__file__).resolve().parents[2]


def public_modules() -> list[griffe.Module]:
    """``asyncsports`` and every module under it with no ``_`` in its path (the command
    line aside: its reference is its ``--help``), so that a new module is checked too."""
    package = griffe.load(
        "asyncsports", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False
    )
    assert isinstance(package, griffe.Module)
    found, todo = [], [package]
    while todo:
        module = todo.pop(0)
        found.append(module)
        todo += [
            sub
            for name, sub in module.members.items()
            if isinstance(sub, griffe.Module)  # not an alias: a module imported elsewhere
            and not name.startswith("_")
            and sub.path != "asyncsports.cli"
        ]
    return sorted(found, key=lambda m: m.path)


SKIP = {"asyncsports.__version__"}


def defined(obj: griffe.Object | griffe.Alias) -> str:
    """Where a name is defined: a re-export's target, followed as far as the source goes."""
    while isinstance(obj, griffe.Alias):
        alias = obj
        try:
            obj = alias.target
        except griffe.AliasResolutionError:  # from outside the package
            return alias.target_path
    return obj.path


def missing(inventory: set[str]) -> list[str]:
    """The public names with no entry in ``inventory`` (a set of dotted paths).

    A name re-exported by several public modules (``asyncsports.APIError`` is
    ``asyncsports.errors.APIError``) needs an entry under one of them only.
    """
    paths: dict[str, set[str]] = {}
    names = []
    for module in public_modules():
        for member in module.exports or ():
            name = member if isinstance(member, str) else member.name
            path = f"{module.path}.{name}"
            key = defined(module[name])
            paths.setdefault(key, set()).add(path)
            names.append((path, key))
    return [path for path, key in names if path not in SKIP and not (paths[key] & inventory)]


def on_post_build(config: Any, **kwargs: Any) -> None:
    """Warn about every public name the reference lacks."""
    from mkdocstrings import Inventory

    with open(Path(config["site_dir"]) / "objects.inv", "rb") as file:
        inventory = set(Inventory.parse_sphinx(file))
    for path in missing(inventory):
        log.warning("the API reference has no entry for %s", path)
