"""`fixloop runs show` and `runs list` as a person reads them, held to golden files.

Real runs (real git, worktrees and steps; the model scripted) are read back from their folders
and printed by the command line; what changes from run to run (run ids, times, commit hashes,
durations, the temporary folder) is replaced by a placeholder before the comparison.
Regenerate with `pytest --update-goldens tests/runs/test_show_text.py` (docs/testing.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import Golden
from tests.helpers.fix_issue import fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import APP_FIX, review_text, run, write_review
from tests.helpers.reviews import finding as review_finding
from tests.workflows.fix_engine.scenario import make_section_repo
from tests.workflows.fix_engine.scenario import run as run_fix_engine
from tests.workflows.fix_engine.test_workflow import passing

from fixloop.agents.backend import BackendFailed
from fixloop.cli.main import main

GOLDENS = Path(__file__).parent / "goldens" / "show"
RUN_ID = re.compile(r"\d{8}T\d{6}Z-\d+-[0-9a-f]{6}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
HEADERS = ("item", "status", "attempts", "cost", "commit", "reason")
SECONDS = re.compile(r"\b\d+\.\d+s\b")


def shown(capsys: pytest.CaptureFixture[str], repo: Path, tmp: Path, *args: str) -> str:
    capsys.readouterr()
    code = main(["runs", *args, "--repo", str(repo)])
    out = capsys.readouterr().out
    assert code == 0
    return normalised(out, repo, tmp)


def normalised(text: str, repo: Path, tmp: Path) -> str:
    for commit in git(repo, "log", "--all", "--format=%H").split():
        text = text.replace(commit, "<commit>").replace(commit[:7], "<commit>")
    text = text.replace(str(tmp), "<tmp>")
    return RUN_ID.sub("<run>", TIME.sub("<time>", SECONDS.sub("<s>", text)))


def review_fix_run(repo: Path) -> None:
    write_review(
        repo,
        review_text(
            review_finding("CR-01", "add subtracts", "src/app.py"),
            review_finding("CR-02", "util name", "src/util.py"),
        ),
    )
    script = {
        "fixer/CR-01/iteration-1": {**APP_FIX, "cost_usd": 0.25},
        "fixer/CR-02/iteration-1": {"fail": "timeout"},
    }
    run(repo, script)


def test_runs_show_leads_with_the_summary_then_the_diffs(
    user_repo: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], golden: Golden
) -> None:
    review_fix_run(user_repo.path)

    text = shown(capsys, user_repo.path, tmp_path, "show", "latest")

    golden.check(GOLDENS / "review-fix.txt", text)
    lines = text.splitlines()
    assert lines[0] == "run <run>  review-fix  finished: 1 fixed, 1 skipped"
    table = next(n for n, line in enumerate(lines) if line.split() == list(HEADERS))
    assert lines[table + 1].split()[:5] == ["CR-01", "fixed", "1", "$0.2500", "<commit>"]
    assert lines.index("  diff:") > table, "the summary comes before any diff"
    assert "(runtime)" not in text and ".md:" not in text, "no step commands unless asked"


def test_the_step_commands_come_with_commands(
    user_repo: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    review_fix_run(user_repo.path)

    text = shown(capsys, user_repo.path, tmp_path, "show", "latest", "--commands")

    assert re.search(r"^    .*git-protocol\.md:\d+: .*git commit", text, re.MULTILINE)
    assert "--commands)" not in text


def test_a_backend_failure_is_shown_in_its_own_words(
    user_repo: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], golden: Golden
) -> None:
    write_review(user_repo.path, review_text(review_finding("CR-01", "add", "src/app.py")))
    outage = {"fail": "backend", "raw": "the model call failed: API Error: 529 Overloaded"}
    with pytest.raises(BackendFailed):
        run(user_repo.path, {"fixer/CR-01/iteration-1": outage})

    text = shown(capsys, user_repo.path, tmp_path, "show", "latest")

    golden.check(GOLDENS / "backend-failed.txt", text)
    assert text.startswith("run <run>  review-fix  failed: 1 stopped\n")
    assert "  stopped: --backend:1:1: backend: fixer/CR-01/iteration-1: " in text
    assert (
        "  call fixer/CR-01/iteration-1: inconclusive (backend_error): the model call failed: "
        "API Error: 529 Overloaded"
    ) in text


def test_fix_issue_shows_its_tool_calls_and_patch_and_latest_is_the_users_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], golden: Golden
) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(fixing_script()))
    argv = ["fix-issue", str(issue), "--repo", str(repo), "--test", "python3 -m unittest"]
    assert main([*argv, "--script", str(script), "--sandbox", "local"]) == 0

    text = shown(capsys, repo, tmp_path, "show", "latest")
    listing = shown(capsys, repo, tmp_path, "list")

    golden.check(GOLDENS / "fix-issue.txt", text)
    assert text.startswith("run <run>  fix-issue  finished: 1 resolved\n"), "not the -verify run"
    assert "  tool calls (5):\n    1. search_code: ok" in text
    assert "    +    return sum(values) / len(values)" in text, "the patch"
    golden.check(GOLDENS / "fix-issue-list.txt", re.sub(r"(?<=\S)  +", "  ", listing))
    header, mine, verification = listing.splitlines()
    assert header.split() == ["run", "workflow", "state", "outcome", "started", "ended", "note"]
    assert "  1 resolved  " in mine and verification.endswith("part of <run>")


def test_attempts_agree_with_what_each_item_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_section_repo(tmp_path / "repo")
    fix_engine, _ = run_fix_engine(repo.path, passing())
    assert fix_engine.exit_code == 0

    text = shown(capsys, repo.path, tmp_path, "show", "latest")

    row = next(line for line in text.splitlines() if line.startswith("AC-1  "))
    assert row.split()[1:3] == ["done", "2"] and row.endswith("done after 2 attempt(s)")
    assert "  2 attempt(s); 4 agent call(s)" in text, "one count, the same everywhere"
    assert "0 attempt(s)" not in text
    assert "  note: AC-1 attempt 1: not passed (confirmed)" in text, "the verdicts under their item"
