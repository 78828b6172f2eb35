"""workflows/execute-wave.md's own steps, one at a time, as `fixloop step run` runs them by hand.

A run's worktree and two task worktrees are made with git-protocol's `setup-worktree` (the task
ones run in the run's worktree, as execute-wave does); then the document's steps merge, remove,
checkpoint and resume on a real repository holding the user's work in progress.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo

RUN = "r1"


def step(cwd: Path, workflow: str, name: str, **inputs: str) -> tuple[int, dict[str, str], str]:
    argv = [sys.executable, "-m", "fixloop", "step", "run", workflow, name, "--repo", str(cwd)]
    for key, value in inputs.items():
        argv += ["--input", f"{key}={value}"]
    done = subprocess.run(
        argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    outputs = dict(line.partition("=")[::2] for line in done.stdout.splitlines() if "=" in line)
    return done.returncode, outputs, done.stderr


def worktree(cwd: Path, run_id: str) -> Path:
    code, out, err = step(cwd, "git-protocol", "setup-worktree", RUN_ID=run_id)
    assert code == 0, err
    return Path(out["WORKTREE"])


def commit_in(tree: Path, path: str, text: str) -> None:
    (tree / path).parent.mkdir(parents=True, exist_ok=True)
    (tree / path).write_text(text)
    listed = tree.parent / f"{tree.name}.paths"
    listed.write_bytes(path.encode() + b"\0")
    code, _, err = step(
        tree,
        "git-protocol",
        "commit-paths",
        WORKTREE=str(tree),
        PATHS_FILE=str(listed),
        MESSAGE=f"task work on {path}",
    )
    assert code == 0, err


@pytest.fixture
def run_tree(user_repo: UserRepo) -> Path:
    return worktree(user_repo.path, RUN)


def task_commit(tree: Path, run_id: str, task_id: str, path: str, text: str) -> str:
    """The task's work as one commit, as execute-wave makes it: checkpoint-task in its worktree."""
    (tree / path).write_text(text)
    listed = tree.parent / f"{tree.name}.paths"
    listed.write_bytes(path.encode() + b"\0")
    code, out, err = step(
        tree,
        "execute-wave",
        "checkpoint-task",
        RUN_ID=run_id,
        WORKTREE=str(tree),
        TASK_ID=task_id,
        PATHS_FILE=str(listed),
        MESSAGE=f"task {task_id}: $(touch pwned)",
    )
    assert code == 0, err
    return out["CHECKPOINT"]


def test_merge_by_id_a_conflict_is_aborted_and_remove_task_cleans_up(
    user_repo: UserRepo, run_tree: Path
) -> None:
    before = user_repo.user_work()
    first, second = worktree(run_tree, f"{RUN}-task-1"), worktree(run_tree, f"{RUN}-task-2")
    base = user_repo.git("-C", str(first), "rev-parse", "HEAD")
    one = task_commit(
        first, f"{RUN}-task-1", "1", "src/app.py", "def add(a, b):\n    return a + b\n"
    )
    two = task_commit(
        second, f"{RUN}-task-2", "2", "src/app.py", "def add(a, b):\n    return b + a\n"
    )
    assert user_repo.git("-C", str(first), "rev-parse", "HEAD") == base  # the branch stays
    inputs = {"WORKTREE": str(run_tree)}
    code, out, _ = step(
        run_tree, "execute-wave", "merge-task", **inputs, TASK_ID="1", TASK_COMMIT=one
    )
    assert (code, out["MERGED"]) == (0, "yes")
    code, out, _ = step(
        run_tree, "execute-wave", "merge-task", **inputs, TASK_ID="2", TASK_COMMIT=two
    )
    assert (code, out["MERGED"]) == (0, "no") and "conflicted" in out["MERGE_ERROR"]
    status = user_repo.git("-C", str(run_tree), "status", "--porcelain")
    assert status == ""  # the conflicted merge was aborted; the first merge stands
    assert "return a + b" in (run_tree / "src/app.py").read_text()
    assert user_repo.git("-C", str(run_tree), "log", "-2", "--format=%s").splitlines() == [
        "merge: task #1 implementation",
        "task 1: $(touch pwned)",
    ]
    for task in ("1", "2"):
        code, out, _ = step(
            run_tree, "execute-wave", "remove-task", TASK_RUN_ID=f"{RUN}-task-{task}"
        )
        assert (code, out["REMOVED"]) == (0, "yes")
    assert user_repo.worktrees()[1:] == [str(run_tree)]
    assert user_repo.branches() == ["fixloop/run/r1", "main"]
    assert user_repo.git("tag", "--list", f"fixloop/{RUN}-task-*") == ""
    assert sorted(p.name for p in (user_repo.path / ".git/fixloop/sentinels").iterdir()) == [RUN]
    assert user_repo.user_work() == before
    assert not list(user_repo.path.parent.rglob("pwned"))
    # Removing again finds nothing, and says so.
    assert step(run_tree, "execute-wave", "remove-task", TASK_RUN_ID=f"{RUN}-task-1")[1] == {
        "REMOVED": "no"
    }


