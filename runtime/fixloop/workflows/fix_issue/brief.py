"""What the issue-fixer is told: its inputs and its task, per attempt."""

from __future__ import annotations

from typing import Any

from fixloop.workflows.fix_issue.plan import FixIssuePlan
from fixloop.workflows.fix_issue.state import AttemptRecord

ROLE = "issue-fixer"
FEEDBACK_OUTPUT_CHARS = 1500  # of each failed command's output, for the next attempt


def call_key(plan: FixIssuePlan, attempt: int) -> str:
    return f"{ROLE}/{plan.issue_id}/attempt-{attempt}"


def fixer_inputs(plan: FixIssuePlan, attempt: int, earlier: list[AttemptRecord]) -> dict[str, Any]:
    return {
        "issue_id": plan.issue_id,
        "issue": plan.issue_text,
        "tests": [f"{n}: {test.shown}" for n, test in enumerate(plan.tests, start=1)],
        "attempt": attempt,
        "previous_attempts": [_feedback(record) for record in earlier],
    }


def _feedback(record: AttemptRecord) -> dict[str, Any]:
    failed = [
        {
            "command": test["command"],
            "status": test["status"],
            "output": str(test.get("output", ""))[-FEEDBACK_OUTPUT_CHARS:],
        }
        for test in record.tests
        if test["status"] != "passed" or test.get("workspace_changed")
    ]
    return {
        "attempt": record.number,
        "you_said": record.fixer_status or f"nothing usable ({record.reason})",
        "your_notes": record.notes,
        "tests_at_the_end": failed or "all passed",
    }


def task_text(plan: FixIssuePlan, attempt: int, max_attempts: int) -> str:
    again = (
        " Earlier attempts did not succeed: read previous_attempts first." if attempt > 1 else ""
    )
    return (
        f"Fix issue {plan.issue_id} (attempt {attempt} of {max_attempts}) in this repository "
        f"with your tools: locate, reproduce with run_tests, edit, test again.{again} "
        "Then return your ImplResult."
    )


__all__ = ["ROLE", "call_key", "fixer_inputs", "task_text"]
