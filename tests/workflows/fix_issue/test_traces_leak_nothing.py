"""No secret of a fix-issue run reaches disk: canaries in the environment, in a repository file
the model reads and quotes, and in test output; then every file the run wrote is searched."""

from __future__ import annotations

import secrets
import string
from pathlib import Path

import pytest
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.gitrepo import git

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.kernel.workflow import Context

_ALNUM = string.ascii_letters + string.digits
ENV_CANARY = "canary-env-" + secrets.token_hex(12)
ANTHROPIC = "sk-ant-api03-" + "".join(secrets.choice(_ALNUM) for _ in range(40))
GITHUB = "ghp_" + "".join(secrets.choice(_ALNUM) for _ in range(36))
SETTINGS = f'ANTHROPIC_KEY = "{ANTHROPIC}"\nGITHUB_TOKEN = "{GITHUB}"\n'
# A test that prints a token, as a careless debug line would.
TEST_SETTINGS = (
    "import unittest\n\nimport settings\n\n\n"
    "class Settings(unittest.TestCase):\n"
    "    def test_token(self):\n"
    "        print('using token', settings.GITHUB_TOKEN)\n"
)


def test_canaries_in_environment_repository_and_test_output_never_reach_disk(
    tmp_path: Path, pack: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANARY_DEPLOY_TOKEN", ENV_CANARY)
    repo = make_issue_repo(tmp_path / "repo")
    (repo / "settings.py").write_text(SETTINGS)
    (repo / "tests/test_settings.py").write_text(TEST_SETTINGS)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "settings")
    issue = write_issue(tmp_path)
    quote = f"settings.py holds {ANTHROPIC}; the deploy token is {ENV_CANARY}."
    script = {
        "issue-fixer/ISSUE/attempt-1": {
            "tools": [{"name": "read_file", "input": {"path": "settings.py"}}, *fixing_tools()],
            "output": {**FIXED_OUTPUT, "notes": quote},
        }
    }
    options = FixIssueOptions(issue=issue, repo=repo, tests=[UNITTEST], open_sandbox=recorder())
    result = run_fix_issue(options, Context(pack, ScriptedBackend(script)))
    assert result.status is IssueStatus.RESOLVED, result.reason
    assert GITHUB in result.tests_after[0].output, "the canary did reach the test output"

    written = [path for path in (repo / ".git" / "fixloop").rglob("*") if path.is_file()]
    assert any(path.name == "result.json" for path in written)
    leaks = [
        f"{path.relative_to(repo)}: {name}"
        for path in written
        for name, canary in {"env": ENV_CANARY, "anthropic": ANTHROPIC, "github": GITHUB}.items()
        if canary in path.read_text(encoding="utf-8", errors="replace")
    ]
    assert leaks == []
    text = Path(result.result_path).read_text()
    for placeholder in ("«masked:CANARY_DEPLOY_TOKEN»", "«masked:anthropic-key»", "«masked:github"):
        assert placeholder in text
