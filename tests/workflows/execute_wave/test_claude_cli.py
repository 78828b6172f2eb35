"""One small wave end to end through the real Claude Code CLI, the model played on loopback.

`fixloop execute-wave … --backend claude` as a subprocess: claude-agent-sdk, the Claude Code CLI
bundled in its wheel, real tools (Read, Write, Edit) in the real task worktrees and the run's
worktree, and `fixloop.extras.testing.replay.ScriptReplay` answering each role call by its key
with the moves a model would make: write the files and the result file, then answer with its
schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.workflows.execute_wave.scripts import implement, score, scores

from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay

pytestmark = [pytest.mark.cli, pytest.mark.slow]

MUL = "def mul(a, b):\n    return a * b\n"


def test_a_small_wave_through_the_real_claude_code_cli(user_repo: UserRepo, tmp_path: Path) -> None:
    before = user_repo.user_work()
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": 1, "name": "add mul"}, {"id": 2, "name": "bad result"}]))
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": MUL}),
        "executor/2/implement": implement(2, {"src/two.py": "x = 2\n"}, raw="{not json"),
        "reviewer/1/verify": score(1, scores("logic", 9)),
    }
    replay = ScriptReplay(script)
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    with MessagesServer(replay) as server:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "fixloop",
                "execute-wave",
                str(tasks),
                "--repo",
                str(user_repo.path),
                "--backend",
                "claude",
                "--parallel",
                "2",
                "--json",
            ],
            env={**child, **server.env()},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert replay.unplayed() == [] and server.unscripted == 0
    data = json.loads(done.stdout)
    items = {item["id"]: item for item in data["items"]}
    assert (items["1"]["status"], items["1"]["total"]) == ("committed", 90)
    assert items["2"]["status"] == "rolled-back"
    assert items["2"]["reason"].startswith("implementation result invalid")
    assert user_repo.git("show", "main:src/mul.py") == MUL
    assert user_repo.git("ls-tree", "--name-only", "main", "src/two.py") == ""
    assert user_repo.user_work() == before
    assert user_repo.branches() == ["main"] and user_repo.worktrees() == [str(user_repo.path)]
    statuses = {str(t["id"]): t["status"] for t in json.loads(tasks.read_text())}
    assert statuses == {"1": "done", "2": "failed"}
