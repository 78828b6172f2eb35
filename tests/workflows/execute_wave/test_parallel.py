"""Parallel executors: at most K at once, any `concurrent.futures.Executor`, and each task's
events whole and in order in the run's trace."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.events import EventStream
from fixloop.workflows.execute_wave import ExecuteWaveOptions, run_execute_wave
from fixloop.workflows.kernel.workflow import Context

TASKS = 6


class SlowExecutors:
    """The scripted model, with executors that take a while; counts how many run at once."""

    name = "scripted"

    def __init__(self, inner: ScriptedBackend, delay_s: float) -> None:
        self.inner = inner
        self.delay_s = delay_s
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        if request.role != "executor":
            return self.inner.dispatch(request)
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(self.delay_s)
            return self.inner.dispatch(request)
        finally:
            with self.lock:
                self.running -= 1


class CountingPool(ThreadPoolExecutor):
    """A caller's own executor: the run must use it, and leave it running."""

    def __init__(self) -> None:
        super().__init__(max_workers=8)
        self.submitted = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


def script() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for n in range(1, TASKS + 1):
        found[f"executor/{n}/implement"] = implement(n, {f"src/t{n}.py": f"value = {n}\n"})
        found[f"reviewer/{n}/verify"] = score(n, scores("logic", 9))
    return found


def run(
    wave: Wave, parallel: int, pool: CountingPool | None = None, delay_s: float = 0.1
) -> tuple[Any, SlowExecutors]:
    wave.write_tasks([{"id": n, "name": f"task {n}"} for n in range(1, TASKS + 1)])
    backend = SlowExecutors(ScriptedBackend(script()), delay_s=delay_s)
    context = Context(wave.pack, backend, EventStream(wave.events.append))
    options = ExecuteWaveOptions(
        tasks=wave.tasks_path, repo=wave.repo.path, parallel=parallel, pool=pool
    )
    return run_execute_wave(options, context), backend


def test_at_most_k_executors_run_at_once(wave: Wave) -> None:
    result, backend = run(wave, parallel=3, delay_s=2.0)
    assert result.exit_code == 0
    assert backend.most == 3
    assert [wave.file(f"src/t{n}.py") for n in range(1, TASKS + 1)] == [
        f"value = {n}\n" for n in range(1, TASKS + 1)
    ]


def test_a_callers_executor_runs_the_work_and_is_left_running(wave: Wave) -> None:
    pool = CountingPool()
    result, backend = run(wave, parallel=2, pool=pool, delay_s=1.0)
    assert result.exit_code == 0 and backend.most == 2
    assert pool.submitted == 2 * TASKS  # one implementation and one verification per task
    assert pool.submit(lambda: 42).result() == 42  # not shut down by the run
    pool.shutdown()


def test_each_tasks_events_are_whole_and_in_order(wave: Wave) -> None:
    result, _ = run(wave, parallel=TASKS)
    lines = (Path(result.run_dir) / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]  # every line whole
    for n in range(1, TASKS + 1):
        mine = [e for e in events if e.get("item") == str(n)]
        statuses = [e["status"] for e in mine if e["event"] == "item"]
        assert statuses == ["queued", "running", "running", "merged", "passed", "committed"]
        kinds = [e.get("step") or e.get("key") or e["status"] for e in mine]
        order = [
            "queued",
            "running",
            "setup-worktree",
            f"executor/{n}/implement",
            "checkpoint-task",
            "running",
            "merge-task",
            "remove-task",
            "merged",
            f"reviewer/{n}/verify",
            "passed",
            "committed",
        ]
        assert kinds == order, kinds
