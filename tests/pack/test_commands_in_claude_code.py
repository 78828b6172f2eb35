"""The slash commands, run in real Claude Code under its permission layer.

The plugin is installed as a user installs it (`claude plugin marketplace add` + `claude plugin
install`, in a temporary HOME); the project gets exactly the permission rules fixloop documents
(`fixloop init --claude --local`); the CLI runs in its default permission mode. Only the model is
scripted, on loopback: the orchestrator plays the command document's steps in order, and the
fixer subagent reads and edits as a model would. Everything else is real: the CLI's permission
checks, its Agent tool, `fixloop step run`, git.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers.claude_code import (
    Installed,
    bash,
    installed,
    played,
    result_text,
    run_claude,
    step,
)
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import REPORT_REL, REVIEW_REL, finding, review_text, write_review

from fixloop.extras.testing.messages_server import (
    MessagesServer,
    RecordedRequest,
    Turn,
    text,
    tool_use,
)

pytestmark = [pytest.mark.cli, pytest.mark.slow]


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """One marketplace install for the module: each test's project gets its rules, its own
    conversation; nothing a command does touches the installed plugin."""
    return installed(tmp_path_factory.mktemp("claude"))


RUN_ID = "rf-in-claude-code"
FIXER = "You fix exactly ONE finding"
REPORT = """---
phase: "02"
fixed_at: 2026-01-01T00:00:00Z
review_path: .planning/02-REVIEW.md
iteration: 1
findings_in_scope: 1
fixed: 1
skipped: 0
status: all_fixed
---

# Phase 02: Code Review Fix Report

## Fixed Issues

### CR-01: add subtracts

**Files modified:** `src/app.py`
**Status:** fixed
**Applied fix:** `a - b` became `a + b`.
"""


def orchestrator(repo: Path, worktree: Path) -> Callable[[RecordedRequest], list[Turn]]:
    """The orchestrator's moves, in the order commands/review-fix.md and its workflow give."""

    def moves(request: RecordedRequest) -> list[Turn]:
        expanded = next(t for t in request.user_texts() if t.startswith("# /fixloop:review-fix"))
        workflow = expanded.split("Read `", 1)[1].split("`", 1)[0]
        wt = str(worktree)
        # The command reads the project's model choice before it dispatches (`fixloop models`).
        results = [result_text(r) for r in request.tool_results()]
        model = (
            json.loads(results[2])["result"]["roles"]["fixer"]["model"] if len(results) > 2 else ""
        )
        return [
            tool_use("Read", {"file_path": workflow}),
            tool_use("Read", {"file_path": str(repo / REVIEW_REL)}),
            bash("fixloop models --repo . --json"),
            step("review-fix", "check-review-status", f"--input REVIEW_PATH={REVIEW_REL}"),
            step("git-protocol", "preflight"),
            step("git-protocol", "setup-worktree", f"--input RUN_ID={RUN_ID}"),
            tool_use(
                "Agent",
                {
                    "subagent_type": "fixloop:fixer",
                    "description": "fix CR-01",
                    "prompt": json.dumps(
                        {
                            "finding": {"id": "CR-01", "file": "src/app.py", "issue": "broken"},
                            "files": ["src/app.py"],
                            "worktree": wt,
                        }
                    ),
                    "run_in_background": False,
                    "model": model,
                },
            ),
            # What really changed, against what the fixer says (the workflow's step 2).
            step("git-protocol", "changed-files", f"--input WORKTREE={wt}"),
            step("review-fix", "syntax-check", "--path src/app.py", repo=wt),
            step(
                "git-protocol",
                "commit-paths",
                f"--input WORKTREE={wt}",
                "--input 'MESSAGE=fix(02): CR-01 add subtracts'",
                "--path src/app.py",
            ),
            tool_use("Write", {"file_path": f"{wt}/{REPORT_REL}", "content": REPORT}),
            step(
                "review-fix", "check-fix-report", f"--input FIX_REPORT_PATH={REPORT_REL}", repo=wt
            ),
            step(
                "git-protocol",
                "commit-paths",
                f"--input WORKTREE={wt}",
                "--input 'MESSAGE=docs(02): add code review fix report'",
                f"--path {REPORT_REL}",
            ),
            step("git-protocol", "cleanup", f"--input RUN_ID={RUN_ID}"),
            text(f"Fixed 1, skipped 0. Report: {REPORT_REL}."),
        ]

    return moves


def fixer(worktree: Path) -> list[Turn]:
    target = str(worktree / "src" / "app.py")
    result = {"files_changed": ["src/app.py"], "summary": "fixed: add adds", "concerns": None}
    return [
        tool_use("Read", {"file_path": target}),
        tool_use("Edit", {"file_path": target, "old_string": "a - b", "new_string": "a + b"}),
        text(json.dumps(result)),
    ]


