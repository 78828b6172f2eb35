"""What a fix-issue run produced: its status, its evidence, and `result.json`.

`status` is one of three, decided by evidence, never by the model's word alone:

- `resolved`: an attempt ended with the fixer saying `done` and every preset test passing at the
  revision it left, and the patch was accepted on a clean checkout of the base commit;
- `rejected`: such an attempt, but the patch did not apply or failed acceptance there;
- `unresolved`: no attempt got that far (the fixer gave up, its answer was inconclusive, the
  tests still failed, nothing changed, or a run budget was spent: `stop_reason` says which,
  `token_budget` for the tokens; a call the budget refused is no attempt: it ran nothing). A
  patch that was exported anyway is still checked, and its acceptance reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from fixloop.masking import dumps_masked, mask_json
from fixloop.workflows.fix_issue.acceptance import Acceptance
from fixloop.workflows.fix_issue.state import AttemptRecord
from fixloop.workflows.fix_issue.suite import CommandRun, summary
from fixloop.workflows.kernel.result import Result


class IssueItemStatus(StrEnum):
    """The issue's status as an item: each attempt passed or failed, then resolved or failed."""

    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    RESOLVED = "resolved"


class IssueStatus(StrEnum):
    RESOLVED = "resolved"
    REJECTED = "rejected"
    UNRESOLVED = "unresolved"

    @property
    def item_status(self) -> IssueItemStatus:
        return IssueItemStatus.RESOLVED if self is IssueStatus.RESOLVED else IssueItemStatus.FAILED


@dataclass
class FixIssueResult(Result):
    issue: str  # the issue file as the user named it
    issue_id: str
    base: str = ""
    status: IssueStatus = IssueStatus.UNRESOLVED
    reason: str = ""
    sandbox: str = ""
    tests: list[str] = field(default_factory=list)
    tests_before: list[CommandRun] = field(default_factory=list)
    tests_after: list[CommandRun] = field(default_factory=list)
    attempts: list[AttemptRecord] = field(default_factory=list)
    acceptance: Acceptance | None = None
    patch_path: str = ""
    patch_files: int = 0
    result_path: str = ""
    trace_path: str = ""
    changed_outside_tools: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    stop_reason: str = ""  # the run budget that refused the next attempt (`token_budget`, …)
    stop_detail: str = ""  # in words: `run token budget spent: 150210 of 150000 tokens`
    max_tokens: int = 0  # the run's token budget (0: none)
    kept_worktree: str = ""  # --keep-worktree: where the unresolved run's worktree stays
    environment: str = ""  # under docker: the image the fixer's tests ran in last

    def incomplete(self) -> bool:
        """Exit 0 only for a resolved issue."""
        return self.status is not IssueStatus.RESOLVED

    @property
    def cost_usd(self) -> float:
        return round(sum(attempt.cost_usd for attempt in self.attempts), 6)

    @property
    def turns(self) -> int:
        return sum(attempt.turns for attempt in self.attempts)

    @property
    def tokens(self) -> int:
        return sum(a.input_tokens + a.output_tokens for a in self.attempts)

    @property
    def tool_calls(self) -> int:
        return sum(attempt.tool_calls for attempt in self.attempts)

    def details(self) -> dict[str, Any]:
        return {
            "issue": self.issue,
            "issue_id": self.issue_id,
            "status": str(self.status),
            "reason": self.reason,
            "base": self.base,
            "sandbox": self.sandbox,
            "environment": self.environment,
            "tests": {
                "commands": self.tests,
                "before": [run.to_json() for run in self.tests_before],
                "after": [run.to_json() for run in self.tests_after],
                "acceptance": self.acceptance.to_json() if self.acceptance else None,
            },
            "attempts": [attempt.model_dump() for attempt in self.attempts],
            "patch": {"path": self.patch_path, "files": self.patch_files},
            "cost_usd": self.cost_usd,
            "turns": self.turns,
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
            "stop_reason": self.stop_reason,
            "stop_detail": self.stop_detail,
            "tool_calls": self.tool_calls,
            "wall_s": round(self.wall_s, 3),
            "kept_worktree": self.kept_worktree,
            "changed_outside_tools": self.changed_outside_tools,
            "result_path": self.result_path,
            "trace_path": self.trace_path,
        }

    def work_items(self) -> list[FixIssueResult]:
        """The issue is the run's one item."""
        return [self]

    def item_json(self, item: FixIssueResult) -> dict[str, Any]:
        return {"id": item.issue_id, "status": str(item.status.item_status), "title": item.issue}

    def json_result(self) -> dict[str, Any]:
        # As result.json holds it: test output may quote a key.
        return dict(mask_json(self.to_json()))

    def summary_lines(self) -> list[str]:
        """The summary a person reads at the end of a run."""
        if self.nothing_to_do:  # resolved already by an earlier run
            return [self.nothing_to_do]
        attempts = f"{len(self.attempts)} attempt(s)"
        lines = [f"fix-issue run {self.run_id}: {self.status} after {attempts}: {self.reason}"]
        accepted = "not run"
        if self.acceptance is not None:
            verdict = "accepted" if self.acceptance.accepted else "rejected"
            accepted = f"{verdict} ({summary(self.acceptance.results)})"
        lines.append(
            f"  tests before: {summary(self.tests_before)}; after: {summary(self.tests_after)}; "
            f"acceptance on a clean checkout of {self.base[:12]}: {accepted}"
        )
        if self.patch_files:
            lines.append(f"  patch: {self.patch_path} ({self.patch_files} file(s)); git apply it")
        lines.append(f"  result: {self.result_path}")
        if self.kept_worktree:
            lines.append(f"  worktree kept: {self.kept_worktree} (fixloop recover removes it)")
        lines.append(f"  trace: {self.trace_path}")
        lines.append(
            f"  {self.turns} turn(s), {self.tool_calls} tool call(s), {self.tokens} token(s), "
            f"${self.cost_usd:.4f}, "
            f"{self.wall_s:.1f}s; {self.sandbox}"
        )
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return lines


def write_result(path: Path, result: FixIssueResult) -> None:
    """`result.json`, masked like every trace (test output and the fixer's notes can quote a
    secret), written whole (a temporary file, then a rename)."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(
        dumps_masked(result.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    temporary.replace(path)


__all__ = ["FixIssueResult", "IssueStatus", "write_result"]
