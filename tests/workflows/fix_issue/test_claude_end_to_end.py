"""Fix-issue through the real Claude Code CLI: the scripted model calls fixloop's tools over the
in-process MCP server; its own Edit and Bash are not there to call."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    fixing_script,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.toolbox import qualified
from fixloop.documents.pack import Pack
from fixloop.extras.testing.messages_server import MessagesServer
from fixloop.extras.testing.replay import ScriptReplay
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.kernel.workflow import Context

pytestmark = [pytest.mark.cli, pytest.mark.slow]


def test_the_model_fixes_the_issue_with_the_versioned_tools(tmp_path: Path, pack: Pack) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    stale = {
        # First a stale edit (a version the file never had): refused, the model reads again.
        "name": "edit_file",
        "input": {"path": "calc/stats.py", "version": "0" * 64, "old": "+ 1", "new": ""},
    }
    script = fixing_script()
    script["issue-fixer/ISSUE/attempt-1"]["tools"].insert(0, stale)
    replay = ScriptReplay(script)
    options = FixIssueOptions(issue=issue, repo=repo, tests=[UNITTEST], open_sandbox=recorder())
    with MessagesServer(replay) as server:
        backend = ClaudeBackend(env=server.env(), sandbox_bash=False)
        result = run_fix_issue(options, Context(pack, backend))

    assert result.status is IssueStatus.RESOLVED, result.reason
    assert replay.unplayed() == [] and server.unscripted == 0
    first = server.conversation[0]
    assert "# Issue fixer" in first.system and "average() is wrong" in first.system
    names = set(first.tool_names)
    assert {qualified("read_file"), qualified("edit_file"), qualified("run_tests")} <= names
    assert names.isdisjoint({"Edit", "Write", "Bash", "MultiEdit"})
    results = [str(r["content"]) for r in server.conversation[-1].tool_results()]
    assert "stale_version" in results[0]
    assert '"passed": true' in results[-1]
    assert result.attempts[0].fixer_status == FIXED_OUTPUT["status"]
    assert result.attempts[0].tool_calls == 6 and result.cost_usd > 0
    # The role asked for `opus`; the record keeps the model that answered, as the API named it.
    assert result.attempts[0].served_model == server.conversation[-1].model != "opus"
    git(repo, "apply", "--check", result.patch_path)
