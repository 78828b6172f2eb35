"""A backend that fails stops the run: one line naming the cause, exit 1, nothing committed for
work that never ran, the user's tree as it was.

Everything is real but the model: `fixloop … --backend claude` as a process, the Claude Code CLI
bundled in claude-agent-sdk, real git; the scripted Messages API on loopback answers with the
errors a real API gives (401 a rejected key, 529 an outage, 429 a rate limit). The other
workflows meet the same failure from the scripted backend (`fail: backend`), which the
dispatcher treats exactly as the Claude backend's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from tests.helpers import cli
from tests.helpers.fix_findings import finding
from tests.helpers.fix_issue import make_issue_repo, write_issue
from tests.helpers.gitrepo import UserRepo
from tests.workflows.execute_wave.scripts import implement
from tests.workflows.fix_engine.scenario import MINI_PRD, make_section_repo, state_dir

from fixloop.extras.demo.example import REVIEW_PATH, build_example
from fixloop.extras.demo.model import REVIEW_FIX_SCRIPT
from fixloop.extras.testing.messages_server import (
    MessagesServer,
    RecordedRequest,
    Turn,
    error,
    tool_use,
)
from fixloop.extras.testing.replay import ScriptReplay

REPORT_PATH = REVIEW_PATH.replace("-REVIEW.md", "-REVIEW-FIX.md")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def run_fixloop(*args: str, server: MessagesServer, cwd: Path) -> subprocess.CompletedProcess[str]:
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    child.update(server.env())
    command = [sys.executable, "-m", "fixloop", *args, "--backend", "claude"]
    return subprocess.run(
        command, cwd=cwd, env=child, capture_output=True, text=True, timeout=600, check=False
    )


def the_state(repo: Path) -> tuple[str, str, str, str]:
    """HEAD, the branches, the status (untracked included) and the worktrees."""
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/"),
        git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
        git(repo, "worktree", "list", "--porcelain"),
    )


@pytest.mark.cli
@pytest.mark.slow
def test_an_outage_stops_review_fix_at_its_first_call_and_commits_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    before = the_state(repo)

    with MessagesServer([error(529, "overloaded_error", "Overloaded")]) as server:
        done = run_fixloop("review-fix", REVIEW_PATH, server=server, cwd=repo)

    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stderr.splitlines() if ": backend: " in line]
    assert len(problems) == 1, done.stderr
    assert problems[0].startswith("--backend:1:1: backend: fixer/CR-01/iteration-1: ")
    assert "529" in problems[0] and "Overloaded" in problems[0]
    assert "Traceback" not in done.stderr
    assert len(server.conversation) == 1, "no call after the failed one"
    assert the_state(repo) == before, "no report, no commit, no branch or worktree left"
    assert not (repo / REPORT_PATH).exists()


@pytest.mark.cli
@pytest.mark.slow
def test_a_rate_limit_after_one_fix_keeps_that_fix_and_writes_no_report(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    replay = ScriptReplay(REVIEW_FIX_SCRIPT)

    def script(request: RecordedRequest) -> Turn:
        if request.call_key.startswith("fixer/CR-01/"):
            return replay(request)
        return error(429, "rate_limit_error", "Number of request tokens has exceeded your limit")

    with MessagesServer(script) as server:
        done = run_fixloop("review-fix", REVIEW_PATH, "--json", server=server, cwd=repo)

    assert done.returncode == 1, done.stderr
    assert "--backend:1:1: backend: fixer/CR-02/iteration-1: " in done.stderr
    assert "429" in done.stderr and "exceeded your limit" in done.stderr
    envelope = json.loads(done.stdout)  # --json: the failure is the envelope too
    assert (envelope["ok"], envelope["exit_code"]) == (False, 1)
    assert envelope["items"][0]["rule"] == "backend"
    # CR-01's fix ran and was verified: it is on the branch; nothing else is.
    subjects = git(repo, "log", "--format=%s", f"{base}..HEAD").splitlines()
    assert [s.split(": ")[1].split()[0] for s in subjects] == ["CR-01"]
    assert not (repo / REPORT_PATH).exists(), "no none_fixed/partial report for work never done"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "worktree", "list").count("\n") == 1


EDIT_THEN_OUTAGE = [
    tool_use(
        "Edit", {"file_path": "calc.py", "old_string": "sum(xs)", "new_string": "sum(xs or [0])"}
    ),
    error(529, "overloaded_error", "Overloaded"),
]
FIX_FINDINGS_FAILURES = {
    "a rejected key": (
        [error(401, "authentication_error", "invalid x-api-key")],
        "Invalid API key",
    ),
    "an outage after an edit": (EDIT_THEN_OUTAGE, "Overloaded"),
}


@pytest.mark.cli
@pytest.mark.slow
@pytest.mark.parametrize("case", FIX_FINDINGS_FAILURES, ids=list(FIX_FINDINGS_FAILURES))
def test_a_failing_backend_stops_fix_findings_with_the_users_tree_untouched(
    tmp_path: Path, case: str
) -> None:
    turns, cause = FIX_FINDINGS_FAILURES[case]
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    git(repo, "add", "calc.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "init")
    (repo / "calc.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)  # mine\n")
    git(repo, "add", "calc.py")  # the user's own staged work
    one = finding(1, title="mean() divides by zero", body="calc.py:2 has no guard.")
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([one]))
    before = the_state(repo), git(repo, "diff", "--staged")

    with MessagesServer(turns) as server:
        done = run_fixloop(
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--on-prestaged",
            "proceed",
            server=server,
            cwd=repo,
        )

    assert done.returncode == 1, done.stderr
    line = next(line for line in done.stderr.splitlines() if ": backend: " in line)
    assert line.startswith("--backend:1:1: backend: fixer/1/round-1: ")
    assert cause in line
    assert server.remaining == 0 and len(server.conversation) == len(turns)
    assert (the_state(repo), git(repo, "diff", "--staged")) == before, (
        "bytes and index as they were"
    )


# -- the other workflows, with the scripted backend failing as an API does ----------------------

OUTAGE = {"fail": "backend", "raw": "the model call failed: API Error: 529 Overloaded"}


def _scripted(tmp_path: Path, script: Mapping[str, object]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    return str(path)


def _stopped_by_the_outage(done: subprocess.CompletedProcess[str], key: str) -> None:
    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stderr.splitlines() if ": backend: " in line]
    assert problems == [
        f"--backend:1:1: backend: {key}: the model call failed: API Error: 529 Overloaded; "
        "the run stopped, nothing more was tried; run the same command again once the backend "
        "answers"
    ], done.stderr


def test_an_outage_stops_fix_engine_before_its_first_commit(tmp_path: Path) -> None:
    repo = make_section_repo(tmp_path / "repo")
    before = the_state(repo.path)
    script = _scripted(tmp_path, {"executor/AC-1/attempt-1": OUTAGE})

    done = cli.fixloop("fix-engine", MINI_PRD, "--script", script, cwd=repo.path)

    _stopped_by_the_outage(done, "executor/AC-1/attempt-1")
    assert the_state(repo.path) == before
    section = state_dir(repo.path)
    assert not (section / "COMPLETE").exists() and not (section / "error_report.yaml").exists()


def test_an_outage_stops_execute_wave_with_no_wave_committed(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": 1, "name": "add mul"}, {"id": 2, "name": "add div"}]))
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": "def mul(a, b):\n    return a * b\n"}),
        "executor/2/implement": OUTAGE,
    }
    before = the_state(user_repo.path)

    done = cli.fixloop(
        "execute-wave",
        str(tasks),
        "--repo",
        str(user_repo.path),
        "--script",
        _scripted(tmp_path, script),
        "--parallel",
        "2",
        cwd=tmp_path,
    )

    _stopped_by_the_outage(done, "executor/2/implement")
    assert the_state(user_repo.path) == before, "no wave commit, no worktree left"


def test_an_outage_stops_fix_issue_with_no_patch(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    before = the_state(repo)
    script = _scripted(tmp_path, {"issue-fixer/ISSUE/attempt-1": OUTAGE})

    done = cli.fixloop(
        "fix-issue",
        str(issue),
        "--repo",
        str(repo),
        "--test",
        "python3 -m unittest",
        "--script",
        script,
        "--sandbox",
        "local",
        cwd=tmp_path,
    )

    _stopped_by_the_outage(done, "issue-fixer/ISSUE/attempt-1")
    assert the_state(repo) == before
    assert not list((repo / ".git" / "fixloop" / "runs").glob("*/fix.patch"))
