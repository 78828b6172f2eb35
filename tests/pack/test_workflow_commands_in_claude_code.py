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
import yaml
from tests.helpers.claude_code import Installed, Played, bash, envelope, installed, played
from tests.helpers.fix_issue import STATS, fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import UserRepo, git
from tests.workflows.execute_wave.scripts import implement, score, scores
from tests.workflows.fix_engine.scenario import ADD_RIGHT, implemented, state_dir, verdict

from fixloop.extras.demo.example import build_example
from fixloop.extras.demo.model import FINDINGS, FIX_FINDINGS_SCRIPT
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


def headless(
    claude: Installed, repo: Path, prompt: str, *command: str, roles: ScriptReplay
) -> Played:
    """`prompt` played as the command documents say: is fixloop there, then its one command."""
    done = played(
        [
            bash("command -v fixloop"),
            bash(run(*command, "--backend", "claude", "--json"), LONGEST_BASH_MS),
            text("Done: the summary of the run."),
        ],
        prompt,
        repo,
        claude.session(repo),
        roles=roles,
    )
    assert roles.unplayed() == []
    return done


def nothing_of_the_run_left(repo: UserRepo) -> None:
    assert repo.worktrees() == [str(repo.path)]
    assert repo.branches() == ["main"]
    assert repo.git("tag", "--list", "fixloop/*") == ""
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    assert not sentinels.exists() or list(sentinels.iterdir()) == []
    worktrees = repo.path / ".fixloop" / "worktrees"
    assert not worktrees.exists() or list(worktrees.iterdir()) == []


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


def test_review_writes_the_findings_file_for_fix_findings(
    claude: Installed, user_repo: UserRepo
) -> None:
    repo = user_repo.path
    before = user_repo.user_work()
    found = {
        "schema_version": "v1",
        "findings": [
            {
                **{"id": 1, "severity": "P0", "title": "add subtracts", "body": "a - b"},
                **{"file": "src/app.py", "line_start": 2, "line_end": 2, "confidence": 0.9},
                **{"criterion": "add adds", "verdict": None, "evidence": None},
            }
        ],
        "checks_run": ["src/app.py read"],
    }
    replay = ScriptReplay({"reviewer/review/findings": {"output": found}})

    done = headless(
        claude,
        repo,
        "/fixloop:review src/app.py --format findings-json --output findings.json",
        *("fixloop", "review", "src/app.py", "--format", "findings-json"),
        *("--output", "findings.json"),
        roles=replay,
    )

    assert envelope(done.outcomes[1])["ok"] is True
    written = json.loads((repo / "findings.json").read_text())
    assert [(f["id"], f["verdict"]) for f in written["findings"]] == [(1, "confirmed")]
    assert user_repo.user_work() == before
    assert (repo / "src" / "app.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_fix_findings_stages_the_fix_in_the_users_tree(claude: Installed, tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    findings = tmp_path / "findings.json"
    [label] = [f for f in FINDINGS["findings"] if f["id"] == 2]
    findings.write_text(json.dumps({**FINDINGS, "findings": [label]}))
    script = {k: v for k, v in FIX_FINDINGS_SCRIPT.items() if k.split("/")[1] == "2"}
    head = git(repo, "rev-parse", "HEAD").strip()

    done = headless(
        claude,
        repo,
        f"/fixloop:fix-findings {findings}",
        *("fixloop", "fix-findings", str(findings)),
        roles=ScriptReplay(script),
    )

    assert envelope(done.outcomes[1])["counts"] == {"resolved": 1}
    # Staged, never committed; nothing of the run left in the repository.
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "diff", "--staged", "--name-only").split() == ["shelf/labels.py"]
    assert 'return f"{name}: {quantity}"' in (repo / "shelf" / "labels.py").read_text()
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_fix_engine_commits_the_item_and_writes_complete(
    claude: Installed, user_repo: UserRepo
) -> None:
    repo = user_repo.path
    prd = repo / "sections" / "calc" / "mini-prd.md"
    prd.parent.mkdir(parents=True)
    prd.write_text("# Calc\n\n## Acceptance Criteria\n\n- AC-1: `add(a, b)` adds\n")
    (repo.parent / "fixloop.toml").write_text('model-profile = "budget"\n')  # the project's
    before, base = user_repo.user_work(), user_repo.head()
    script = {
        "executor/AC-1/attempt-1": implemented(
            "AC-1", ["src/app.py"], "add adds", edits=[{"path": "src/app.py", "content": ADD_RIGHT}]
        ),
        "verifier/AC-1/attempt-1": verdict("AC-1", "rejected", "add(2, 1) is 3 (src/app.py:2)"),
    }

    done = headless(
        claude,
        repo,
        "/fixloop:fix-engine sections/calc/mini-prd.md",
        *("fixloop", "fix-engine", "sections/calc/mini-prd.md"),
        roles=ScriptReplay(script),
    )

    items = envelope(done.outcomes[1])["items"]
    assert [(i["id"], i["status"]) for i in items] == [("AC-1", "done")]
    subjects = user_repo.git("log", "--format=%s", f"{base}..main").splitlines()
    assert subjects == ["calc: AC-1 `add(a, b)` adds"]
    assert user_repo.git("show", "main:src/app.py") == ADD_RIGHT
    # The project's model profile reached the roles the runtime ran for the command.
    models = {r.call_key.split("/")[0]: r.model for r in done.roles}
    assert "sonnet" in models["executor"] and "haiku" in models["verifier"], models
    meta = yaml.safe_load((state_dir(repo) / "meta.yaml").read_text())
    assert meta["status"] == "completed" and (state_dir(repo) / "COMPLETE").is_file()
    assert user_repo.user_work() == before
    nothing_of_the_run_left(user_repo)


def test_execute_wave_commits_the_wave(
    claude: Installed, user_repo: UserRepo, tmp_path: Path
) -> None:
    repo = user_repo.path
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": 1, "name": "add mul"}]))
    before = user_repo.user_work()
    mul = "def mul(a, b):\n    return a * b\n"
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": mul}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
    }

    done = headless(
        claude,
        repo,
        f"/fixloop:execute-wave {tasks}",
        *("fixloop", "execute-wave", str(tasks)),
        roles=ScriptReplay(script),
    )

    items = envelope(done.outcomes[1])["items"]
    assert [(i["id"], i["status"]) for i in items] == [("1", "committed")]
    assert user_repo.git("show", "main:src/mul.py") == mul
    assert [t["status"] for t in json.loads(tasks.read_text())] == ["done"]
    assert user_repo.user_work() == before
    nothing_of_the_run_left(user_repo)
