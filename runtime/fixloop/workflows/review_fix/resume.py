"""Resuming after a review-fix run that was killed part way, on the same REVIEW.md.

Each finding's outcome is saved in the run's state (`runs.state`) as soon as it is known. A
killed run leaves its sentinel; its lock is released by the kernel. The next review-fix run of the
*same* REVIEW.md (same bytes) resumes it: it lists the fix commits on the dead run's temporary
branch, then the git protocol's `cleanup` step, driven by the dead run's sentinel, fast-forwards
the user's branch to them (each is a complete, verified fix, by design) and removes its worktree,
temporary branch and sentinel. The findings it fixed are then carried over instead of being fixed
(and paid for) again. Dead runs of anything else are left to the generic recovery of
`runs.recovery`, which keeps their commits on a branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fixloop import gitrepo
from fixloop.diagnostics import FixloopError
from fixloop.reviews.model import ReviewFinding
from fixloop.runs.run import mark_recovered
from fixloop.runs.state import stopped_runs
from fixloop.workflows.kernel.items import ItemStatus
from fixloop.workflows.kernel.workflow import Workflow
from fixloop.workflows.review_fix.finding import is_logic_finding
from fixloop.workflows.review_fix.outcome import FindingOutcome, ReviewFixState


@dataclass
class Resumed:
    """The fixed findings an interrupted run already committed, by id."""

    carried: dict[str, dict[str, Any]] = field(default_factory=dict)
    from_run: str = ""

    def carried_over(self, finding: ReviewFinding, iteration: int) -> FindingOutcome | None:
        entry = self.carried.get(finding.id) if iteration == 1 else None
        if entry is None:
            return None
        fallback = ItemStatus.NEEDS_HUMAN if is_logic_finding(finding) else ItemStatus.FIXED
        return FindingOutcome(
            finding,
            iteration,
            ItemStatus(entry.get("status") or fallback),
            files=tuple(str(path) for path in entry.get("files", [])),
            commit=str(entry.get("commit", "")),
            summary=str(entry.get("summary", "")),
            detail=f"committed by the interrupted run {self.from_run}",
        )


def resume_interrupted(flow: Workflow, state: ReviewFixState, padded_phase: str) -> Resumed:
    """Fast-forward the fixes of killed runs of this same review; say which findings they fixed."""
    run = flow.active_run
    resumed = Resumed()
    fix_subject = re.compile(rf"^fix\({re.escape(padded_phase)}\): (?P<id>\S+) ")
    for dead, earlier in stopped_runs(run.state_dir, ReviewFixState, state.input_digest):
        sentinel = run.state_dir / "sentinels" / dead
        if dead == run.id or not sentinel.is_file():
            continue
        try:
            base = gitrepo.config_value(sentinel, "fixloop.base")
            temp_branch = gitrepo.config_value(sentinel, "fixloop.tempbranch")
            commits = gitrepo.commits_between(run.repo, base, f"refs/heads/{temp_branch}")
        except FixloopError as exc:
            commits, listing_error = [], str(exc)
        else:
            listing_error = ""
        step = flow.try_protocol_step("cleanup", run.repo, RUN_ID=dead)
        if not step.ok:
            flow.warn(f"could not resume interrupted run {dead}: {step.describe_failure()}")
            continue
        mark_recovered(run.state_dir / "runs" / dead, {"resumed_by": run.id, **step.outputs})
        if step.outputs.get("FAST_FORWARDED") != "yes":
            kept = step.outputs.get("KEPT_BRANCH", "")
            flow.note(f"interrupted run {dead}: its fixes are kept on {kept}")
            continue
        if listing_error:
            flow.warn(
                f"interrupted run {dead}: its fixes are on your branch, but listing them failed "
                f"({listing_error}); its findings are checked again"
            )
            continue
        recorded = {str(entry.get("id")): entry for entry in earlier.outcomes}
        for commit in commits:
            match = fix_subject.match(commit.subject)
            if match is None:
                continue
            entry = recorded.get(match["id"], {})
            resumed.carried[match["id"]] = {
                "status": entry.get("status"),
                "summary": entry.get("summary") or commit.subject,
                "files": list(commit.paths),
                "commit": commit.sha[:7],
            }
        resumed.from_run = dead
        flow.note(
            f"resumed interrupted run {dead}: {len(resumed.carried)} fix(es) it committed "
            "are now on your branch"
        )
    return resumed


__all__ = ["Resumed", "resume_interrupted"]
