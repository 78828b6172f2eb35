"""Two fix-engine runs of one section started together: one works, the other never starts.

They would share the section's meta.yaml and attempt folders. The run claims its mini-PRD before
it reads the section, so the second either meets the first's claim (one busy line, exit 2, no
run folder of its own) or, when the first is already done, finds the section complete.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.workflows.fix_engine.scenario import MINI_PRD, make_section_repo
from tests.workflows.fix_engine.test_workflow import passing

pytestmark = pytest.mark.slow


def _start(repo: Path, replies: Path, go: Path) -> subprocess.Popen[str]:
    # Both wait for `go`, so they reach the claim together rather than a process start apart.
    waiter = (
        "import pathlib, runpy, sys, time\n"
        "while not pathlib.Path(sys.argv[1]).exists(): time.sleep(0.002)\n"
        "sys.argv = ['fixloop', *sys.argv[2:]]\n"
        "runpy.run_module('fixloop', run_name='__main__')\n"
    )
    argv = [sys.executable, "-c", waiter, str(go), "fix-engine", MINI_PRD, "--repo", str(repo)]
    argv += ["--backend", "scripted", "--script", str(replies), "--json"]
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("attempt", range(2))
def test_two_runs_of_one_section_never_both_work(tmp_path: Path, attempt: int) -> None:
    section: UserRepo = make_section_repo(tmp_path / "repo")
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(passing()), encoding="utf-8")
    old_tip = section.head()
    go = tmp_path / "go"
    runs = [_start(section.path, replies, go) for _ in range(2)]
    go.touch()
    outcomes = [(*process.communicate(timeout=300), process.returncode) for process in runs]
    worked = [json.loads(out) for out, _, code in outcomes if code == 0 and out.strip()]
    statuses = sorted(envelope["result"]["status"] for envelope in worked)
    busy = [err for _, err, code in outcomes if code == 2]
    assert (statuses, len(busy)) in [(["completed"], 1), (["already-complete", "completed"], 0)], (
        outcomes
    )
    for line in busy:
        [problem] = line.strip().splitlines()
        assert "another fix-engine run (" in problem and "is working on this input" in problem
    runs_dir = section.path / ".git" / "fixloop" / "runs"
    assert len(list(runs_dir.iterdir())) == 1, "the refused run left no run folder"
    assert section.git("rev-list", "--count", f"{old_tip}..main") != "0"
    assert section.worktrees() == [str(section.path)]
