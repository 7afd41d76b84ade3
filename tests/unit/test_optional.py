"""Optional dependencies (asyncsports._optional): one helper imports them, one error says
which extra installs a missing one, and the command prints it in one line with an exit
code of its own. Each extra is tested through the real command with its module hidden."""

from __future__ import annotations

import ast
import inspect
import pickle
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support import CLI, clean_env

from asyncsports._optional import EXTRAS, need
from asyncsports.cli.exits import EXIT_CODES, code_for, exit_code_table
from asyncsports.cli.messages import describe
from asyncsports.errors import AsyncSportsError, MissingDependencyError, install_hint

pytestmark = pytest.mark.slow  # the command in subprocesses with modules hidden

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "asyncsports"
MISSING = code_for(MissingDependencyError)


class Hide:
    """A meta path finder that refuses the packages named: an import of one, or of a
    module of one, fails as it does when the package is not installed."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)

    def find_spec(self, name: str, *args: object) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


# The same for a whole process, for the modules named in HIDE (comma-separated).
SHIM = f"""\
import os, sys
{inspect.getsource(Hide)}
sys.meta_path.insert(0, Hide(*filter(None, os.environ.get("HIDE", "").split(","))))
"""


def hidden(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Hide package ``name`` in this process until the test ends."""
    for loaded in [m for m in sys.modules if m.partition(".")[0] == name]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setattr(sys, "meta_path", [Hide(name), *sys.meta_path])


# ------------------------------------------------------------------ the helper


def test_need_gives_the_module() -> None:
    assert need("redis.asyncio", "a test").__name__ == "redis.asyncio"


def test_a_hidden_module_is_one_error_naming_feature_module_and_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hidden(monkeypatch, "pyarrow")
    with pytest.raises(MissingDependencyError) as caught:
        need("pyarrow.dataset", "a Parquet export")
    error = caught.value
    assert str(error) == (
        "a Parquet export needs pyarrow, which is not installed: " + install_hint("parquet")
    )
    assert (error.feature, error.module, error.extra, error.name) == (
        "a Parquet export",
        "pyarrow",
        "parquet",
        "pyarrow",
    )
    # One of ours, and still what `except ImportError` around an import expects.
    assert isinstance(error, AsyncSportsError) and isinstance(error, ModuleNotFoundError)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is MissingDependencyError and str(again) == str(error)


def test_a_module_that_fails_to_import_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def find_spec(self, name: str, *args: object) -> None:
            if name == "redis.asyncio":
                raise ImportError("libfoo.so: cannot open shared object file")

    monkeypatch.delitem(sys.modules, "redis.asyncio", raising=False)  # imported or not yet
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    with pytest.raises(
        MissingDependencyError,
        match=r"needs redis, which fails to import "
        r"\(libfoo\.so: .*\): " + re.escape(install_hint("redis")),
    ):
        need("redis.asyncio", "a shared rate budget")


def test_every_optional_module_is_in_the_extra_that_installs_it() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for module, extra in EXTRAS.items():
        names = {req.split(">")[0].split("[")[0].strip().lower() for req in extras[extra]}
        name = module.replace("_", "-")
        # A namespace package comes in a distribution named after it: opentelemetry-api.
        assert any(n == name or n.startswith(name + "-") for n in names), (module, extra)


