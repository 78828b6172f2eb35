"""Recovery of runs that died: what it removes, what it keeps and says, what it leaves alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo, git

from fixloop.cli.main import main
from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import leftover_run_ids, recover
from fixloop.runs.run import Run, read_run
from fixloop.steps.runner import run_step


@pytest.fixture(scope="module")
def protocol() -> WorkflowDoc:
    return load_protocol()


def _abandoned_run(repo: UserRepo, protocol: WorkflowDoc, commits: int = 0) -> tuple[str, Path]:
    """A run that set up its worktree, made `commits` fix commits, and died (lock released)."""
    run = Run.start(repo.path, "demo")
    setup = run_step(protocol, "setup-worktree", cwd=repo.path, inputs={"RUN_ID": run.id}, run=run)
    assert setup.ok, setup.describe_failure()
    worktree = Path(setup.outputs["WORKTREE"])
    run_step(protocol, "tag", cwd=repo.path, inputs={"RUN_ID": run.id, "WORKTREE": str(worktree)})
    for number in range(commits):
        (worktree / "src" / "app.py").write_text(f"fix {number}\n")
        git(worktree, "commit", "--quiet", "-am", f"fix {number}")
    run.close()  # the process "dies": its lock is released, run.json still says running
    return run.id, worktree


def test_a_dead_run_without_commits_is_removed_entirely(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    before = user_repo.user_work()
    run_id, worktree = _abandoned_run(user_repo, protocol)
    report = recover(user_repo.path, protocol)
    [item] = report.recovered
    assert item.run_id == run_id and item.had_sentinel
    assert item.worktree_removed and item.branch_deleted and item.kept_branch is None
    assert item.worktree == str(worktree)
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert user_repo.branches() == ["main"]
    assert user_repo.git("tag", "--list", "fixloop/*") == ""
    assert leftover_run_ids(user_repo.path, user_repo.path / ".git" / "fixloop") == set()
    assert user_repo.user_work() == before
    info = read_run(user_repo.path / ".git" / "fixloop" / "runs" / run_id)
    assert info["state"] == "crashed" and "recovered_at" in info
    assert recover(user_repo.path, protocol).lines() == ["nothing to recover"]


def test_a_temp_branch_holding_fix_commits_is_kept_and_reported(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    old_tip = user_repo.head()
    run_id, _ = _abandoned_run(user_repo, protocol, commits=2)
    fix_tip = user_repo.head(f"fixloop/run/{run_id}")
    report = recover(user_repo.path, protocol)
    [item] = report.recovered
    assert item.worktree_removed and not item.branch_deleted
    assert item.kept_branch == f"fixloop/run/{run_id}" and item.unmerged == 2
    assert item.branch == "main"
    line = item.describe()
    assert "KEPT branch fixloop/run/" in line and "2 commit(s) not on main" in line
    assert f"git merge --ff-only fixloop/run/{run_id}" in line
    assert user_repo.head() == old_tip
    assert user_repo.head(f"fixloop/run/{run_id}") == fix_tip
    assert user_repo.worktrees() == [str(user_repo.path)]
    # Later recoveries keep reporting it (the sentinel is gone; no other branch holds the commits).
    [again] = recover(user_repo.path, protocol).recovered
    assert again.kept_branch == item.kept_branch and again.unmerged == 2 and again.branch is None


def test_a_live_run_is_left_alone(user_repo: UserRepo, protocol: WorkflowDoc) -> None:
    live = Run.start(user_repo.path, "demo")
    setup = run_step(protocol, "setup-worktree", cwd=user_repo.path, inputs={"RUN_ID": live.id})
    assert setup.ok
    report = recover(user_repo.path, protocol)
    assert report.recovered == [] and report.live == [live.id]
    assert f"run {live.id}: still running; left alone" in report.lines()
    assert Path(setup.outputs["WORKTREE"]).is_dir()
    live.close()
    [item] = recover(user_repo.path, protocol).recovered
    assert item.run_id == live.id and item.worktree_removed


def test_an_orphan_worktree_without_sentinel_is_found_by_its_place(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    run_id, worktree = _abandoned_run(user_repo, protocol)
    (user_repo.path / ".git" / "fixloop" / "sentinels" / run_id).unlink()
    [item] = recover(user_repo.path, protocol).recovered
    assert not item.had_sentinel and item.worktree_removed and item.branch_deleted
    assert not worktree.exists()
    assert user_repo.branches() == ["main"]


def test_a_recovery_that_is_itself_killed_can_run_again(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    run_id, _ = _abandoned_run(user_repo, protocol, commits=1)
    # Recovery died after removing the worktree, before touching branch and sentinel.
    user_repo.git("worktree", "remove", "--force", f".fixloop/worktrees/{run_id}")
    [item] = recover(user_repo.path, protocol).recovered
    assert not item.worktree_removed and item.kept_branch == f"fixloop/run/{run_id}"
    assert not (user_repo.path / ".git" / "fixloop" / "sentinels" / run_id).exists()


def test_fixloop_recover_says_what_it_removed_and_kept(
    user_repo: UserRepo, protocol: WorkflowDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    removed, _ = _abandoned_run(user_repo, protocol)
    kept, _ = _abandoned_run(user_repo, protocol, commits=1)
    assert main(["recover", "--repo", str(user_repo.path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted(
        [
            f"run {removed}: removed worktree {user_repo.path}/.fixloop/worktrees/{removed}; "
            f"deleted branch fixloop/run/{removed}; removed sentinel",
            f"run {kept}: removed worktree {user_repo.path}/.fixloop/worktrees/{kept}; "
            f"removed sentinel; KEPT branch fixloop/run/{kept}: 1 commit(s) not on main; "
            f"merge it (git merge --ff-only fixloop/run/{kept}) or delete it "
            f"(git branch -D fixloop/run/{kept})",
        ]
    )
    assert main(["recover", "--repo", str(user_repo.path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["ok"], data["command"], data["counts"]) == (True, "recover", {"kept-branch": 1})
    [again] = data["items"]
    assert again["id"] == kept and again["status"] == "kept-branch"
    assert again["kept_branch"] == f"fixloop/run/{kept}" and again["unmerged"] == 1


def test_fixloop_runs_list_shows_states(
    user_repo: UserRepo, protocol: WorkflowDoc, capsys: pytest.CaptureFixture[str]
) -> None:
    crashed, _ = _abandoned_run(user_repo, protocol)
    done = Run.start(user_repo.path, "review-fix")
    done.finish("finished")
    assert main(["runs", "list", "--repo", str(user_repo.path), "--json"]) == 0
    states = {r["id"]: r["status"] for r in json.loads(capsys.readouterr().out)["items"]}
    assert states == {crashed: "crashed", done.id: "finished"}
    assert main(["runs", "list", "--repo", str(user_repo.path)]) == 0
    text = capsys.readouterr().out
    assert f"{done.id}  review-fix" in text and "crashed" in text
    kept, _ = _abandoned_run(user_repo, protocol, commits=1)
    recover(user_repo.path, protocol)
    assert main(["runs", "list", "--repo", str(user_repo.path)]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith(kept)]
    assert line.endswith(
        f"kept fixloop/run/{kept}  died in git-protocol#setup-worktree  (recovered)"
    )
    assert "crashed" in line


RUNTIME_DIES_ALONE = """
import sys
from collections.abc import Sequence
from pathlib import Path
from fixloop.runs.git_session import load_protocol
from fixloop.runs.run import Run
from fixloop.steps.runner import run_step
from tests.helpers.workflows import write_workflow
repo, pack = Path(sys.argv[1]), Path(sys.argv[2])
slow = write_workflow(pack, '''---
name: slow
description: A step that outlives its runtime.
inputs:
  RUN_ID: {type: string}
---

## Set up, then keep working {#work}

```bash
printf 'started\\\\n' > "$FIXLOOP_RUN_DIR/../../started"
sleep 3
```
''')
run = Run.start(repo, "slow")
setup = run_step(load_protocol(), "setup-worktree", cwd=repo, inputs={"RUN_ID": run.id}, run=run)
print(run.id, flush=True)
run_step(slow, "work", cwd=repo, inputs={"RUN_ID": run.id}, run=run)
"""


def test_a_step_that_outlives_its_runtime_keeps_the_run_live(
    user_repo: UserRepo, protocol: WorkflowDoc, tmp_path: Path
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", RUNTIME_DIES_ALONE, str(user_repo.path), str(tmp_path / "pack")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert process.stdout is not None
    run_id = process.stdout.readline().strip()
    started = user_repo.path / ".git" / "fixloop" / "started"
    deadline = time.monotonic() + 10
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)  # the runtime alone; its step's bash keeps going
    process.wait()
    report = recover(user_repo.path, protocol)
    assert report.live == [run_id] and report.recovered == []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not recover(user_repo.path, protocol).recovered:
        time.sleep(0.2)
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert user_repo.branches() == ["main"]


def test_a_temp_branch_the_user_checked_out_is_kept_not_forced(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    run_id, _ = _abandoned_run(user_repo, protocol)
    user_repo.git("worktree", "remove", "--force", f".fixloop/worktrees/{run_id}")
    user_repo.git("checkout", "--quiet", f"fixloop/run/{run_id}")  # the user inspects it
    before = user_repo.user_work()
    [item] = recover(user_repo.path, protocol).recovered
    assert item.error is None and item.kept_branch == f"fixloop/run/{run_id}"
    assert "could not be deleted (checked out?)" in item.describe()
    assert user_repo.git("symbolic-ref", "--short", "HEAD").strip() == f"fixloop/run/{run_id}"
    assert user_repo.user_work() == before


def test_the_sweepers_handed_in_see_the_dead_runs_only_and_speak_first(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    dead_id, _ = _abandoned_run(user_repo, protocol)
    live, other = Run.start(user_repo.path, "demo"), Run.start(user_repo.path, "demo")
    seen: list[list[str]] = []

    def sweeper(folders: Sequence[Path]) -> list[str]:
        seen.append([folder.name for folder in folders])
        return [f"run {folder.name}: swept" for folder in folders]

    try:
        report = recover(user_repo.path, protocol, run=live, sweepers=(sweeper, sweeper))
    finally:
        live.close()
        other.close()
    assert seen == [[dead_id], [dead_id]]  # never the recovering run's own folder, nor a live one
    assert report.lines()[:2] == [f"run {dead_id}: swept"] * 2
    assert report.to_json()["swept"] == [f"run {dead_id}: swept"] * 2
    assert [item.run_id for item in report.recovered] == [dead_id]


def _old_layout_run(repo: UserRepo, *, sentinel: bool) -> tuple[str, Path]:
    """A run that died when runs kept their worktree in the state folder (`.git/fixloop/
    worktrees/R`), made by hand as that setup-worktree did: worktree, temp branch, sentinel."""
    run = Run.start(repo.path, "demo")
    state = repo.path / ".git" / "fixloop"
    worktree = state / "worktrees" / run.id
    worktree.parent.mkdir(parents=True, exist_ok=True)
    repo.git("worktree", "add", "--quiet", "-b", f"fixloop/run/{run.id}", str(worktree), "HEAD")
    if sentinel:
        path = state / "sentinels" / run.id
        path.parent.mkdir(parents=True, exist_ok=True)
        for key, value in (
            ("runid", run.id),
            ("repo", str(repo.path)),
            ("branch", "main"),
            ("base", repo.head()),
            ("tempbranch", f"fixloop/run/{run.id}"),
            ("worktree", str(worktree)),
        ):
            git(repo.path, "config", "--file", str(path), f"fixloop.{key}", value)
    run.close()
    return run.id, worktree


@pytest.mark.parametrize("sentinel", [True, False], ids=["with-sentinel", "without-sentinel"])
def test_a_run_made_in_the_old_layout_is_still_found_and_removed(
    user_repo: UserRepo, protocol: WorkflowDoc, sentinel: bool
) -> None:
    before = user_repo.user_work()
    run_id, worktree = _old_layout_run(user_repo, sentinel=sentinel)
    assert leftover_run_ids(user_repo.path, user_repo.path / ".git" / "fixloop") == {run_id}

    [item] = recover(user_repo.path, protocol).recovered

    assert item.run_id == run_id and item.had_sentinel is sentinel
    assert item.worktree == str(worktree)
    assert item.worktree_removed and item.branch_deleted
    assert not worktree.exists()
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert user_repo.branches() == ["main"]
    assert user_repo.user_work() == before


def test_a_new_run_worktree_is_outside_git_and_hidden_from_the_users_status(
    user_repo: UserRepo, protocol: WorkflowDoc
) -> None:
    status = user_repo.git("status", "--porcelain", "--untracked-files=all")
    run_id, worktree = _abandoned_run(user_repo, protocol)

    assert worktree == user_repo.path / ".fixloop" / "worktrees" / run_id
    assert user_repo.git("status", "--porcelain", "--untracked-files=all") == status
    [item] = recover(user_repo.path, protocol).recovered
    assert item.worktree_removed and not worktree.exists()