class Script:
    """Answers each conversation by who is asking: the fixer subagent or the orchestrator."""

    def __init__(self, repo: Path, worktree: Path) -> None:
        self.orchestrator = orchestrator(repo, worktree)
        self.fixer = fixer(worktree)
        self.played: dict[str, int] = {}

    def __call__(self, request: RecordedRequest) -> Turn:
        who = "fixer" if FIXER in request.system else "orchestrator"
        turns = self.fixer if who == "fixer" else self.orchestrator(request)
        answered = sum(1 for message in request.messages if message.get("role") == "assistant")
        self.played[who] = max(self.played.get(who, 0), answered + 1)
        return turns[min(answered, len(turns) - 1)]


def test_review_fix_completes_in_the_default_permission_mode_with_the_documented_rules(
    claude: Installed, user_repo: UserRepo
) -> None:
    repo = user_repo.path
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py:2")))
    (repo.parent / "fixloop.toml").write_text('model-profile = "budget"\n')  # fixer: sonnet
    session = claude.session(repo)
    before, base = user_repo.user_work(), user_repo.head()
    worktree = repo / ".fixloop" / "worktrees" / RUN_ID
    script = Script(repo, worktree)

    with MessagesServer(script) as server:
        events = run_claude(
            f"/fixloop:review-fix {REVIEW_REL}",
            cwd=repo,
            env={**server.env(), **session},
        )

    result = next(e for e in reversed(events) if e.get("type") == "result")
    main = [r for r in server.conversation if FIXER not in r.system]
    outcomes = main[-1].tool_results()
    errors = [result_text(r) for r in outcomes if r.get("is_error")]
    assert errors == [], errors
    assert result.get("permission_denials") == [], result.get("permission_denials")
    assert script.played == {"orchestrator": 15, "fixer": 3}
    assert server.unscripted == 0
    # The project's profile reached the subagent: the fixer ran on the budget profile's model.
    fixers = [r for r in server.conversation if FIXER in r.system]
    assert fixers and all("sonnet" in r.model for r in fixers), [r.model for r in fixers]
    # The subagent ran in the foreground: its answer came back as the Agent call's result.
    agent_result = json.dumps(outcomes[6])
    assert "fixed: add adds" in agent_result, agent_result
    assert json.loads(result_text(outcomes[7]))["result"]["outputs"]["CHANGED"] == " M src/app.py"
    # Every step ran and passed (each `--json` envelope says so).
    printed = [json.loads(result_text(r)) for r in outcomes if result_text(r).startswith("{")]
    envelopes = [e for e in printed if e.get("command") == "step run"]  # `models` is one too
    assert [e["items"][0]["id"] for e in envelopes] == [
        "review-fix#check-review-status",
        "git-protocol#preflight",
        "git-protocol#setup-worktree",
        "git-protocol#changed-files",
        "review-fix#syntax-check",
        "git-protocol#commit-paths",
        "review-fix#check-fix-report",
        "git-protocol#commit-paths",
        "git-protocol#cleanup",
    ]
    assert all(e["ok"] for e in envelopes), [e for e in envelopes if not e["ok"]]

    # The repository afterwards: two commits fast-forwarded, nothing of the run left.
    subjects = user_repo.git("log", "--format=%s", f"{base}..main").splitlines()
    assert subjects == ["docs(02): add code review fix report", "fix(02): CR-01 add subtracts"]
    assert (repo / "src" / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "status: all_fixed" in (repo / REPORT_REL).read_text()
    assert user_repo.worktrees() == [str(repo)]
    assert user_repo.branches() == ["main"]
    assert user_repo.git("tag", "--list", "fixloop/*") == ""
    assert list((repo / ".git" / "fixloop" / "sentinels").iterdir()) == []
    assert list((repo / ".fixloop" / "worktrees").iterdir()) == []
    assert user_repo.user_work() == before


def test_recover_and_status_complete_with_the_documented_rules(
    claude: Installed, user_repo: UserRepo
) -> None:
    repo = user_repo.path
    env = claude.session(repo)
    before = user_repo.user_work()
    dead = "dead-run-1"
    setup = subprocess.run(
        [
            *(sys.executable, "-m", "fixloop", "step", "run", "git-protocol", "setup-worktree"),
            *("--repo", str(repo), "--input", f"RUN_ID={dead}"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert setup.returncode == 0, setup.stderr  # the step ended; its worktree and sentinel stay
    assert (repo / ".fixloop" / "worktrees" / dead).is_dir()

    recovered = played(
        [bash("fixloop recover --repo ."), text("Recovered one run.")],
        "/fixloop:recover",
        repo,
        env,
    ).outcomes
    status = played(
        [
            bash("fixloop runs list --repo ."),
            bash("fixloop runs show latest --repo ."),
            text("One run, recovered."),
        ],
        "/fixloop:status",
        repo,
        env,
    ).outcomes

    assert f"run {dead}: removed worktree {repo}/.fixloop/worktrees/{dead}" in recovered[0]
    assert user_repo.worktrees() == [str(repo)] and user_repo.branches() == ["main"]
    assert list((repo / ".git" / "fixloop" / "sentinels").iterdir()) == []
    assert "git-protocol" in status[0]
    assert status[1].strip(), "runs show latest said nothing"
    assert user_repo.user_work() == before
