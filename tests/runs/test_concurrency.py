"""Two runs started at the same instant on one repository both finish, and neither hurts the other.

Each run works in its own worktree on its own temp branch; the steps that touch what all worktrees
share (branches, tags, packed-refs, the user's index during the fast-forward) take the repository
lock. Both runs start from the same tip, so whichever cleans up second finds the user's branch
already fast-forwarded by the first: a fast-forward is then impossible, and its branch must be
kept and reported with its commits, never merged or dropped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).resolve().parent.parent / "helpers" / "protocol_run.py"


def _start(repo: Path, prefix: str, go: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(repo), "--prefix", prefix, "--go", str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("attempt", range(3))
def test_two_runs_at_once_both_finish(user_repo: UserRepo, tmp_path: Path, attempt: int) -> None:
    before = user_repo.user_work()
    status = user_repo.git("status", "--porcelain=v1", "--untracked-files=all")
    old_tip = user_repo.head()
    go = tmp_path / f"go-{attempt}"
    runs = [_start(user_repo.path, prefix, go) for prefix in ("a", "b")]
    go.touch()
    results = []
    for process in runs:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        results.append(json.loads(stdout))
    assert results[0]["run"] != results[1]["run"]
    states = sorted(result["state"] for result in results)
    assert states == ["finished", "kept-branch"]
    [merged] = [r for r in results if r["state"] == "finished"]
    [kept] = [r for r in results if r["state"] == "kept-branch"]
    assert user_repo.git("rev-list", f"{old_tip}..main").split() == merged["commits"][::-1]
    assert kept["kept_branch"] == f"fixloop/run/{kept['run']}"
    assert (
        user_repo.git("rev-list", f"{old_tip}..{kept['kept_branch']}").split()
        == (kept["commits"][::-1])
    )
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert sorted(user_repo.branches()) == sorted(["main", kept["kept_branch"]])
    assert user_repo.git("tag", "--list", "fixloop/*") == ""
    assert user_repo.user_work() == before
    assert user_repo.git("status", "--porcelain=v1", "--untracked-files=all") == status
    traces = {result["run"]: _events(user_repo, result["run"]) for result in results}
    for run_id, events in traces.items():
        failed = [e for e in events if e["event"] == "step" and not e["ok"]]
        assert failed == []
        # Neither run's recovery took the other, live run for a crashed one. A run that starts
        # late may find the other already ended with its branch kept, and report that branch
        # again (every recovery does): that is the only recovery allowed here.
        [other] = [events for other_id, events in traces.items() if other_id != run_id]
        [other_end] = [e["time"] for e in other if e["event"] == "run-end"]
        recoveries = [e for e in events if e["event"] == "step" and e["step"] == "recover-run"]
        assert all(e["started_at"] >= other_end for e in recoveries), (recoveries, other_end)


def _events(user_repo: UserRepo, run_id: str) -> list[dict[str, Any]]:
    events = user_repo.path / ".git" / "fixloop" / "runs" / run_id / "events.jsonl"
    return [json.loads(line) for line in events.read_text().splitlines()]
