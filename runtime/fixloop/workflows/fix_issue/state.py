"""Fix-issue's loop state on disk: the tests before, and every attempt as it ends.

Saved to the run's `state.json` (`runs.state`) after every change, so a killed run leaves what it
had done: the attempts made, what each fixer said, the tests at the revision each left. A killed
run is recovered (`fixloop recover` removes its worktrees) and not resumed: a model's
conversation cannot be continued, and each attempt's patch is kept in the run folder.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fixloop.runs.state import RunState


class AttemptRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int
    outcome: str  # the agent call: ok or inconclusive
    reason: str = ""  # why it was inconclusive, in one line
    fixer_status: str | None = None  # done, failed or no_task, as the fixer said
    notes: str = ""
    files_reported: list[str] = Field(default_factory=list)
    revision: str = ""  # the worktree's revision when the attempt ended
    tests: list[dict[str, Any]] = Field(default_factory=list)  # at that revision
    succeeded: bool = False  # the fixer said done AND every test passed at that revision
    turns: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    served_model: str = ""  # the model the server said answered ("" when it did not say)


class FixIssueState(RunState):
    workflow: Literal["fix-issue"] = "fix-issue"
    base: str
    checks: str = ""  # digest of what decides "resolved": the test commands and selections
    tests_before: list[dict[str, Any]] = Field(default_factory=list)
    attempts: list[AttemptRecord] = Field(default_factory=list)
    stop_reason: str = ""  # a run budget that refused the next attempt: token_budget, …


__all__ = ["AttemptRecord", "FixIssueState"]
