"""workflows/lib/execute_wave.py as Claude Code runs it by hand: the runtime's checks and scores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo

from fixloop.workflows.execute_wave.scoring import LOGIC_WEIGHTS

SCRIPT = REPO_ROOT / "workflows" / "lib" / "execute_wave.py"


def lib(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def out(*args: str, cwd: Path) -> Any:
    done = lib(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_plan_set_and_paths(user_repo: UserRepo) -> None:
    tasks = user_repo.path / "tasks.json"
    tasks.write_text(
        json.dumps(
            {
                "tasks": [
                    {"id": 1, "name": "a", "filesModified": ["src/app.py"]},
                    {
                        "id": 2,
                        "name": "b",
                        "dependsOn": [1],
                        "filesModified": ["src/util.py", "src/app.py"],
                    },
                ],
                "maxRetries": 2,
            }
        )
    )
    plan = out("plan", str(tasks), cwd=user_repo.path)
    assert plan["waves"] == {"1": ["1"], "2": ["2"]} and plan["settings"]["maxRetries"] == 2
    out(
        "set",
        str(tasks),
        "2",
        "status=failed",
        "lastError=dependency 1 is failed",
        "retryCount=3",
        cwd=user_repo.path,
    )
    written = json.loads(tasks.read_text())["tasks"][1]
    assert (written["status"], written["lastError"], written["retryCount"]) == (
        "failed",
        "dependency 1 is failed",
        3,
    )
    listed = user_repo.path.parent / "files"
    assert out("paths", str(tasks), "1", "2", "--out", str(listed), cwd=user_repo.path)[
        "paths"
    ] == [
        "src/app.py",
        "src/util.py",
    ]
    assert listed.read_bytes() == b"src/app.py\0src/util.py\0"


def test_bad_input_is_one_line_and_exit_2(user_repo: UserRepo) -> None:
    tasks = user_repo.path / "tasks.json"
    tasks.write_text(json.dumps([{"id": 1, "name": "a", "dependsOn": [2]}]))
    done = lib("plan", str(tasks), cwd=user_repo.path)
    assert done.returncode == 2
    assert done.stderr.strip() == "tasks.json:1:1: tasks: task 1: dependsOn: no task has the id 2"


def test_score_recomputes_fails_closed_and_sees_regressions(tmp_path: Path) -> None:
    result = tmp_path / "review-result-1.json"
    missing = out("score", str(result), "--type", "logic", cwd=tmp_path)
    assert (missing["check"], missing["total"], missing["passed"]) == ("MISSING_RESULT", 0, False)
    scores = {**dict.fromkeys(LOGIC_WEIGHTS, 8), "codeQuality": 8}
    del scores["code_quality"]
    result.write_text(json.dumps({"scores": scores, "total": 100}))
    best = tmp_path / "best.json"
    best.write_text(json.dumps({"scores": dict.fromkeys(LOGIC_WEIGHTS, 9), "total": 90}))
    scored = out("score", str(result), "--type", "logic", "--best", str(best), cwd=tmp_path)
    assert (scored["check"], scored["total"], scored["passed"]) == ("OK", 80, True)
    assert 'key "codeQuality" mapped to "code_quality"' in scored["warnings"]
    assert scored["regression"].startswith("total dropped 10 points")
