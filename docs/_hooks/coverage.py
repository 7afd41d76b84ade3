"""A mkdocs hook: every public name has its entry in the API reference.

After the build, each name in the ``__all__`` of the public modules (``public_modules``)
must be in the site's inventory (``objects.inv``), under its public path; a missing one is a warning,
which ``mkdocs build --strict`` turns into a failure.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.asyncsports.coverage")


def public_modules() -> list[str]:
    """``asyncsports`` and every module under it with no ``_`` in its path (the command
    line aside: its reference is its ``--help``), so that a new module is checked too."""
    import asyncsports

    found = ["asyncsports"]
    for info in pkgutil.walk_packages(asyncsports.__path__, "asyncsports."):
        parts = info.name.split(".")
        if not any(p.startswith("_") for p in parts) and parts[1] != "cli":
            found.append(info.name)
    return found


SKIP = {"asyncsports.__version__"}


def missing(inventory: set[str]) -> list[str]:
    """The public names with no entry in ``inventory`` (a set of dotted paths).

    A name re-exported by several public modules (``asyncsports.APIError`` is
    ``asyncsports.errors.APIError``) needs an entry under one of them only.
    """
    paths: dict[int, set[str]] = {}
    names = []
    for name in public_modules():
        module = importlib.import_module(name)
        for member in getattr(module, "__all__", []):
            path = f"{name}.{member}"
            value = getattr(module, member)
            # Plain values (numbers, strings) are shared by chance, not re-exported.
            key = id(value) if callable(value) or isinstance(value, type) else id(path)
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