def test_a_checkpoint_is_a_run_tag_and_moves_nothing(user_repo: UserRepo, run_tree: Path) -> None:
    (run_tree / "src/app.py").write_text("checkpointed\n")
    (run_tree / "src/new.py").write_text("new\n")
    (run_tree / "README.md").write_text("not the task's\n")
    head = user_repo.git("-C", str(run_tree), "rev-parse", "HEAD")
    index = user_repo.git("-C", str(run_tree), "ls-files", "-s")
    listed = run_tree.parent / "paths"
    listed.write_bytes(b"src/app.py\0src/new.py\0src/gone.py\0")
    code, out, err = step(
        run_tree,
        "execute-wave",
        "checkpoint-task",
        RUN_ID=RUN,
        WORKTREE=str(run_tree),
        TASK_ID="7",
        PATHS_FILE=str(listed),
    )
    assert code == 0, err
    tag = f"refs/tags/fixloop/{RUN}/checkpoint-7"
    assert user_repo.git("rev-parse", tag).strip() == out["CHECKPOINT"]
    assert user_repo.git("show", f"{tag}:src/app.py") == "checkpointed\n"
    assert user_repo.git("show", f"{tag}:src/new.py") == "new\n"
    assert user_repo.git("show", f"{tag}:README.md") == "# demo\n\nA small project.\n"
    assert user_repo.git("-C", str(run_tree), "rev-parse", "HEAD") == head
    assert user_repo.git("-C", str(run_tree), "ls-files", "-s") == index


def test_resume_fast_forwards_only_and_refuses_a_moved_branch(
    user_repo: UserRepo, run_tree: Path
) -> None:
    before = user_repo.user_work()
    commit_in(run_tree, "src/wave1.py", "done = True\n")
    waves = user_repo.git("-C", str(run_tree), "rev-parse", "HEAD").strip()
    code, out, err = step(user_repo.path, "execute-wave", "resume-run", WAVES_COMMIT=waves)
    assert (code, out["BRANCH"]) == (0, "main"), err
    assert user_repo.head() == waves and user_repo.user_work() == before
    # The user commits; the next resume refuses to move anything.
    commit_in(run_tree, "src/wave2.py", "more = True\n")
    later = user_repo.git("-C", str(run_tree), "rev-parse", "HEAD").strip()
    user_repo.git("commit", "--quiet", "-m", "user: meanwhile")  # their staged hunk
    tip = user_repo.head()
    code, _, err = step(user_repo.path, "execute-wave", "resume-run", WAVES_COMMIT=later)
    assert code == 1 and "main moved since the stopped run began" in err
    assert user_repo.head() == tip


def test_backpressure_runs_the_users_command_as_data(user_repo: UserRepo, run_tree: Path) -> None:
    log = run_tree.parent / "build.log"
    command = 'echo "it\'s $(echo fine)" && test -f src/app.py'
    code, out, _ = step(
        run_tree,
        "execute-wave",
        "backpressure",
        WORKTREE=str(run_tree),
        BACKPRESSURE_COMMAND=command,
        LOG_FILE=str(log),
    )
    assert (code, out["BACKPRESSURE"], log.read_text()) == (0, "pass", "it's fine\n")
    code, out, _ = step(
        run_tree,
        "execute-wave",
        "backpressure",
        WORKTREE=str(run_tree),
        BACKPRESSURE_COMMAND="echo broken >&2; exit 3",
        LOG_FILE=str(log),
    )
    assert (code, out["BACKPRESSURE"], log.read_text()) == (0, "fail", "broken\n")


def test_the_documents_contracts_hold() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "check", "workflows/execute-wave.md"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
