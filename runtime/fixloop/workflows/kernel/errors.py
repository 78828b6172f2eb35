"""The three ways a workflow's work stops short, shared by every workflow.

- `StepFailed` (from the step layer): a document step did not succeed. The run stops; the git
  protocol's cleanup still runs (it is every run's `finally`), and the error names the step, its
  exit code, its last command and that command's document line.
- `SkipItem`: this item (a finding, a task, a checklist item) cannot be done as asked. The run
  goes on with the next item; the item's changes are rolled back per file and its reason is
  reported. Review-fix's "skipped: …" findings, execute-wave's failed tasks.
- `Escalate`: this item needs a person. The run goes on; the item is reported as escalated with
  what is left for the person (fix-findings' escalation, fix-engine's error report).

Raising them replaces status strings threaded through return values: the code that finds the
problem says so where it finds it, and one `except` per item loop decides what happens next.
"""

from __future__ import annotations

from fixloop.steps.result import StepFailed


class SkipItem(Exception):
    """Skip the current item; `reason` is the one line a report shows, `detail` the rest."""

    def __init__(self, reason: str, detail: str = "", summary: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail
        self.summary = summary  # what the agent said it did, when it said anything


class Escalate(Exception):
    """Stop working on the current item and hand it to a person; the message says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


__all__ = ["Escalate", "SkipItem", "StepFailed"]
