"""The workflow commands that run the headless runtime, run in real Claude Code.

`/fixloop:fix-issue`, `/fixloop:review`, `/fixloop:fix-findings`, `/fixloop:fix-engine` and
`/fixloop:execute-wave` each run one `fixloop WORKFLOW … --backend claude --json` command (see
docs/claude-code.md for why). The plugin is installed through the marketplace commands, the
project gets only the rules `fixloop init --claude` writes, and the CLI runs in its default
permission mode: the scripted orchestrator plays the command document's moves, and the runtime's
roles (each one a Claude Code session of its own, through the same CLI) are answered by their
call keys with the scripts the headless tests use.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tests.helpers.claude_code import Installed, bash, envelope, installed, played
from tests.helpers.fix_issue import STATS, fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import git

from fixloop.extras.testing.messages_server import text
from fixloop.extras.testing.replay import ScriptReplay

pytestmark = [pytest.mark.cli, pytest.mark.slow]

LONGEST_BASH_MS = 120000


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One marketplace install for the module; each test has its own project and rules."""
    return installed(tmp_path_factory.mktemp("claude"))


def run(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


def test_fix_issue_resolves_the_issue_without_touching_the_users_branch(
    claude: Installed, tmp_path: Path
) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    env = claude.session(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    replay = ScriptReplay(fixing_script())
    command = run(
        *("fixloop", "fix-issue", str(issue), "--test", "python3 -m unittest"),
        *("--sandbox", "local", "--backend", "claude", "--json"),
    )

    done = played(
        [
            bash("command -v fixloop"),
            bash(command, LONGEST_BASH_MS),
            text("Resolved: the patch passed its tests on a clean checkout."),
        ],
        f"/fixloop:fix-issue {issue} --test 'python3 -m unittest' --sandbox local",
        repo,
        env,
        roles=replay,
    )

    result = envelope(done.outcomes[1])["result"]
    assert result["status"] == "resolved", result
    assert result["tests"]["acceptance"]["accepted"] is True
    assert replay.unplayed() == []
    assert {r.call_key for r in done.roles} == {"issue-fixer/ISSUE/attempt-1"}
    git(repo, "apply", "--check", result["patch"]["path"])
    # The user's branch and tree are as they were; nothing of the run is left.
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert (repo / "calc" / "stats.py").read_text() == STATS
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert list((repo / ".git" / "fixloop" / "sentinels").iterdir()) == []
