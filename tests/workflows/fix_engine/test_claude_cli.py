"""fix-engine through everything real but the model: `fixloop fix-engine … --backend claude` as a
subprocess, claude-agent-sdk, the Claude Code CLI bundled in its wheel, real tools in the run's
worktree, and a scripted Messages API on loopback replaying the scenario's script call by call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.workflows.fix_engine.scenario import (
    ADD_RIGHT,
    MINI_PRD,
    make_section_repo,
    script,
    state_dir,
    subjects,
)

from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay

pytestmark = [pytest.mark.cli, pytest.mark.slow]


def test_one_item_done_one_escalated_through_the_real_claude_code_cli(tmp_path: Path) -> None:
    repo = make_section_repo(tmp_path / "repo")
    before, tip = repo.user_work(), repo.head()
    replay = ScriptReplay(script())
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}

    with MessagesServer(replay) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "fixloop",
                "fix-engine",
                MINI_PRD,
                "--repo",
                str(repo.path),
                "--backend",
                "claude",
                "--json",
            ],
            cwd=repo.path,
            env={**child, **server.env()},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    assert done.returncode == 1, done.stderr
    envelope = json.loads(done.stdout)
    assert [(i["id"], i["status"], i["attempts"]) for i in envelope["items"]] == [
        ("AC-1", "done", 2),
        ("check-2", "failed", 3),
    ]
    assert envelope["result"]["status"] == "escalated"
    assert replay.unplayed() == [] and server.unscripted == 0

    # The executor's real Write tool edited the worktree; the commit reached the user's branch.
    assert subjects(repo.path, tip) == ["calc: AC-1 `add(a, b)` returns the sum of a and b"]
    assert (repo.path / "src" / "app.py").read_text() == ADD_RIGHT
    assert not (repo.path / "src" / "greet.py").exists()
    assert repo.user_work() == before
    report = yaml.safe_load((state_dir(repo.path) / "error_report.yaml").read_text())
    assert report["error_report"]["final_failures"][0]["check_id"] == "check-2"

    # What the model was sent: the rendered role documents, the item and its failure context.
    first = server.conversation[0]
    assert first.call_key == "executor/AC-1/attempt-1"
    assert "# Executor" in first.system and "AC-1" in first.system
    retry = next(r for r in server.conversation if r.call_key == "executor/AC-1/attempt-2")
    assert "add(2, 1) is 1 (src/app.py:2)" in retry.system, "the failure context reached it"
    judge = next(r for r in server.conversation if r.call_key == "verifier/AC-1/attempt-1")
    assert "# Verifier" in judge.system and "is this finding resolved?" in judge.system
