"""Fix-issue end to end with the scripted model: real git, real worktrees, real test runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.helpers.fix_issue import (
    FIXED_LINE,
    STATS,
    UNITTEST,
    fixing_script,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git
from tests.sandboxes.support import kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventStream
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.kernel.workflow import Context


def test_an_issue_becomes_an_accepted_patch(tmp_path: Path, pack: Pack) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    base = git(repo, "rev-parse", "HEAD").strip()
    opener = recorder()
    events: list[Event] = []
    backend = ScriptedBackend(fixing_script())
    options = FixIssueOptions(issue=issue, repo=repo, tests=[UNITTEST], open_sandbox=opener)
    result = run_fix_issue(options, Context(pack, backend, EventStream(events.append)))

    assert result.status is IssueStatus.RESOLVED, result.reason
    assert backend.unplayed() == []
    assert [run.status for run in result.tests_before] == ["failed"]
    assert [run.status for run in result.tests_after] == ["passed"]
    assert result.acceptance is not None and result.acceptance.accepted
    # The user's branch and tree did not move: the output is a patch.
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "calc/stats.py").read_text() == STATS
    assert git(repo, "worktree", "list").count("\n") == 1
    assert git(repo, "branch", "--list").strip() == "* main"
    patch = Path(result.patch_path)
    git(repo, "apply", "--check", str(patch))
    assert "+" + FIXED_LINE.rstrip("\n") in patch.read_text()
    # result.json and the trace sit next to the patch.
    written = json.loads(Path(result.result_path).read_text())
    assert written["status"] == "resolved"
    assert written["tests"]["before"][0]["status"] == "failed"
    assert written["attempts"][0]["tool_calls"] == 5
    kinds = [json.loads(line)["event"] for line in Path(result.trace_path).read_text().splitlines()]
    assert kinds.count("tool") == 5
    # Every test command ran in a sandbox: the run's worktree, then the clean checkout (at the
    # base, then with the patch), each with the runner's own report.
    assert [len(s.commands) for s in opener.opened] == [3, 2]
    assert all("-c" in command for s in opener.opened for command in s.commands)
    acceptance = written["tests"]["acceptance"]
    assert acceptance["grade"]["fail_to_pass"] == {"passed": 1, "selected": 1}
    assert acceptance["base"][0]["report"] == "1 failed, 1 passed"
    assert opener.opened[1].worktree.name.endswith("-verify")


def test_the_public_api_runs_it_by_name(tmp_path: Path, pack: Pack) -> None:
    import fixloop

    repo = make_issue_repo(tmp_path / "repo")
    context = fixloop.Context(pack, fixloop.ScriptedBackend(fixing_script()))
    result = fixloop.run_workflow(
        "fix-issue", context, issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST]
    )
    assert result.status is IssueStatus.RESOLVED
    assert result.sandbox.startswith("sandbox: ")  # the default: fixloop.sandboxes, auto


@pytest.mark.parametrize("kind", kinds("bwrap", "local"))
def test_the_model_shell_runs_in_the_sandbox_the_run_chose(
    tmp_path: Path, pack: Pack, kind: str
) -> None:
    outside = Path("/var/tmp") / f"fixloop-fix-issue-{os.getpid()}-{kind}"
    script = fixing_script()
    script["issue-fixer/ISSUE/attempt-1"]["bash"] = [f"touch {outside}"]
    options = FixIssueOptions(
        issue=write_issue(tmp_path),
        repo=make_issue_repo(tmp_path / "repo"),
        tests=[UNITTEST],
        sandbox=kind,
    )
    try:
        result = run_fix_issue(options, Context(pack, ScriptedBackend(script)))
        assert result.status is IssueStatus.RESOLVED, result.reason
        assert outside.exists() is (kind == "local")  # local confines nothing, and says so
        config = Path(result.result_path).parent / "sandbox" / "config.json"
        assert json.loads(config.read_text())["kind"] == kind
    finally:
        outside.unlink(missing_ok=True)
