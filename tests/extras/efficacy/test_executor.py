"""`--workers N`: tasks at once, each in its own sandbox and working copy, gathered into the
report the serial run gives; one task's failure stops no other; the run budget holds."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.extras.efficacy.conftest import CORPUS

from fixloop.agents.budget import RunBudget
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.efficacy import BenchOptions, TaskOutcome, load_corpus, run_bench
from fixloop.extras.efficacy.executor import LocalPool, in_order, longest_first
from fixloop.sandboxes import Sandbox, open_sandbox

TASKS = ("regex", "api-misuse", "off-by-one", "string-formatting")
# What must be the same whatever ran beside a task (not its run id, clock or runner output tail,
# which carries pytest's own timings).
SAME = (
    "id",
    "status",
    "reason",
    "base",
    "sandbox",
    "tests_before",
    "tests_after",
    "accepted",
    "attempts",
    "turns",
    "tool_calls",
    "cost_usd",
    "fail_to_pass",
    "pass_to_pass",
    "tests",
    "patch",
)


def _same(outcome: TaskOutcome) -> dict[str, Any]:
    data = outcome.to_json()
    return {key: data[key] for key in SAME}


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _overlap(first: TaskOutcome, second: TaskOutcome) -> bool:
    return _at(first.started_at) < _at(second.ended_at) and _at(second.started_at) < _at(
        first.ended_at
    )


class Progress:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, object, object]] = []
        self.threads: set[str] = set()

    def __call__(self, event: Event) -> None:
        if event.kind is EventKind.ITEM and event.workflow == "efficacy":
            self.threads.add(threading.current_thread().name)
            self.lines.append(
                (event.item, event.status, event.data.get("index"), event.data.get("total"))
            )


def _bench(pack: Pack, workers: int, sandbox: str = "local", **more: Any) -> tuple[Any, Progress]:
    progress = Progress()
    options = BenchOptions(
        corpus=CORPUS,
        sandbox=sandbox,
        tasks=more.pop("tasks", TASKS),
        workers=workers,
        events=EventStream(progress),
        **more,
    )
    return run_bench(options, pack), progress


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox", ["local", pytest.param("bwrap", marks=pytest.mark.needs("bwrap"))]
)
def test_two_workers_overlap_and_give_the_serial_report(
    pack: Pack, sandbox: str, tmp_path: Path
) -> None:
    serial, _ = _bench(pack, 1, sandbox)
    parallel, progress = _bench(pack, 2, sandbox, out=tmp_path / "out")
    assert [o.status for o in serial.outcomes] == ["resolved"] * len(TASKS)
    # Gathered in task order, equal to the serial run's, field by field.
    assert [o.id for o in parallel.outcomes] == list(TASKS)
    assert [_same(o) for o in parallel.outcomes] == [_same(o) for o in serial.outcomes]
    assert parallel.sandbox == serial.sandbox and parallel.exit_code == 0
    # Really at once: by the tasks' own records, the first two ran over the same stretch of time,
    # on two worker threads; the serial run's tasks never overlap.
    kept = [json.loads((tmp_path / "out" / t / "evidence.json").read_text()) for t in TASKS]
    records = [TaskOutcome(**data) for data in kept]
    assert _overlap(records[0], records[1])
    assert not any(
        _overlap(a, b) for a, b in zip(serial.outcomes, serial.outcomes[1:], strict=False)
    )
    assert len({name for name in progress.threads if name.startswith("fixloop-efficacy")}) == 2
    # Each in its own working copy and sandbox: distinct run ids, every task's own base.
    assert len({o.run_id for o in parallel.outcomes}) == len(TASKS)
    # Progress names each task by its place in the run, whatever finished first.
    places = {(item, index, total) for item, _, index, total in progress.lines}
    assert places == {(task, n, len(TASKS)) for n, task in enumerate(TASKS, 1)}
    assert [status for _, status, _, _ in progress.lines].count("running") == len(TASKS)


class Breaks:
    """The real local sandbox, except that opening one for `task` raises what no sandbox should:
    a failure of the harness itself in the middle of one task."""

    def __init__(self, task: str) -> None:
        self.task = task

    def __call__(self, *args: Any, **kwargs: Any) -> Sandbox:
        if f"fixloop-efficacy-{self.task}-" in str(kwargs.get("worktree", "")):
            raise RuntimeError(f"the sandbox of {self.task} broke")
        return open_sandbox(*args, **kwargs)


@pytest.mark.slow
def test_one_task_failing_stops_no_other(pack: Pack) -> None:
    result, _ = _bench(pack, 2, tasks=TASKS[:3], open_sandbox=Breaks("api-misuse"))
    statuses = [(o.id, o.status) for o in result.outcomes]
    assert statuses == [("regex", "resolved"), ("api-misuse", "error"), ("off-by-one", "resolved")]
    broke = "internal error: RuntimeError: the sandbox of api-misuse broke"
    assert result.outcomes[1].reason == broke
    assert result.exit_code == 1


def _costly(tmp_path: Path) -> Path:
    """Each task's own answer, its one call costing $1: the first call spends a $1 budget."""
    script: dict[str, Any] = {}
    for task in load_corpus(CORPUS).tasks:
        answer = yaml.safe_load(task.answer.read_text())
        script[task.id] = {key: {**entry, "cost_usd": 1.0} for key, entry in answer.items()}
    path = tmp_path / "costly.yaml"
    path.write_text(yaml.safe_dump(script))
    return path


