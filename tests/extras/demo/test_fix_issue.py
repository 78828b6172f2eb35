"""The demo's fix-issue case: an issue in, a patch graded per test out, the user's branch kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import default_pack_root, load_pack
from fixloop.events import EventStream
from fixloop.extras.demo.fix_issue import (
    FIX_ISSUE_SCRIPT,
    build_issue_example,
    check_issue,
    issue_summary_lines,
    run_issue_demo,
)
from fixloop.workflows.fix_issue.result import IssueStatus


def test_the_issue_demo_resolves_offline_and_checks_itself(tmp_path: Path) -> None:
    repo = tmp_path / "ledger"
    issue = build_issue_example(repo)
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    pack, _ = load_pack(default_pack_root())
    backend = ScriptedBackend(FIX_ISSUE_SCRIPT)
    result = run_issue_demo(issue, repo, pack, backend, EventStream())
    assert backend.unplayed() == []
    assert result.status is IssueStatus.RESOLVED, result.reason
    assert check_issue(result, repo, base) == []
    patch = Path(result.patch_path).read_text(encoding="utf-8")
    assert "-    return sum(amount for kind, amount in entries if kind == 'sale')" in patch
    [first, second] = issue_summary_lines(result)
    assert first == (
        "fix-issue     resolved after 1 attempt(s): test_refunds_count now passes, "
        "test_sales_add_up still passes"
    )
    assert second.startswith("                the patch: ")


def test_the_self_check_catches_a_patch_that_was_not_graded(tmp_path: Path) -> None:
    repo = tmp_path / "ledger"
    issue = build_issue_example(repo)
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    pack, _ = load_pack(default_pack_root())
    script = {key: {**r, "tools": r["tools"][:3]} for key, r in FIX_ISSUE_SCRIPT.items()}
    result = run_issue_demo(issue, repo, pack, ScriptedBackend(script), EventStream())
    problems = check_issue(result, repo, base)
    assert any("did not resolve" in problem for problem in problems), problems
