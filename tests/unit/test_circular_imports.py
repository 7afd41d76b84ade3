"""Every module of the package imports alone, in a fresh interpreter (as aiohttp's test of
the same name): an import cycle that only an import order hides fails here, and so does a
module that leans on another having been imported first."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import asyncsports

# `python -m` entry points run on import by design (asyncsports.__main__ waits for __name__).
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(asyncsports.__path__, "asyncsports.")
    if m.name != "asyncsports.cli.__main__"
)


def test_the_walk_finds_every_layer() -> None:
    for package in ("_http", "_iter", "_wire", "testing", "store", "sync", "cli", "emulator"):
        assert f"asyncsports.{package}" in MODULES
    assert "asyncsports._http.session" in MODULES and len(MODULES) > 100


def test_the_root_holds_public_modules_and_the_layers() -> None:
    # Private code lives in the layer packages; a new private module at the root fails.
    private = {m.name for m in pkgutil.iter_modules(asyncsports.__path__) if m.name[0] == "_"}
    assert private == {
        *("__main__", "_version", "_optional", "_signals", "_http", "_iter", "_wire")
    }


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_the_module_imports_alone(module: str) -> None:
    # A warning raised in the package at import time (a deprecated import, say) fails as
    # well; one inside a dependency is the dependency's business.
    code = (
        f"import warnings; warnings.filterwarnings('error', module='asyncsports'); import {module}"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
