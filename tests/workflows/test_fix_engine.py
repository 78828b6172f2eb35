"""workflows/fix-engine.md, run step by step with the real runner on a real repository.

Only the executor and the verifier are faked: the test writes their edits and verdicts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

PRD = """# Auth

## 验收标准

- 用户可以使用邮箱/密码注册
- Login issues a JWT
- [ ] Refresh tokens rotate

## Notes

- not a criterion
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def step(repo: Path, workflow: str, name: str, **inputs: str) -> tuple[int, dict[str, str], str]:
    argv = [sys.executable, "-m", "fixloop", "step", "run", workflow, name, "--repo", str(repo)]
    for key, value in inputs.items():
        argv += ["--input", f"{key}={value}"]
    done = subprocess.run(
        argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    outputs = dict(line.partition("=")[::2] for line in done.stdout.splitlines())
    return done.returncode, outputs, done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / "sections" / "auth").mkdir(parents=True)
    (path / "sections" / "auth" / "mini-prd.md").write_text(PRD, encoding="utf-8")
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "add", ".")
    git(path, "commit", "--quiet", "-m", "initial")
    return path


def test_checklist_attempts_commit_then_completed(repo: Path, tmp_path: Path) -> None:
    code, out, _ = step(repo, "fix-engine", "load-section", SECTION_PATH="sections/auth")
    assert code == 0
    state = Path(out["STATE"])
    assert (
        step(repo, "fix-engine", "make-checklist", SECTION_PATH="sections/auth", STATE=str(state))[
            1
        ]["TOTAL"]
        == "3"
    )
    checklist = (state / "checklist.md").read_text(encoding="utf-8")
    assert "- [ ] 用户可以使用邮箱/密码注册\n" in checklist and "not a criterion" not in checklist

    verdicts = state / "verdicts-1.json"
    verdicts.write_text('{"items": [{"index": 1, "passed": true}, {"index": 3, "passed": true}]}')
    code, out, _ = step(
        repo,
        "fix-engine",
        "record-attempt",
        STATE=str(state),
        ATTEMPT="1",
        RESULT_FILE=str(verdicts),
    )
    assert (out["PASSED"], out["ALL_PASSED"]) == ("2", "no")
    assert "**Progress: 2/3**" in (state / "checklist.md").read_text(encoding="utf-8")
    assert 'progress: "2/3"' in (state / "meta.yaml").read_text(encoding="utf-8")

    code, out, _ = step(repo, "git-protocol", "setup-worktree", RUN_ID="fe-1")
    worktree = Path(out["WORKTREE"])
    (worktree / "auth.py").write_text("def login(): ...\n")
    (worktree / "stray.txt").write_text("not reported by the executor\n")
    files = tmp_path / "files"
    files.write_bytes(b"auth.py\0")
    message = "auth: login $(touch pwned)"
    code, out, _ = step(
        repo,
        "fix-engine",
        "complete",
        STATE=str(state),
        WORKTREE=str(worktree),
        FILES_LIST=str(files),
        MESSAGE=message,
    )
    assert (code, out["STATUS"]) == (0, "completed")
    meta = (state / "meta.yaml").read_text(encoding="utf-8")
    assert 'status: "completed"' in meta and out["COMMIT"] in meta
    assert git(worktree, "show", "--name-only", "--format=%s", "HEAD") == f"{message}\n\nauth.py\n"
    assert git(worktree, "status", "--porcelain") == "?? stray.txt\n"
    assert step(repo, "git-protocol", "cleanup", RUN_ID="fe-1")[1]["FAST_FORWARDED"] == "yes"
    assert git(repo, "log", "-1", "--format=%s") == message + "\n"


def test_no_change_or_an_escaping_path_is_never_completed(repo: Path, tmp_path: Path) -> None:
    state = Path(step(repo, "fix-engine", "load-section", SECTION_PATH="sections/auth")[1]["STATE"])
    step(repo, "fix-engine", "make-checklist", SECTION_PATH="sections/auth", STATE=str(state))
    worktree = Path(step(repo, "git-protocol", "setup-worktree", RUN_ID="fe-2")[1]["WORKTREE"])
    files = tmp_path / "files"
    for listed in (b"", b"../outside\0"):
        files.write_bytes(listed)
        code, _, _ = step(
            repo,
            "fix-engine",
            "complete",
            STATE=str(state),
            WORKTREE=str(worktree),
            FILES_LIST=str(files),
            MESSAGE="m",
        )
        assert code != 0
        assert 'status: "in_progress"' in (state / "meta.yaml").read_text(encoding="utf-8")
    code, out, _ = step(repo, "fix-engine", "error-report", STATE=str(state))
    assert (code, out["STATUS"]) == (0, "escalated")
    report = (state / "error_report.yaml").read_text(encoding="utf-8")
    assert "check_id: check-2" in report and 'expected: "Login issues a JWT"' in report
    step(repo, "git-protocol", "cleanup", RUN_ID="fe-2")
