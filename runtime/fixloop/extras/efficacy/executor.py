"""Where the harness's tasks run: one after another, or N at once on this machine.

A task is independent of every other by construction: it builds its repository in a temporary
folder of its own, opens its own sandboxes there, and writes its evidence under its own id. So
running several at once needs nothing from the task but a pool: `LocalPool(n)` runs at most
`n` jobs at once on threads (a task's time goes to the model and to sandboxed subprocesses,
both outside the interpreter lock) and hands the results back in the order the jobs came, so
the report reads the same whatever finished first.

The interface (`TaskPool.map`) is what another engine would implement: take a function and the
items, return one result per item, in order. See docs/efficacy.md for what a cluster needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from fixloop.diagnostics import Diagnostic, FixloopError

Item = TypeVar("Item")
Result = TypeVar("Result")


class TaskPool(Protocol):
    """Runs `job` once per item, at most `width` at once; results in the items' order. A job
    handles its own failures (the harness turns them into the task's `error` row), so one
    task's failure never stops another."""

    @property
    def width(self) -> int: ...

    def map(self, job: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]: ...


class LocalPool:
    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise FixloopError(Diagnostic("--workers", 1, 1, "usage", "must be 1 or more"))
        self.workers = workers

    @property
    def width(self) -> int:
        return self.workers

    def map(self, job: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
        if self.workers == 1 or len(items) <= 1:
            return [job(item) for item in items]  # the serial run: no thread at all
        with ThreadPoolExecutor(
            max_workers=min(self.workers, len(items)), thread_name_prefix="fixloop-efficacy"
        ) as pool:
            # Submitted in order, so a free worker always takes the next task in corpus order.
            futures = [pool.submit(job, item) for item in items]
            return [future.result() for future in futures]


__all__ = ["LocalPool", "TaskPool"]
