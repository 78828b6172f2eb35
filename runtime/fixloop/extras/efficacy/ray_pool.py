"""`--ray ADDRESS`: the harness's tasks on a Ray cluster, behind the pool interface of
`executor.TaskPool`, gathered into the same report.

The job (`harness.TaskJob`) pickles without the run's event stream and budget; those stay in
this process, the driver: an item is `admit`ted here right before it is submitted (so once the
budget is spent no task starts anywhere), at most `width` are in flight at once, and each
result is `settle`d here as it comes back (its cost charged, its end said). Results come back
in the items' order whatever finished first. Each Ray worker runs its task exactly as a local
worker does: its own temporary folder, its own sandboxes, on that worker's machine, which must
have fixloop, the corpus at the same path and the sandbox asked for (docs/efficacy.md).

Ray is optional (`pip install 'fixloop[ray]'`); asked for without it: one line, exit 2.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.efficacy.executor import Admit, Settle

Item = TypeVar("Item")
Result = TypeVar("Result")
LOCAL = "local"  # `--ray local`: a cluster of this machine, started for the run and stopped after


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        problem = "needs Ray: pip install 'fixloop[ray]'"
        raise FixloopError(Diagnostic("--ray", 1, 1, "usage", problem), exit_code=2) from None


class _Worker:
    """One slot of the pool, a Ray actor for the whole `map`: it takes the job once (one
    unpickling of the job and its pack, one import of fixloop per worker process) and then runs
    item after item, where a Ray task per item would pay both each time."""

    def __init__(self, job: Callable[[Any], Any]) -> None:
        self.job = job

    def run(self, item: Any) -> Any:
        return self.job(item)


class RayPool:
    def __init__(self, address: str = LOCAL, workers: int = 1) -> None:
        if workers < 1:
            raise FixloopError(Diagnostic("--workers", 1, 1, "usage", "must be 1 or more"))
        self.address = address
        self.workers = workers
        self.ray = _ray()

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
        ray = self.ray
        started_here = not ray.is_initialized()
        if started_here:
            if self.address == LOCAL:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=self.address, log_to_driver=False)
        try:
            return self._map(job, items, admit, settle)
        finally:
            if started_here:
                ray.shutdown()

    def _map(
        self,
        job: Callable[[Item], Result],
        items: Sequence[Item],
        admit: Admit[Item, Result] | None,
        settle: Settle[Item, Result] | None,
    ) -> list[Result]:
        ray = self.ray
        results: dict[int, Result] = {}
        queue = list(enumerate(items))
        if not queue:
            return []
        actor = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_Worker)
        shipped = ray.put(job)  # once, not once a worker
        # Started together, before the first item is admitted: each imports fixloop while the
        # others do, not when its first item would already be on the clock.
        idle = [actor.remote(shipped) for _ in range(min(self.workers, len(items)))]
        flying: dict[Any, tuple[int, Any]] = {}  # object ref → the item's index, its worker
        try:
            while queue or flying:
                while queue and idle:
                    index, item = queue.pop(0)
                    instead = admit(item) if admit is not None else None
                    if instead is not None:
                        results[index] = instead
                        continue
                    worker = idle.pop()
                    flying[worker.run.remote(item)] = (index, worker)
                if not flying:
                    continue
                [done], _ = ray.wait(list(flying), num_returns=1)
                index, worker = flying.pop(done)
                idle.append(worker)
                results[index] = ray.get(done)
                if settle is not None:
                    settle(items[index], results[index])
        finally:
            for worker in idle + [worker for _, worker in flying.values()]:
                ray.kill(worker)
        return [results[index] for index in range(len(items))]


__all__ = ["LOCAL", "RayPool"]
