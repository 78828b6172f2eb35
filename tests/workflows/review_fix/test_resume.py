"""A review-fix run killed mid-way (SIGKILL, via the crash switch) is resumed by the next run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import (
    APP_FIX,
    REVIEW_REL,
    UTIL_FIX,
    finding,
    messages,
    review_text,
    run,
    write_review,
)

from fixloop.runs.run import list_runs


def test_a_killed_run_is_resumed_without_fixing_committed_findings_again(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "util name", "src/util.py"),
        ),
    )
    before, tip = user_repo.user_work(), user_repo.head()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"fixer/CR-01/iteration-1": APP_FIX, "fixer/CR-02/iteration-1": UTIL_FIX})
    )
    # Killed right after the first per-finding commit, before the runtime hears of it.
    env = {**os.environ, "FIXLOOP_CRASH_AT": "git-protocol/commit-paths:999"}
    killed = subprocess.run(
        [sys.executable, "-m", "fixloop", "review-fix", str(repo / REVIEW_REL),
         "--repo", str(repo), "--script", str(script)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert user_repo.head() == tip
    assert len(user_repo.worktrees()) == 2
    [dead] = list_runs(repo / ".git" / "fixloop")
    assert dead["state"] == "crashed"

    # The rerun has no reply for CR-01: dispatching it again would make it inconclusive.
    result, backend = run(repo, {"fixer/CR-02/iteration-1": UTIL_FIX})
    assert [call.key for call in backend.calls] == ["fixer/CR-02/iteration-1"]
    assert [o.label for o in result.outcomes] == ["fixed", "fixed"]
    assert f"interrupted run {dead['id']}" in result.outcomes[0].detail
    assert messages(repo, tip) == [
        "fix(02): CR-01 add subtracts",
        "fix(02): CR-02 util name",
        "docs(02): add code review fix report",
    ]
    assert user_repo.user_work() == before
    assert user_repo.worktrees() == [str(repo)]
    assert user_repo.branches() == ["main"]
