"""`fixloop execute-wave` as a user runs it: exit codes, the JSON envelope, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import UserRepo
from tests.workflows.execute_wave.scripts import implement, score, scores


def fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def snapshot(repo: UserRepo) -> tuple[str, ...]:
    return (
        repo.git("status", "--porcelain=v1", "--untracked-files=all"),
        repo.git("for-each-ref"),
        repo.git("worktree", "list", "--porcelain"),
        str(sorted(p.name for p in (repo.path / ".git").iterdir())),
    )


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([{"id": 1, "name": "a", "dependsOn": [1]}], "task 1: dependsOn: a cycle: 1 -> 1"),
        (
            [{"id": 1, "name": "a", "filesModified": ["../x"]}],
            "task 1: filesModified: '../x': '..' could leave the repository",
        ),
        ([{"id": 1, "name": "a"}, {"id": 1, "name": "b"}], "task 1: id: used by an earlier task"),
        ([{"id": 1, "name": "a", "dependsOn": ["z"]}], "task 1: dependsOn: no task has the id z"),
        ([{"id": 1, "name": ["a"]}], "task 1: name: expected a non-empty string, got a list"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_touches_nothing(
    user_repo: UserRepo, tmp_path: Path, tasks: list[object], message: str
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    (tmp_path / "script.json").write_text("{}")
    before, text = snapshot(user_repo), path.read_text()
    done = fixloop(
        "execute-wave",
        str(path),
        "--repo",
        str(user_repo.path),
        "--script",
        str(tmp_path / "script.json"),
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("tasks.json:1:1: tasks:")
    assert snapshot(user_repo) == before and path.read_text() == text
    assert not (user_repo.path / ".git" / "fixloop").exists()


def test_a_wave_through_the_command_line_with_json(user_repo: UserRepo, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": 1, "name": "add mul"}, {"id": 2, "name": "broken"}]))
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": "def mul(a, b):\n    return a * b\n"}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
        "executor/2/implement": implement(2, {"src/bad.py": "x\n"}, status="failed"),
    }
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(script))
    done = fixloop(
        "execute-wave",
        str(tasks),
        "--repo",
        str(user_repo.path),
        "--script",
        str(tmp_path / "script.yaml"),
        "--parallel",
        "2",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert (data["command"], data["ok"], data["exit_code"]) == ("execute-wave", False, 1)
    assert data["counts"] == {"committed": 1, "rolled-back": 1}
    items = {item["id"]: item for item in data["items"]}
    assert items["1"]["total"] == 90 and items["1"]["commit"]
    assert items["2"]["reason"].startswith("executor reported failed")
    # Live progress on stderr, task by task.
    for line in (
        "task 1 add mul: queued (wave 1)",
        "task 1 add mul: merged (src/mul.py)",
        "task 1 add mul: scored 90: passed",
        "task 2 broken: failed: executor reported",
    ):
        assert line in done.stderr


def test_the_summary_names_scores_commits_and_rollbacks(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(
        json.dumps({"tasks": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], "maxRetries": 1})
    )
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        "executor/2/implement": implement(2, {"src/b.py": "b = 1\n"}),
        "reviewer/1/verify": score(1, scores("logic", 8)),
        "reviewer/2/verify": score(2, scores("logic", 4)),
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    done = fixloop(
        "execute-wave",
        str(tasks),
        "--repo",
        str(user_repo.path),
        "--script",
        str(tmp_path / "script.json"),
        cwd=tmp_path,
    )
    assert done.returncode == 1
    out = done.stdout
    assert "2 task(s), 1 passed, 1 failed or skipped" in out
    assert "task 1 (wave 1): score 80; committed in" in out
    assert (
        "task 2 (wave 1): score 40 after 1 fix attempt(s); rolled-back: Exceeded max retries" in out
    )
    assert "wave 1: commit " in out


def test_help_lists_the_flags() -> None:
    done = fixloop("execute-wave", "--help", cwd=REPO_ROOT)
    for flag in ("--repo", "--wave", "--parallel", "--backend", "--script", "--resume", "--json"):
        assert flag in done.stdout
