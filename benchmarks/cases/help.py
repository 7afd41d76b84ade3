"""help: asyncsports --help and --version, CPU per process, vs python -c pass and a bare typer app.

Issue 32 asked for an instant command line: ``asyncsports --help`` and ``--version``
under 0.3 s on this machine. Each variant is a fresh process (what a user waits for),
run back to back in each round: ``python -c pass`` (the interpreter alone), a bare typer
app with the same commands and no work in them (what typer costs for this command
tree), and the command itself. The measure is the CPU time of the process (user and
system, from ``getrusage`` of the children), wall time beside it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, paired

BUDGET_MS = 300.0
"""The issue's bound on the wall time of --help and --version, on an idle machine."""
TARGET = 1.10
"""--help and --version against the bare typer app's --help: no more than typer costs.
(A subcommand's --help is reported: newer typer parses the root's values through
pydantic first, which the bare app, with no options, never does.)"""


def _tree() -> dict[str, list[str]]:
    """The command names of ``asyncsports``: top-level name -> its subcommands."""
    import typer

    from asyncsports.cli import app

    root: Any = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="asyncsports")
    tree = {}
    for name in root.list_commands(ctx):
        sub = root.get_command(ctx, name)
        tree[name] = list(sub.list_commands(ctx)) if hasattr(sub, "list_commands") else []
    return tree


def bare_app(tree: dict[str, list[str]]) -> str:
    """The source of a typer app with the commands of ``tree``, each doing nothing."""
    lines = ["import typer", "", "app = typer.Typer()"]
    for n, (name, subs) in enumerate(tree.items()):
        if subs:
            lines += [f"group{n} = typer.Typer()", f"app.add_typer(group{n}, name={name!r})"]
            lines += [f"group{n}.command({sub!r})(lambda: None)" for sub in subs]
        else:
            lines.append(f"app.command({name!r})(lambda: None)")
    lines += ["", "app()"]
    return "\n".join(lines) + "\n"


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run of ``argv`` to the end: its CPU time (user + system) and wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, env=env, check=True, timeout=60)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


async def startup(m: Manifest, p: Params) -> dict[str, Any]:
    """Paired rounds of fresh processes: each variant once a round, in turn (no server:
    the processes are the measure; blocking here blocks nothing else)."""
    return _rounds(p["repeat"])


def _rounds(repeat: int) -> dict[str, Any]:
    py = sys.executable
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCSPORTS_")}
    env["COLUMNS"] = "80"
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp, "bare.py")
        bare.write_text(bare_app(_tree()))
        variants = {
            "python -c pass": [py, "-c", "pass"],
            "bare typer --help": [py, str(bare), "--help"],
            "asyncsports --help": [py, "-m", "asyncsports", "--help"],
            "asyncsports --version": [py, "-m", "asyncsports", "--version"],
            "asyncsports fixtures --help": [py, "-m", "asyncsports", "fixtures", "--help"],
        }
        for argv in variants.values():  # warm the file cache and the bytecode
            _once(argv, env)
        out: dict[str, Any] = {name: {"cpu": [], "wall": []} for name in variants}
        for _ in range(repeat):
            for name, argv in variants.items():
                cpu, wall = _once(argv, env)
                out[name]["cpu"].append(cpu)
                out[name]["wall"].append(wall)
    return {"commands": sum(1 + len(s) for s in _tree().values()), **out}


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(startup, **s)


def rows(r: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    """CPU of each asyncsports variant against the bare typer app; the pass and wall in notes."""
    if r is None:
        return []
    bare, bottom = r["bare typer --help"]["cpu"], r["python -c pass"]["cpu"]
    out = []
    for name in ("asyncsports --help", "asyncsports --version", "asyncsports fixtures --help"):
        cpu, wall = r[name]["cpu"], r[name]["wall"]
        out.append(
            Row(
                "help",
                f"{name}: a fresh process ({r['commands']} commands)",
                "CPU per process",
                "ms",
                median(cpu) * 1e3,
                median(bare) * 1e3,
                "a bare typer app with the same commands, --help",
                "cost",
                None if name.endswith("fixtures --help") else TARGET,
                f"{paired(cpu, bottom):.1f}x python -c pass ({median(bottom) * 1e3:.0f} ms); "
                f"wall {median(wall) * 1e3:.0f} ms (the issue's bound: {BUDGET_MS:.0f} ms)",
                paired=paired(cpu, bare),
            )
        )
    return out


CASE = Case(
    name="help",
    run=run,
    rows=rows,
    quick={"repeat": 9},
    full={"repeat": 21},
    order=200,
)
