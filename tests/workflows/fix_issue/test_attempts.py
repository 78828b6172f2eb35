"""The attempts: what counts as success, what goes to the next attempt, when the loop stops,
and what the patch holds."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)

from fixloop.agents.budget import RunBudget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.workflows.fix_issue import FixIssueOptions, FixIssueResult, IssueStatus, run_fix_issue
from fixloop.workflows.fix_issue.plan import PYTEST, preset_tests
from fixloop.workflows.kernel.workflow import Context

KEY = "issue-fixer/ISSUE/attempt-{}"
HALF_FIX = fixing_tools(new="(len(values) + 2)")  # edits, but the test still fails


def run(
    tmp_path: Path, pack: Pack, script: dict[str, Any], budget: RunBudget | None = None
) -> tuple[FixIssueResult, ScriptedBackend]:
    repo = make_issue_repo(tmp_path / "repo")
    backend = ScriptedBackend(script)
    options = FixIssueOptions(
        issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST], open_sandbox=recorder()
    )
    return run_fix_issue(options, Context(pack, backend, budget=budget)), backend


def test_done_with_failing_tests_is_a_failed_attempt_and_its_output_goes_on(
    tmp_path: Path, pack: Pack
) -> None:
    fixed_later = fixing_tools(old="(len(values) + 2)", new="len(values)")
    script = {
        KEY.format(1): {"tools": HALF_FIX, "output": FIXED_OUTPUT},
        KEY.format(2): {"tools": fixed_later, "output": FIXED_OUTPUT},
    }
    result, backend = run(tmp_path, pack, script)
    assert result.status is IssueStatus.RESOLVED, result.reason
    first, second = result.attempts
    assert (first.fixer_status, first.succeeded, second.succeeded) == ("done", False, True)
    assert first.tests[0]["status"] == "failed"
    # The second attempt was told what the first left behind.
    prompt = backend.calls[1].system_prompt
    assert '"attempt": 1' in prompt and "AssertionError" in prompt and "attempt: 2" in prompt


def test_three_failed_attempts_are_unresolved_and_the_patch_is_still_checked(
    tmp_path: Path, pack: Pack
) -> None:
    failed = {"tools": HALF_FIX[:2], "output": {**FIXED_OUTPUT, "status": "failed", "notes": "?"}}
    script = {KEY.format(1): {"tools": HALF_FIX, "output": FIXED_OUTPUT}}
    script |= {KEY.format(n): failed for n in (2, 3)}
    result, _ = run(tmp_path, pack, script)
    assert result.status is IssueStatus.UNRESOLVED and len(result.attempts) == 3
    assert result.reason == "the fixer could not fix it: ?"
    assert result.patch_files == 1 and result.acceptance is not None
    assert not result.acceptance.accepted  # the half fix is reported, and does not count
    assert json.loads(Path(result.result_path).read_text())["status"] == "unresolved"


def test_an_inconclusive_answer_fails_the_attempt_even_when_the_tests_pass(
    tmp_path: Path, pack: Pack
) -> None:
    script = {KEY.format(1): {"tools": fixing_tools(), "fail": "malformed"}}
    result, _ = run(tmp_path, pack, script)
    assert result.attempts[0].outcome == "inconclusive" and not result.attempts[0].succeeded
    assert result.tests_after[0].passed
    assert result.status is IssueStatus.UNRESOLVED
    assert result.attempts[0].reason.startswith("malformed_output")
    assert result.reason.startswith("the fixer's answer was inconclusive (missing_output")
    assert result.acceptance is not None and result.acceptance.accepted  # the candidate, reported


def test_nothing_to_do_stops_the_loop(tmp_path: Path, pack: Pack) -> None:
    no_task = {"output": {**FIXED_OUTPUT, "status": "no_task", "notes": "works as intended"}}
    result, backend = run(tmp_path, pack, {KEY.format(1): no_task})
    assert len(backend.calls) == 1 and result.patch_files == 0 and result.acceptance is None
    assert result.reason == "the fixer found nothing to change: works as intended"


def test_a_spent_budget_stops_the_attempts(tmp_path: Path, pack: Pack) -> None:
    costly = {"tools": HALF_FIX, "output": FIXED_OUTPUT, "cost_usd": 0.5}
    script = {KEY.format(n): costly for n in (1, 2, 3)}
    result, backend = run(tmp_path, pack, script, RunBudget(max_cost_usd=0.5))
    assert len(backend.calls) == 1  # the second call was refused before it started
    # A refused call is no attempt: one attempt, and the reason says what stopped the rest.
    assert [a.number for a in result.attempts] == [1]
    assert result.stop_reason == "run_budget"
    assert result.cost_usd == 0.5 and result.status is IssueStatus.UNRESOLVED
    assert result.reason.endswith(
        "then run cost budget spent: $0.5000 of $0.5000, so no further attempt started"
    )
    assert "after 1 attempt(s)" in result.summary_lines()[0]


def test_the_token_budget_refuses_the_next_attempt_and_runs_no_more_tests(
    tmp_path: Path, pack: Pack
) -> None:
    """150,000 tokens by default: two calls of 80,000 each spend it, the third is refused. It
    is no attempt and runs no test: the sandbox ran the tests before and two checks only."""
    heavy = {"tools": HALF_FIX, "output": FIXED_OUTPUT, "input_tokens": 70_000}
    heavy["output_tokens"] = 10_000
    script = {KEY.format(n): heavy for n in (1, 2, 3)}
    repo = make_issue_repo(tmp_path / "repo")
    backend = ScriptedBackend(script)
    opener = recorder()
    options = FixIssueOptions(
        issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST], open_sandbox=opener
    )
    assert options.max_tokens == 150_000
    result = run_fix_issue(options, Context(pack, backend))
    assert len(backend.calls) == 2 and len(result.attempts) == 2
    assert result.stop_reason == "token_budget" and result.tokens == 160_000
    assert result.stop_detail == "run token budget spent: 160000 of 150000 tokens"
    assert "after 2 attempt(s)" in result.summary_lines()[0]
    events = [json.loads(line) for line in Path(result.trace_path).read_text().splitlines()]
    phases = [e["step"] for e in events if e["event"] == "phase" and e["workflow"] == "fix-issue"]
    assert phases.count("fix-attempt") == 3 and phases.count("check-attempt") == 2
    # The refused call ran no test: the sandbox ran what a run of two attempts runs.
    two = recorder()
    options = dataclasses.replace(options, open_sandbox=two, max_tokens=0, max_attempts=2)
    make_issue_repo(tmp_path / "repo2")
    options = dataclasses.replace(options, repo=tmp_path / "repo2")
    run_fix_issue(options, Context(pack, ScriptedBackend(script)))
    assert len(opener.opened[0].commands) == len(two.opened[0].commands)
    # The second call was told how many tokens the run had left.
    assert backend.calls[1].max_tokens == 70_000
    saved = json.loads(Path(result.result_path).read_text())
    assert (saved["stop_reason"], saved["tokens"], saved["max_tokens"]) == (
        "token_budget",
        160_000,
        150_000,
    )
    state = json.loads((Path(result.result_path).parent / "state.json").read_text())
    assert state["stop_reason"] == "token_budget" and len(state["attempts"]) == 2


def test_no_token_budget_with_zero(tmp_path: Path, pack: Pack) -> None:
    heavy = {"tools": HALF_FIX, "output": FIXED_OUTPUT, "input_tokens": 200_000}
    script = {KEY.format(n): heavy for n in (1, 2, 3)}
    repo = make_issue_repo(tmp_path / "repo")
    backend = ScriptedBackend(script)
    options = FixIssueOptions(
        issue=write_issue(tmp_path),
        repo=repo,
        tests=[UNITTEST],
        open_sandbox=recorder(),
        max_tokens=0,
    )
    result = run_fix_issue(options, Context(pack, backend))
    assert len(result.attempts) == 3 and result.stop_reason == ""


def test_a_change_made_outside_the_tools_stays_out_of_the_patch(tmp_path: Path, pack: Pack) -> None:
    sneaky = {
        "tools": fixing_tools(),
        "bash": ["echo 'extra = 1' >> calc/__init__.py"],
        "output": FIXED_OUTPUT,
    }
    result, _ = run(tmp_path, pack, {KEY.format(1): sneaky})
    assert result.status is IssueStatus.RESOLVED
    assert result.changed_outside_tools == ["calc/__init__.py"]
    assert "calc/__init__.py" not in Path(result.patch_path).read_text()
    assert any("left out of the patch" in warning for warning in result.warnings)


def test_weakening_the_test_is_rejected_at_acceptance(tmp_path: Path, pack: Pack) -> None:
    weaken = [
        {"name": "read_file", "input": {"path": "tests/test_stats.py"}},
        {
            "name": "edit_file",
            "input": {
                "path": "tests/test_stats.py",
                "version": "@last",
                "old": "average([2, 4]), 3",
                "new": "average([2, 4]), 2",
            },
        },
    ]
    result, _ = run(tmp_path, pack, {KEY.format(1): {"tools": weaken, "output": FIXED_OUTPUT}})
    assert result.attempts[0].succeeded  # its own tests passed in its worktree
    assert result.status is IssueStatus.REJECTED
    assert result.acceptance is not None and result.acceptance.restored == ["tests/test_stats.py"]


def test_without_test_commands_a_pytest_project_gets_pytest(tmp_path: Path) -> None:
    repo = make_issue_repo(tmp_path / "repo")  # it has a tests/ folder
    commands, guessed = preset_tests([], repo, check_found=False)
    assert guessed and [c.argv for c in commands] == [PYTEST]
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(FixloopError, match="no test command: give one with --test CMD"):
        preset_tests([], other, check_found=False)
