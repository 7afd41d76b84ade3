"""The package's source read as the checks of its shape read it (tests/unit)."""

from __future__ import annotations

from pathlib import Path


def package_sources(root: Path, package: str) -> dict[str, str]:
    """Each module of ``package`` under ``root`` by its dotted name (a package by its own)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path.read_text(encoding="utf-8")
    return found
