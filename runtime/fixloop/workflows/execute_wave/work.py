"""One task's work within a wave, and the seams parallel executors share.

- `TaskWork`: what the wave knows of one task while it runs (its worktree, its executor's
  result, its merge, its score). The run's state keeps the durable part (`state.TaskRecord`).
- `TaskEvents`: an event stream that stamps the task's id on every event it passes on, so the
  trace and the progress display can tell parallel executors' events apart; each task's events
  are emitted by one thread at a time, in order, and the stream keeps every event whole.
- `TaskSteps`: the run, as a document step sees it, with the task's id stamped on its events.
- `batches`: design tasks in batches of `maxParallelBrowsers`, logic tasks with the first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from fixloop.events import Event, EventStream
from fixloop.runs.run import Run
from fixloop.schemas.results import ImplResult
from fixloop.workflows.execute_wave.scoring import Score
from fixloop.workflows.execute_wave.tasks import Task

CONTEXT = ".fixloop/context"  # result files inside a worktree; `.fixloop/` is never committed
SHOTS = ".fixloop/shots"
IGNORED_PREFIX = ".fixloop/"


class TaskEvents(EventStream):
    """Passes every event on to `parent` with `item` set to the task's id."""

    def __init__(self, parent: EventStream, item: str) -> None:
        super().__init__()
        self.parent = parent
        self.item = item

    def emit(self, event: Event) -> None:
        self.parent.emit(event if event.item else dataclasses.replace(event, item=self.item))


@dataclass
class TaskSteps:
    """The run as `run_step` needs it (`steps.runner.StepRun`), stamping the task's events."""

    run: Run
    events: TaskEvents
    id: str = ""
    state_dir: Path = Path()

    def __post_init__(self) -> None:
        self.id, self.state_dir = self.run.id, self.run.state_dir

    @property
    def dir(self) -> Path:
        return self.run.dir

    @property
    def lock_fd(self) -> int | None:
        return self.run.lock_fd

    def entering(self, workflow: str, step: str) -> None:
        self.run.entering(workflow, step)

    def emit(self, event: Event) -> None:
        self.events.emit(event)


@dataclass
class TaskWork:
    task: Task
    run_id: str  # the RUN_ID of the task's own worktree: RUN-task-ID
    events: TaskEvents
    steps: TaskSteps
    worktree: Path | None = None
    sub_run: Run | None = None  # holds the task worktree's liveness lock while it exists
    impl: ImplResult | None = None
    failed: str = ""  # why the task failed; empty while it has not
    task_commit: str = ""  # the task's work as one commit (made in its worktree)
    base: str = ""  # the commit its worktree started from
    merged: bool = False
    merge_commit: str = ""  # the run's merge commit of the task's branch
    to_verify: bool = False  # merged, or nothing to merge (no_task): verification decides
    files: list[str] = field(default_factory=list)  # what it changed, from git
    put_back: list[str] = field(default_factory=list)  # changed outside its files, put back
    score: Score | None = None
    analysis: str = ""  # the last verification's analysis and findings, for a fixer
    shots: list[Path] = field(default_factory=list)
    attempts: int = 0
    fixed: bool = False
    executor_finished_at: str = ""  # when its executor returned (tasks.json executorFinishedAt)
    # (picture digest, files digest) of the last screenshot for the verifier: a page that looks
    # the same while its files changed is a dev server that does not serve edits live.
    last_look: tuple[str, str] | None = None

    @property
    def id(self) -> str:
        return self.task.id

    def fail(self, reason: str) -> None:
        if not self.failed:
            self.failed = reason


def batches(tasks: Sequence[Task], max_browsers: int) -> list[list[Task]]:
    """Design tasks in batches of at most `max_browsers`, logic tasks joining the first batch."""
    design = [task for task in tasks if task.is_design]
    logic = [task for task in tasks if not task.is_design]
    grouped = [
        design[start : start + max_browsers] for start in range(0, len(design), max_browsers)
    ]
    if not grouped:
        return [logic] if logic else []
    grouped[0] = grouped[0] + logic
    return grouped


def in_parallel(pool: Executor, jobs: Sequence[Callable[[], object]], limit: int) -> None:
    """Run `jobs` on `pool` (any `concurrent.futures.Executor`), at most `limit` at once, and
    wait for all of them; the first error one raised is raised here, once the jobs already
    running have ended (they work in the run's worktrees, which the cleanup after the error
    removes) and with none started after it."""
    pending: list[Future[object]] = []
    queue = list(jobs)
    failure: BaseException | None = None
    while queue or pending:
        while queue and failure is None and len(pending) < limit:
            pending.append(pool.submit(queue.pop(0)))
        if not pending:
            break
        done, _ = wait(pending, return_when="FIRST_COMPLETED")
        for future in done:
            pending.remove(future)
            failure = failure or future.exception()
    if failure is not None:
        raise failure


def task_files_only(paths: Sequence[str]) -> list[str]:
    """Paths a task may own: everything but fixloop's own `.fixloop/` files."""
    return sorted(path for path in paths if not path.startswith(IGNORED_PREFIX))


def now() -> str:
    """A moment as tasks.json records it (`startedAt`, `executorFinishedAt`, `completedAt`)."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


__all__ = [
    "CONTEXT",
    "IGNORED_PREFIX",
    "SHOTS",
    "TaskEvents",
    "TaskSteps",
    "TaskWork",
    "batches",
    "now",
    "task_files_only",
]