def _runtime_imports(tree: ast.Module) -> list[tuple[str, int]]:
    """Top-level names of the modules imported, outside ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name.partition(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module.partition(".")[0], node.lineno))
    return found


def test_optional_modules_are_imported_only_through_the_helper() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        # The command's modules import typer and rich: the package checks them first.
        allowed = {"typer", "rich"} if rel.startswith("cli/") else set()
        for name, line in _runtime_imports(ast.parse(path.read_text())):
            if name in EXTRAS and name not in allowed:
                offenders.append(f"{rel}:{line} imports {name}")
    assert not offenders


# ------------------------------------------------------------------ the command


def test_the_exit_code_is_its_own_and_in_the_help() -> None:
    assert [code for cls, code, _ in EXIT_CODES if cls is MissingDependencyError] == [MISSING]
    others = {code for cls, code, _ in EXIT_CODES if cls is not MissingDependencyError}
    assert MISSING not in others
    assert (MISSING, "an optional dependency not installed") in [
        (code, text) for code, text, _ in exit_code_table()
    ]


def test_an_internal_error_under_verbose_does_not_ask_for_verbose() -> None:
    assert describe(RuntimeError("x")).endswith("(--verbose shows the traceback)")
    text = describe(RuntimeError("x"), verbose=True)
    assert "--verbose" not in text and text.endswith("(the traceback is above)")


@pytest.fixture
def hide(tmp_path: Path) -> Path:
    """A directory whose sitecustomize hides the modules named in HIDE."""
    (tmp_path / "shim").mkdir()
    (tmp_path / "shim" / "sitecustomize.py").write_text(SHIM)
    return tmp_path / "shim"


def _run(hide: Path, modules: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = clean_env()
    env |= {"PYTHONPATH": str(hide), "HIDE": modules, "COLUMNS": "200"}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)


PG = "postgresql://u:s3cret@127.0.0.1:1/sports"
CASES = {
    "postgres": ("asyncpg", ["--emulator", "backfill", "--db", PG]),
    "postgres-worker": ("asyncpg", ["--emulator", "worker", "--db", PG, "--job", "j"]),
    "postgres-jobs": ("asyncpg", ["jobs", "--db", PG]),
    "redis": (
        "redis",
        [
            "--emulator",
            "--rate-limit",
            "5",
            "--rate-limit-url",
            "redis://127.0.0.1:1",
            "fixtures",
            "basketball",
        ],
    ),
    "parquet": ("pyarrow", ["export", "--parquet", "{tmp}/out", "--db", "{tmp}/x.sqlite"]),
    "dlt": ("dlt", ["--emulator", "load", "--pipelines-dir", "{tmp}/pipelines"]),
    "sync": (
        "prometheus_client",
        [
            "--emulator",
            "sync",
            "--once",
            "--metrics-port",
            "0",
            "--db",
            "{tmp}/m.sqlite",
            "--sports",
            "basketball",
        ],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_missing_extra_is_one_line_and_its_own_exit_code(
    case: str, hide: Path, tmp_path: Path
) -> None:
    module, args = CASES[case]
    extra = EXTRAS[module]
    argv = [*CLI, *(a.format(tmp=tmp_path) for a in args)]
    proc = _run(hide, module, argv)
    assert proc.returncode == MISSING, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("asyncsports: error: ") and f" needs {module}, " in line
    assert line.endswith(install_hint(extra))
    assert "internal error" not in line and "s3cret" not in proc.stderr


def test_a_missing_extra_under_verbose_is_the_same_line_after_the_traceback(
    hide: Path, tmp_path: Path
) -> None:
    argv = [
        *CLI,
        "--verbose",
        "--emulator",
        "sync",
        "--once",
        "--metrics-port",
        "0",
        "--db",
        str(tmp_path / "m.sqlite"),
        "--sports",
        "basketball",
    ]
    proc = _run(hide, "prometheus_client", argv)
    assert proc.returncode == MISSING, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.endswith(install_hint("sync")) and "--verbose" not in last


@pytest.mark.parametrize("module", ["typer", "rich"])
def test_the_command_without_the_cli_extra_says_so(module: str, hide: Path) -> None:
    script = Path(sys.executable).with_name("asyncsports")
    for argv in ([*CLI, "--help"], [str(script), "--help"]):
        proc = _run(hide, module, argv)
        assert proc.returncode == MISSING, (argv, proc.stderr)
        assert proc.stderr == (
            f"asyncsports: error: the asyncsports command needs {module}, which is not "
            f"installed: {install_hint('cli')}\n"
        )


def test_importing_the_command_without_the_cli_extra_raises_the_error(hide: Path) -> None:
    code = "import asyncsports.cli"
    proc = _run(hide, "typer", [sys.executable, "-c", code])
    assert proc.returncode == 1
    assert "MissingDependencyError: the asyncsports command needs typer" in proc.stderr
