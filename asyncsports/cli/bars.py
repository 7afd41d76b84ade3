"""Progress bars on stderr for backfill and load: one per phase, and a rate column.

Imported when one of those commands runs (rich.progress is not needed for --help).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.progress import Progress as Bars
from rich.progress import ProgressColumn, TaskID
from rich.progress import Task as BarTask
from rich.text import Text

from asyncsports.backfill import PHASES

__all__ = ["BarsProgress", "Rate"]


class Rate(ProgressColumn):
    """Units per second of a task."""

    def render(self, task: BarTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


class BarsProgress:
    """The backfill's progress as rich bars, one per phase, shown from its first report:
    once the database is open (a database that cannot be reached shows no bar). A phase
    not in ``phases`` gets its bar when first reported."""

    def __init__(self, bars: Bars, phases: Iterable[str] = PHASES) -> None:
        self._bars = bars
        self._tasks = {phase: bars.add_task(phase, total=None) for phase in phases}

    def _task(self, phase: str) -> TaskID:
        self._bars.start()  # the first time only: it starts the display
        if phase not in self._tasks:
            self._tasks[phase] = self._bars.add_task(phase, total=None)
        return self._tasks[phase]

    def add(self, phase: str, total: int) -> None:
        task = self._task(phase)
        self._bars.update(task, total=(self._bars.tasks[task].total or 0) + total)

    def advance(self, phase: str, n: int = 1) -> None:
        self._bars.advance(self._task(phase), n)

    def settle(self, phase: str) -> None:
        task = self._task(phase)
        self._bars.update(task, total=self._bars.tasks[task].completed)
