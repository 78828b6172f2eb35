"""What the harness measured: per task and in total."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

RESOLVED = "resolved"


@dataclass
class TaskOutcome:
    id: str
    kind: str
    title: str
    status: str = "unresolved"  # resolved, rejected, unresolved, error, not-run
    reason: str = ""
    base: str = ""
    run_id: str = ""
    sandbox: str = ""
    tests_before: str = ""
    tests_after: str = ""
    accepted: bool | None = None  # did the exported patch pass acceptance (None: no patch)
    attempts: int = 0
    turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    started_at: str = ""  # when the task started and ended (UTC, ms): with --workers, tasks overlap
    ended_at: str = ""
    # The evidence (evidence.py): the selected tests passing at acceptance, "passed/selected"
    fail_to_pass: str = ""
    pass_to_pass: str = ""
    tests: list[dict[str, str]] = field(default_factory=list)  # id, role, base, after_fix, accepted
    output: str = ""  # the runner's output tail at acceptance
    patch: str = ""  # the patch graded
    # The whole patch (masked, not cut short), for SWE-bench's predictions; not in the report.
    model_patch: str = field(default="", repr=False)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["model_patch"]
        data["wall_s"] = round(self.wall_s, 3)
        data["cost_usd"] = round(self.cost_usd, 6)
        return data


@dataclass
class BenchResult:
    corpus: str
    version: int
    digest: str
    backend: str
    sandbox: str
    outcomes: list[TaskOutcome] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def resolved(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == RESOLVED)

    @property
    def rate(self) -> float:
        return self.resolved / len(self.outcomes) if self.outcomes else 0.0

    @property
    def errors(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == "error")

    @property
    def exit_code(self) -> int:
        """0 when every task was measured (whatever the rate); 1 when one could not be."""
        return 1 if self.errors else 0

    def totals(self) -> dict[str, Any]:
        return {
            "tasks": len(self.outcomes),
            "resolved": self.resolved,
            "resolved_rate": round(self.rate, 4),
            "accepted": sum(1 for outcome in self.outcomes if outcome.accepted),
            "errors": self.errors,
            "attempts": sum(outcome.attempts for outcome in self.outcomes),
            "turns": sum(outcome.turns for outcome in self.outcomes),
            "tool_calls": sum(outcome.tool_calls for outcome in self.outcomes),
            "cost_usd": round(sum(outcome.cost_usd for outcome in self.outcomes), 6),
            "wall_s": round(self.wall_s, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "corpus": {"name": self.corpus, "version": self.version, "digest": self.digest},
            "backend": self.backend,
            "sandbox": self.sandbox,
            "totals": self.totals(),
            "tasks": [outcome.to_json() for outcome in self.outcomes],
        }


__all__ = ["RESOLVED", "BenchResult", "TaskOutcome"]
