"""A fix-engine run that stops part way continues with `--resume`, never doing a done item again.

A spent run budget stops the run between calls; a SIGKILL (`FIXLOOP_CRASH_AT`, the real CLI in a
subprocess) stops it anywhere. Either way meta.yaml and the checklist on disk say where it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.gitrepo import UserRepo
from tests.workflows.fix_engine.scenario import (
    MINI_PRD,
    fix_engine_cli,
    make_section_repo,
    run,
    script,
    state_dir,
    subjects,
)
from tests.workflows.fix_engine.test_workflow import passing

from fixloop.agents.budget import RunBudget
from fixloop.diagnostics import FixloopError


@pytest.fixture
def section(tmp_path: Path) -> UserRepo:
    return make_section_repo(tmp_path / "repo")


def _priced(replies: dict[str, Any], cost: float) -> dict[str, Any]:
    return {key: {**reply, "cost_usd": cost} for key, reply in replies.items()}


def test_a_spent_budget_stops_the_run_and_resume_continues_it(section: UserRepo) -> None:
    repo, tip = section.path, section.head()
    before = section.user_work()
    stopped, backend = run(repo, _priced(passing(), 0.01), budget=RunBudget(max_cost_usd=0.035))
    assert len(backend.calls) == 4  # AC-1's two attempts; check-2's executor is refused
    assert stopped.status == "stopped" and stopped.exit_code == 1
    assert "budget" in stopped.stopped_by
    assert [item.status for item in stopped.items] == ["done", "pending"]
    meta = yaml.safe_load((state_dir(repo) / "meta.yaml").read_text(encoding="utf-8"))
    assert meta["status"] == "in_progress" and meta["items"]["check-2"]["attempts"] == []
    assert len(subjects(repo, tip)) == 1, "AC-1's commit reached the branch at cleanup"

    with pytest.raises(FixloopError) as refused:
        run(repo, passing())
    [problem] = refused.value.diagnostics
    assert refused.value.exit_code == 2
    assert problem.format().endswith(
        "meta: status: a stopped run left this section in progress: add --resume"
    )

    resumed, backend = run(repo, passing(), resume=True)
    assert [call.key for call in backend.calls] == [
        "executor/check-2/attempt-1",
        "verifier/check-2/attempt-1",
    ]
    assert resumed.status == "completed"
    assert [item.status for item in resumed.items] == ["done", "done"]
    assert len(subjects(repo, tip)) == 2
    assert section.user_work() == before


def test_a_finished_escalated_section_runs_again_retrying_only_what_failed(
    section: UserRepo,
) -> None:
    repo, tip = section.path, section.head()
    first, _ = run(repo, script())
    assert first.status == "escalated"
    with pytest.raises(FixloopError, match="nothing to resume"):
        run(repo, passing(), resume=True)

    again, backend = run(repo, passing())
    assert [call.key for call in backend.calls] == [
        "executor/check-2/attempt-1",
        "verifier/check-2/attempt-1",
    ]
    assert again.status == "completed"
    assert len(subjects(repo, tip)) == 2
    history = state_dir(repo) / "history" / "1"
    assert (history / "error_report.yaml").is_file() and (history / "meta.yaml").is_file()


def _calls(repo: Path, run_id: str) -> list[str]:
    events = repo / ".git" / "fixloop" / "runs" / run_id / "events.jsonl"
    lines = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    return [line["key"] for line in lines if line["event"] == "agent"]


@pytest.mark.parametrize(
    ("crash", "again"),
    [
        # Killed right after AC-1's commit, before meta.yaml recorded it: the commit is found on
        # the dead run's branch, fast-forwarded and recorded; AC-1 is not done again.
        ("commit-paths#1:999", []),
        # Killed after AC-1's first verdict was recorded: attempt 2 follows, attempt 1 is not
        # made again.
        ("record-verdict#1:999", ["executor/AC-1/attempt-2", "verifier/AC-1/attempt-2"]),
    ],
    ids=["after-the-commit", "after-a-verdict"],
)
def test_a_killed_run_resumes_where_it_stopped(
    section: UserRepo, tmp_path: Path, crash: str, again: list[str]
) -> None:
    repo, tip = section.path, section.head()
    before = section.user_work()
    script = tmp_path / "script.json"
    script.write_text(json.dumps(passing()), encoding="utf-8")
    killed = fix_engine_cli(repo, script, crash=crash)
    assert killed.returncode == -9, killed.stderr
    assert not (state_dir(repo) / "COMPLETE").exists()

    resumed = fix_engine_cli(repo, script, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    envelope = json.loads(resumed.stdout)
    assert envelope["result"]["status"] == "completed"
    assert envelope["counts"] == {"done": 2}
    check_2 = ["executor/check-2/attempt-1", "verifier/check-2/attempt-1"]
    assert _calls(repo, envelope["run_id"]) == again + check_2
    made = subjects(repo, tip)
    assert len(made) == 2 and made[0].startswith("calc: AC-1 "), made
    assert section.user_work() == before
    assert section.worktrees() == [str(repo)] and section.branches() == ["main"]


def test_a_stopped_runs_commits_kept_on_a_branch_must_be_merged_before_resuming(
    section: UserRepo, tmp_path: Path
) -> None:
    repo = section.path
    section.git("add", "--all")  # a clean tree, so that the user can merge by hand below
    section.git("commit", "--quiet", "-m", "user: everything")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(passing()), encoding="utf-8")
    assert fix_engine_cli(repo, script, crash="record-commit#1:999").returncode == -9
    # The user commits meanwhile: the dead run's branch can no longer fast-forward.
    (repo / "src" / "util.py").write_text("the user's own change\n", encoding="utf-8")
    section.git("commit", "--quiet", "-m", "user: meanwhile", "--", "src/util.py")
    refused = fix_engine_cli(repo, script, "--resume")
    assert refused.returncode == 1
    assert "are not on your branch" in refused.stderr
    kept = [b for b in section.branches() if b.startswith("fixloop/run/")]
    assert len(kept) == 1
    section.git("merge", "--quiet", "--no-edit", kept[0])
    section.git("branch", "-D", kept[0])
    resumed = fix_engine_cli(repo, script, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    envelope = json.loads(resumed.stdout)
    assert envelope["result"]["status"] == "completed"
    assert _calls(repo, envelope["run_id"]) == [
        "executor/check-2/attempt-1",
        "verifier/check-2/attempt-1",
    ]


def test_a_run_on_a_section_another_live_run_works_on_is_refused(section: UserRepo) -> None:
    from fixloop.runs.exclusive import input_claim
    from fixloop.runs.run import Run

    # Spelt another way (its folder, not the file): still the same section, the same claim.
    other = Run.start(section.path, "fix-engine", run_id="00000000T000000Z-1-aaaaaa")
    with other, input_claim("fix-engine", section.path, section.path / MINI_PRD) as claimed:
        assert claimed
        with pytest.raises(FixloopError, match="another fix-engine run") as busy:
            run(section.path, passing(), mini_prd=str(Path(MINI_PRD).parent))
        assert "00000000T000000Z-1-aaaaaa" in str(busy.value)
        assert "is working on this input; run again when it is done" in str(busy.value)
        assert busy.value.exit_code == 2
        assert not (state_dir(section.path) / "meta.yaml").exists(), "nothing was written"
        assert [p.name for p in (section.path / ".git" / "fixloop" / "runs").iterdir()] == [
            other.id
        ], "no run of its own started"
    result, _ = run(section.path, passing())
    assert result.status == "completed"
