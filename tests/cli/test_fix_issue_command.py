"""`fixloop fix-issue` through the real CLI: the result envelope, exit codes, and bad input as
one line, exit 2, with nothing created or changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import cli
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    STATS,
    fixing_script,
    make_issue_repo,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.toolbox import qualified
from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay

UNITTEST = "python3 -m unittest"


def fixloop(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    child.update(env or {})
    return cli.fixloop(*args, cwd=cwd, env=child)


def script_file(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_issue_repo(tmp_path / "repo")


def test_a_resolved_issue_prints_the_envelope_and_exits_zero(repo: Path, tmp_path: Path) -> None:
    issue = write_issue(repo)  # an untracked issue file in the repository is fine
    script = script_file(tmp_path, fixing_script())
    done = fixloop(
        "fix-issue", str(issue), "--test", UNITTEST, "--script", script, "--json", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["ok"], out["command"], out["counts"]) == (True, "fix-issue", {"resolved": 1})
    result = out["result"]
    assert result["status"] == "resolved" and result["patch"]["files"] == 1
    assert result["tests"]["acceptance"]["accepted"] is True
    assert "fix-issue ISSUE: attempt 1: fixer done; tests passed" in done.stderr
    assert "-- sandbox: " in done.stderr  # it says which sandbox ran the tests
    assert (repo / "calc/stats.py").read_text() == STATS, "the user's tree is never touched"
    git(repo, "apply", "--check", result["patch"]["path"])


def test_an_unresolved_issue_exits_one_and_says_why(repo: Path, tmp_path: Path) -> None:
    issue = write_issue(tmp_path)
    gave_up = {"output": {"id": "ISSUE", "status": "failed", "notes": "no idea"}}
    script = script_file(tmp_path, {"issue-fixer/ISSUE/attempt-1": gave_up})
    done = fixloop(
        "fix-issue",
        str(issue),
        "--repo",
        str(repo),
        "--test",
        UNITTEST,
        "--script",
        script,
        "--max-attempts",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "unresolved after 1 attempt(s): the fixer could not fix it: no idea" in done.stdout
    assert "tests before: 1 failed; after: 1 failed" in done.stdout


def _dirty(repo: Path, kind: str) -> None:
    stats = repo / "calc/stats.py"
    if kind == "unstaged":
        stats.write_text(STATS + "# mine\n")
    elif kind == "staged":
        stats.write_text(STATS + "# mine\n")
        git(repo, "add", "calc/stats.py")
    else:
        (repo / "scratch.txt").write_text("mine\n")


BAD_INPUT = {
    "missing issue": (["nope.md"], "nope.md:1:1: issue: no such issue file"),
    "empty issue": (["empty.md"], "empty.md:1:1: issue: the issue file is empty"),
    "test not found": (
        ["ISSUE.md", "--test", "no-such-runner -q"],
        "--test:1:1: test-command: 'no-such-runner' (of 'no-such-runner -q') is not found",
    ),
    "shell text": (
        ["ISSUE.md", "--test", "python3 -m 'unittest"],
        '--test:1:1: test-command: "python3 -m \'unittest": No closing quotation',
    ),
    "no test timeout": (
        ["ISSUE.md", "--test-timeout", "0"],
        "--test-timeout:1:1: usage: a test timeout is a number of seconds > 0",
    ),
    "docker without a daemon": (
        ["ISSUE.md", "--sandbox", "docker", "--image", "python:3"],
        "--sandbox:1:1: sandbox: no Docker daemon",
    ),
    "docker without an image": (
        ["ISSUE.md", "--sandbox", "docker"],
        "--sandbox:1:1: sandbox: --sandbox docker needs --image IMAGE (the image commands run in)",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUT, ids=list(BAD_INPUT))
def test_bad_input_is_one_line_exit_two_and_nothing_changes(
    repo: Path, tmp_path: Path, case: str
) -> None:
    arguments, expected = BAD_INPUT[case]
    write_issue(tmp_path)
    (tmp_path / "empty.md").write_text("  \n")
    script = script_file(tmp_path, fixing_script())
    no_daemon = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    done = fixloop(
        "fix-issue",
        *arguments,
        "--repo",
        str(repo),
        "--test",
        UNITTEST,
        "--script",
        script,
        cwd=tmp_path,
        env=no_daemon,
    )
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(expected), done.stderr
    assert done.stdout == ""
    assert not (repo / ".git" / "fixloop").exists(), "no run was started"
    assert (
        git(repo, "status", "--porcelain") == "" and git(repo, "worktree", "list").count("\n") == 1
    )


def test_the_help_states_the_test_timeout_and_a_command_past_it_is_no_result(
    repo: Path, tmp_path: Path
) -> None:
    shown = fixloop("fix-issue", "--help", cwd=tmp_path)
    assert "--test-timeout SECONDS" in shown.stdout and "(default: 600)" in shown.stdout
    issue = write_issue(tmp_path)
    script = script_file(tmp_path, {"issue-fixer/ISSUE/attempt-1": {"output": FIXED_OUTPUT}})
    sleeper = "python3 -c 'import time; time.sleep(60)'"
    arguments = ["--repo", str(repo), "--test", sleeper, "--test-timeout", "1", "--json"]
    done = fixloop("fix-issue", str(issue), *arguments, "--script", script, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["status"] == "unresolved"
    assert [run["status"] for run in result["tests"]["before"]] == ["timed_out"]


def test_an_unborn_branch_is_one_line_exit_two(repo: Path, tmp_path: Path) -> None:
    write_issue(tmp_path)
    git(repo, "checkout", "--quiet", "--orphan", "fresh")
    script = script_file(tmp_path, fixing_script())
    done = fixloop(
        "fix-issue",
        "ISSUE.md",
        "--repo",
        str(repo),
        "--test",
        UNITTEST,
        "--script",
        script,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == ["repo:1:1: repository: branch fresh has no commits yet"]
    assert not (repo / ".git" / "fixloop").exists(), "no run was started"


@pytest.mark.parametrize("kind", ["unstaged", "staged", "untracked"])
def test_a_repository_with_uncommitted_changes_is_refused_and_left_alone(
    repo: Path, tmp_path: Path, kind: str
) -> None:
    _dirty(repo, kind)
    before = git(repo, "status", "--porcelain"), (repo / "calc/stats.py").read_bytes()
    issue = write_issue(tmp_path)
    script = script_file(tmp_path, fixing_script())
    done = fixloop(
        "fix-issue",
        str(issue),
        "--repo",
        str(repo),
        "--test",
        UNITTEST,
        "--script",
        script,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("repo:1:1: uncommitted-changes: the repository has uncommitted changes")
    assert (git(repo, "status", "--porcelain"), (repo / "calc/stats.py").read_bytes()) == before
    assert not (repo / ".git" / "fixloop").exists()


@pytest.mark.cli
@pytest.mark.slow
def test_through_the_real_claude_code_cli_the_model_calls_the_fixloop_tools(
    repo: Path, tmp_path: Path
) -> None:
    issue = write_issue(tmp_path)
    replay = ScriptReplay(fixing_script())
    with MessagesServer(replay) as server:
        done = fixloop(
            "fix-issue",
            str(issue),
            "--repo",
            str(repo),
            "--test",
            UNITTEST,
            "--backend",
            "claude",
            "--max-cost-usd",
            "5",
            "--json",
            cwd=tmp_path,
            env=server.env(),
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["status"] == "resolved" and result["tool_calls"] == 5
    assert result["cost_usd"] > 0 and result["turns"] >= 6
    assert replay.unplayed() == [] and server.unscripted == 0
    called = [
        block["name"]
        for request in server.conversation[-1:]
        for message in request.messages
        if message.get("role") == "assistant"
        for block in message.get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    assert called == [
        qualified(name)
        for name in ("search_code", "read_file", "run_tests", "edit_file", "run_tests")
    ]
