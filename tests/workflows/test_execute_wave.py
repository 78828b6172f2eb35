"""workflows/execute-wave.md, run step by step with the real runner on a real repository.

Only the executors are faked: their worktree edits and result files are written by the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo

TASKS = [
    {"id": "1", "name": "adds b", "wave": 1, "status": "pending", "dependsOn": []},
    {"id": "2", "name": "edits a", "wave": 1, "status": "pending", "dependsOn": []},
    {"id": "3", "name": "broken result", "wave": 1, "status": "pending", "dependsOn": []},
    {"id": "4", "name": "after 3", "wave": 2, "status": "pending", "dependsOn": ["3"]},
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def step(repo: Path, name: str, **inputs: str) -> tuple[int, dict[str, str], str]:
    argv = [
        sys.executable,
        "-m",
        "fixloop",
        "step",
        "run",
        "execute-wave",
        name,
        "--repo",
        str(repo),
    ]
    for key, value in {"TASKS_FILE": "tasks.json", **inputs}.items():
        argv += ["--input", f"{key}={value}"]
    done = subprocess.run(
        argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    outputs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        outputs[key] = value
    return done.returncode, outputs, done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "a.txt").write_text("a\n")
    (path / "c.txt").write_text("c\n")
    git(path, "add", "a.txt", "c.txt")
    git(path, "commit", "--quiet", "-m", "initial")
    (path / "a.txt").write_text("a\nthe user's unstaged line\n")
    (path / "notes.txt").write_text("the user's untracked notes\n")
    (path / "tasks.json").write_text(json.dumps(TASKS))
    return path


def test_a_wave_merges_fails_closed_cleans_up_and_commits_only_its_files(repo: Path) -> None:
    code, out, _ = step(repo, "load-tasks")
    assert (code, out["BRANCH"], out["WAVES"]) == (0, "main", "1 2")
    code, out, _ = step(repo, "wave-tasks", WAVE="1")
    assert out["TASK_IDS"] == "1 2 3"
    worktrees = {}
    for task in ("1", "2", "3"):
        code, out, _ = step(repo, "task-worktree", WAVE="1", TASK_ID=task)
        assert code == 0
        worktrees[task] = Path(out["WORKTREE"])
    # The executors: task 1 adds a file, task 2 edits the file the user is editing, task 3
    # writes an unparsable result.
    (worktrees["1"] / "b.txt").write_text("b\n")
    (worktrees["2"] / "a.txt").write_text("task 2's a\n")
    context = repo / ".fixloop" / "waves" / "context"
    (context / "impl-result-1.json").write_text('{"id": "1", "status": "done"}')
    (context / "impl-result-2.json").write_text('{"id": "2", "status": "done"}')
    (context / "impl-result-3.json").write_text("not json")
    assert step(repo, "baseline", WAVE="1")[0] == 0

    merged = {task: step(repo, "merge-task", WAVE="1", TASK_ID=task)[1] for task in ("1", "2", "3")}
    assert (merged["1"]["MERGED"], merged["1"]["FILES_MODIFIED"]) == ("yes", "b.txt")
    assert (merged["2"]["MERGED"], merged["2"]["MERGE_ERROR"]) == (
        "no",
        "merge refused or conflicted",
    )
    assert (merged["3"]["MERGED"], merged["3"]["MERGE_ERROR"]) == (
        "no",
        "implementation result invalid",
    )
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo, "branch", "--list", "fixloop/*") == ""
    assert not list((repo / ".fixloop" / "waves" / "worktrees").glob("*.sentinel"))
    assert (repo / "a.txt").read_text() == "a\nthe user's unstaged line\n"

    # Task 1 fails verification after all: roll it back, then commit the wave.
    tasks = json.loads((repo / "tasks.json").read_text())
    tasks[0]["filesModified"] = ["b.txt"]
    (repo / "tasks.json").write_text(json.dumps(tasks))
    assert step(repo, "rollback-failed", WAVE="1", FAILED_IDS="1", PASSED_IDS="")[0] == 0
    message = "feat: wave 1 $(touch pwned) `id` 'quoted'"
    code, out, _ = step(repo, "commit-passed", WAVE="1", PASSED_IDS="", MESSAGE=message)
    assert (code, out["COMMITTED"]) == (0, "yes")
    assert git(repo, "log", "-1", "--format=%s") == message + "\n"
    assert git(repo, "show", "--name-status", "--format=", "HEAD") == "D\tb.txt\n"
    assert not (repo / "pwned").exists()
    assert (
        git(repo, "status", "--porcelain", "--", "a.txt", "notes.txt") == " M a.txt\n?? notes.txt\n"
    )
    assert git(repo, "tag", "--list", "fixloop-*") == ""


def test_a_staged_index_or_a_detached_head_is_refused_before_anything(
    repo: Path, user_repo: UserRepo
) -> None:
    (user_repo.path / "tasks.json").write_text(json.dumps(TASKS))
    before = user_repo.user_work()
    code, _, err = step(user_repo.path, "load-tasks")
    assert code != 0 and "staged changes" in err
    assert user_repo.user_work() == before
    git(repo, "checkout", "--quiet", "--detach")
    code, _, err = step(repo, "load-tasks")
    assert code != 0 and "HEAD is detached" in err
    assert not (repo / ".fixloop").exists()


def test_a_failing_merge_step_still_removes_the_task_worktree(repo: Path) -> None:
    code, out, _ = step(repo, "task-worktree", WAVE="1", TASK_ID="1")
    assert code == 0
    # No baseline tag: merge-task refuses to merge, and its EXIT trap still cleans up.
    code, _, _ = step(repo, "merge-task", WAVE="1", TASK_ID="1")
    assert code != 0
    assert not Path(out["WORKTREE"]).exists()
    assert git(repo, "branch", "--list", "fixloop/*") == ""