@pytest.mark.slow
def test_the_run_budget_holds_across_workers(pack: Pack, tmp_path: Path) -> None:
    budget = RunBudget(max_cost_usd=1.0)
    result, progress = _bench(pack, 2, script=_costly(tmp_path), budget=budget)
    # Two workers took the first two tasks; by the time either was free, a call had spent the
    # budget, so neither of the last two started (no progress line, no sandbox, no call).
    assert [o.status for o in result.outcomes[2:]] == ["not-run", "not-run"]
    assert all(o.reason.startswith("run cost budget spent") for o in result.outcomes[2:])
    assert result.outcomes[0].status == "resolved"
    assert {item for item, *_ in progress.lines} <= set(TASKS[:2])


def test_the_pool_keeps_the_order_of_its_items_whatever_finishes_first() -> None:
    gate = threading.Event()

    def job(item: int) -> int:
        if item == 0:
            gate.wait(10)  # the first item finishes last: after the second one let it go
        else:
            gate.set()
        return item * 10

    assert LocalPool(2).map(job, [0, 1, 2]) == [0, 10, 20]
    assert LocalPool(1).map(lambda item: item + 1, [1, 2]) == [2, 3]


def test_zero_workers_is_refused() -> None:
    with pytest.raises(FixloopError, match="--workers"):
        LocalPool(0)


def test_longest_first_starts_unknown_then_longest_and_keeps_ties_in_order() -> None:
    took = {"a": 1.0, "b": 5.0, "d": 5.0, "e": 3.0}  # "c" never ran before
    items = ["a", "b", "c", "d", "e"]
    order = longest_first(items, took.get)
    assert [items[index] for index in order] == ["c", "b", "d", "e", "a"]


def test_in_order_starts_items_in_the_order_given_and_returns_them_in_theirs() -> None:
    started: list[str] = []

    def job(item: str) -> str:
        started.append(item)
        return item.upper()

    assert in_order(LocalPool(1), job, ["x", "y", "z"], [2, 0, 1]) == ["X", "Y", "Z"]
    assert started == ["z", "x", "y"]
    with pytest.raises(ValueError, match="each item once"):
        in_order(LocalPool(1), job, ["x", "y"], [0, 0])


@pytest.mark.slow
def test_a_bench_with_known_times_starts_the_longest_first_and_reports_in_task_order(
    pack: Pack,
) -> None:
    tasks = TASKS[:3]
    expected = {"regex": 1.0, "api-misuse": 2.0, "off-by-one": 9.0}
    result, progress = _bench(pack, 1, tasks=tasks, expected=expected)
    starts = [item for item, status, _, _ in progress.lines if status == "running"]
    assert starts == ["off-by-one", "api-misuse", "regex"]
    assert [o.id for o in result.outcomes] == list(tasks)
    # Its place in the run is still the task's place in the corpus, not in the start order.
    places = {(item, index) for item, _, index, _ in progress.lines}
    assert places == {(task, n) for n, task in enumerate(tasks, 1)}
