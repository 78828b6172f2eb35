"""A killed run continues from tasks.json, its state and its wave results (`--resume`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.workflows.execute_wave import crash_scenario
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.crash_scenario import EXPECTED
from tests.workflows.execute_wave.test_crash_matrix import driver, wait_until_dead

from fixloop.diagnostics import FixloopError
from fixloop.events import EventKind


def agent_keys(repo: Path, run_id: str) -> list[str]:
    events = repo / ".git" / "fixloop" / "runs" / run_id / "events.jsonl"
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    return [e["key"] for e in lines if e["event"] == "agent"]


def test_a_run_killed_in_wave_two_resumes_without_running_wave_one_again(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    before = user_repo.user_work()
    old_tip = user_repo.head()
    tasks, script = crash_scenario.write(tmp_path)
    # Killed right after merging task 4: wave 1 is finished and committed on the run's branch.
    assert driver(user_repo.path, tasks, script, "merge-task#4:3").returncode == -9
    wait_until_dead(user_repo.path)
    assert user_repo.head() == old_tip  # nothing reached the user's branch yet
    statuses = {str(t["id"]): t["status"] for t in json.loads(tasks.read_text())["tasks"]}
    assert statuses == {"1": "done", "2": "failed", "3": "failed", "4": "in_progress"}

    done = driver(user_repo.path, tasks, script, None, "--resume")
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["statuses"] == EXPECTED
    keys = agent_keys(user_repo.path, result["run"])
    assert keys == [
        "executor/4/implement",
        "reviewer/4/verify",
        "fixer/4/attempt-1",
        "reviewer/4/attempt-1",
    ]
    subjects = user_repo.git("log", "--format=%s", f"{old_tip}..main").splitlines()
    assert subjects[0] == "feat: implement wave 2 tasks (use add)"
    assert "feat: implement wave 1 tasks (fix add)" in subjects
    assert user_repo.branches() == ["main"] and user_repo.worktrees() == [str(user_repo.path)]
    assert user_repo.user_work() == before
    context = user_repo.path / ".git" / "fixloop" / "runs" / result["run"] / "context"
    assert sorted(p.name for p in context.glob("wave-result-*")) == [
        "wave-result-1.json",
        "wave-result-2.json",
    ]


def test_without_resume_a_stopped_runs_waves_are_named_in_a_warning(
    wave: Wave, tmp_path: Path
) -> None:
    tasks, script = crash_scenario.write(tmp_path)
    wave.tasks_path.parent.mkdir(parents=True, exist_ok=True)
    wave.tasks_path.write_text(tasks.read_text())
    assert driver(wave.repo.path, wave.tasks_path, script, "end-wave#1:9").returncode == -9
    wait_until_dead(wave.repo.path)
    wave.run(json.loads(script.read_text()), wave=2)
    warnings = [e.message for e in wave.events if e.kind is EventKind.WARNING]
    assert any("stopped after committing waves your branch does not have" in w for w in warnings)


def test_resume_with_nothing_to_resume_is_one_line(wave: Wave) -> None:
    wave.write_tasks([{"id": 1, "name": "a"}])
    with pytest.raises(FixloopError) as caught:
        wave.run({}, resume="latest")
    assert "no stopped run of this plan to resume" in str(caught.value)
    assert caught.value.exit_code == 2
    runs = wave.repo.path / ".git" / "fixloop" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == [], "nothing to resume starts no run"
    assert wave.repo.branches() == ["main"] and wave.repo.worktrees() == [str(wave.repo.path)]
