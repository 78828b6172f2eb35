"""Running execute-wave again on a tasks.json whose tasks it all committed says so and does
nothing; a task set back to pending, or one that failed, and the plan runs again."""

from __future__ import annotations

import json

from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores

MUL = "def mul(a, b):\n    return a * b\n"
SCRIPT = {
    "executor/1/implement": implement(1, {"src/mul.py": MUL}),
    "reviewer/1/verify": score(1, scores("logic", 9)),
}


def test_a_plan_whose_tasks_are_all_done_is_not_run_again(wave: Wave) -> None:
    wave.write_tasks([{"id": 1, "name": "add mul"}])
    first = wave.run(SCRIPT)
    assert first.exit_code == 0 and wave.statuses() == {"1": "done"}
    tip, plan = wave.repo.head(), wave.tasks_path.read_text()
    runs = sorted((wave.repo.path / ".git/fixloop/runs").iterdir())

    again = wave.run(SCRIPT)

    assert wave.backend is not None and wave.backend.calls == []
    assert (again.exit_code, again.run_id) == (0, "")
    assert again.summary_lines() == [again.nothing_to_do]
    assert (
        again.nothing_to_do.startswith("every task of ")
        and "is done (1 task(s))" in again.nothing_to_do
    )
    assert wave.repo.head() == tip and wave.tasks_path.read_text() == plan
    assert sorted((wave.repo.path / ".git/fixloop/runs").iterdir()) == runs


def test_a_task_set_back_to_pending_runs_again(wave: Wave) -> None:
    wave.write_tasks([{"id": 1, "name": "add mul"}])
    wave.run(SCRIPT)
    tasks = json.loads(wave.tasks_path.read_text())
    tasks[0]["status"] = "pending"
    wave.tasks_path.write_text(json.dumps(tasks))

    again = wave.run(SCRIPT)

    assert not again.nothing_to_do
    assert wave.backend is not None and [c.key for c in wave.backend.calls] == [
        "executor/1/implement",
        "reviewer/1/verify",
    ]
