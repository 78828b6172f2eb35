"""The statuses an item of work goes through, one vocabulary for every workflow.

An item is what a workflow works on one at a time: a review finding, a confirmed finding, a task
of a wave, a checklist item of a section, an issue. Each workflow uses the part of this
vocabulary its document speaks of; reports, `--json` output, events and progress displays all
carry these values, never free text to be parsed back.
"""

from __future__ import annotations

from enum import StrEnum


class ItemStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    # review-fix
    FIXED = "fixed"
    NEEDS_HUMAN = "needs-human-verification"  # fixed, but only a person can vouch for the logic
    SKIPPED = "skipped"
    # fix-findings' four buckets
    RESOLVED = "resolved"
    ESCALATED = "escalated"
    DROPPED = "dropped"
    DEMOTED = "demoted"
    # execute-wave, fix-engine, fix-issue
    MERGED = "merged"
    PASSED = "passed"
    FAILED = "failed"
    ROLLED_BACK = "rolled-back"
    COMMITTED = "committed"
    DONE = "done"

    @property
    def finished(self) -> bool:
        return self not in (ItemStatus.PENDING, ItemStatus.RUNNING)


__all__ = ["ItemStatus"]
