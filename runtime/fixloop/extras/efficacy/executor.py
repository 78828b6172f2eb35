"""Where the harness's tasks run: one after another, or N at once on this machine.

A task is independent of every other by construction: it builds its repository in a temporary
folder of its own, opens its own sandboxes there, and writes its evidence under its own id. So
running several at once needs nothing from the task but a pool: `LocalPool(n)` runs at most
`n` jobs at once on threads (a task's time goes to the model and to sandboxed subprocesses,
both outside the interpreter lock) and hands the results back in the order the jobs came, so
the report reads the same whatever finished first.

The interface (`TaskPool.map`) is what another engine implements (`ray_pool.RayPool`): take a
job and the items, return one result per item, in order. A pool that runs jobs elsewhere gets a
job it can pickle (the harness's `TaskJob`), and does in this process what the job's copy
there cannot: `admit` before an item starts, `settle` as each result comes back.

A pool starts items in the order it is given them. When how long each takes is known (an
earlier run's record), `in_order(pool, ..., longest_first(...))` starts the longest first: the
run then ends on short tasks, so fewer workers wait idle at the end for the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from fixloop.diagnostics import Diagnostic, FixloopError

Item = TypeVar("Item")
Result = TypeVar("Result")
# Asked right before an item would start: a result instead of running it (the run's budget is
# spent), or None to run it.
Admit = Callable[[Item], Result | None]
# Told each result of a job that ran in another process, in this one, as it comes back.
Settle = Callable[[Item, Result], None]


class TaskPool(Protocol):
    """Runs `job` once per item, at most `width` at once; results in the items' order. A job
    handles its own failures (the harness turns them into the task's `error` row), so one
    task's failure never stops another."""

    @property
    def width(self) -> int: ...

    def map(
        self,
        job: Callable[[Item], Result],
        items: Sequence[Item],
        admit: Admit[Item, Result] | None = None,
        settle: Settle[Item, Result] | None = None,
    ) -> list[Result]: ...


def admitted(
    job: Callable[[Item], Result], admit: Admit[Item, Result] | None
) -> Callable[[Item], Result]:
    def run(item: Item) -> Result:
        instead = admit(item) if admit is not None else None
        return job(item) if instead is None else instead

    return run


def longest_first(items: Sequence[Item], expected: Callable[[Item], float | None]) -> list[int]:
    """The items' indexes in the order to start them: those of unknown length first (one could
    be the longest), then the longest expected first; ties keep the items' order."""
    return sorted(
        range(len(items)),
        key=lambda index: (0, 0.0) if (took := expected(items[index])) is None else (1, -took),
    )


def in_order(
    pool: TaskPool,
    job: Callable[[Item], Result],
    items: Sequence[Item],
    order: Sequence[int],
    *,
    admit: Admit[Item, Result] | None = None,
    settle: Settle[Item, Result] | None = None,
) -> list[Result]:
    """`pool.map`, the items started in `order` (a permutation of their indexes), the results
    still in the items' order."""
    if sorted(order) != list(range(len(items))):
        raise ValueError("order must name each item once")
    results = pool.map(job, [items[index] for index in order], admit, settle)
    placed: list[Any] = [None] * len(items)
    for index, result in zip(order, results, strict=True):
        placed[index] = result
    return placed


class LocalPool:
    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise FixloopError(Diagnostic("--workers", 1, 1, "usage", "must be 1 or more"))
        self.workers = workers

    @property
    def width(self) -> int:
        return self.workers

    def map(
        self,
        job: Callable[[Item], Result],
        items: Sequence[Item],
        admit: Admit[Item, Result] | None = None,
        settle: Settle[Item, Result] | None = None,
    ) -> list[Result]:
        # `settle` is not called: the job ran here and already said what it did.
        job = admitted(job, admit)  # on the worker, as the item starts
        if self.workers == 1 or len(items) <= 1:
            return [job(item) for item in items]  # the serial run: no thread at all
        with ThreadPoolExecutor(
            max_workers=min(self.workers, len(items)), thread_name_prefix="fixloop-efficacy"
        ) as pool:
            # Submitted in order, so a free worker always takes the next task in corpus order.
            futures = [pool.submit(job, item) for item in items]
            return [future.result() for future in futures]


__all__ = ["Admit", "LocalPool", "Settle", "TaskPool", "admitted", "in_order", "longest_first"]
