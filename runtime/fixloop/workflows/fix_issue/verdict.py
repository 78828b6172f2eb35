"""The run's status and its reason, from the evidence (see `result.py` for what each means)."""

from __future__ import annotations

from fixloop.workflows.fix_issue.result import FixIssueResult, IssueStatus
from fixloop.workflows.fix_issue.suite import summary


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def decide(result: FixIssueResult) -> tuple[IssueStatus, str]:
    status, reason = _decide(result)
    if result.stop_detail and status is IssueStatus.UNRESOLVED and result.attempts:
        reason = f"{reason}; then {result.stop_detail}, so no further attempt started"
    return status, reason


def _decide(result: FixIssueResult) -> tuple[IssueStatus, str]:
    attempts = result.attempts
    if not attempts:
        spent = f" ({result.stop_detail})" if result.stop_detail else ""
        return IssueStatus.UNRESOLVED, f"no attempt was made{spent}"
    last = attempts[-1]
    acceptance = result.acceptance
    if last.succeeded and not result.patch_files:
        return IssueStatus.UNRESOLVED, "the fixer said done but changed nothing"
    if last.succeeded and acceptance is not None and acceptance.accepted:
        graded = acceptance.grade.reason if acceptance.grade else summary(acceptance.results)
        return IssueStatus.RESOLVED, (
            f"fixed in attempt {last.number}; the patch applies to a clean checkout and "
            f"its acceptance tests pass ({graded})"
        )
    if last.succeeded:
        problem = acceptance.problem if acceptance is not None else "the patch was not verified"
        return IssueStatus.REJECTED, problem
    if last.outcome != "ok":
        return IssueStatus.UNRESOLVED, f"the fixer's answer was inconclusive ({last.reason})"
    if last.fixer_status == "no_task":
        return (
            IssueStatus.UNRESOLVED,
            f"the fixer found nothing to change: {_first_line(last.notes)}",
        )
    if last.fixer_status == "failed":
        return IssueStatus.UNRESOLVED, f"the fixer could not fix it: {_first_line(last.notes)}"
    return IssueStatus.UNRESOLVED, (
        f"the tests still fail at the last revision ({summary(result.tests_after)})"
    )


__all__ = ["decide"]
