"""Review-fix's loop inside its worktree: fix every finding in scope, report, re-review, commit.

One pass fixes the findings in scope, most severe first, and writes REVIEW-FIX.md. With `--auto`
the current REVIEW.md and REVIEW-FIX.md are kept as `.iterN.md`, the reviewer rewrites REVIEW.md,
and a clean review ends the loop early; at most three passes. The report is committed once, after
the last pass, and only when `check-fix-report` finds a valid status in it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fixloop.diagnostics import FixloopError
from fixloop.reviews.fix_report import (
    FixedEntry,
    FixReport,
    SkippedEntry,
    fix_report_path,
    render_fix_report,
)
from fixloop.reviews.model import Review
from fixloop.reviews.parser import load_review
from fixloop.runs.session import StepFailed, required_output
from fixloop.workflows.review_fix_finding import FindingFixer, FindingOutcome
from fixloop.workflows.review_fix_plan import (
    Progress,
    ReviewFixEvent,
    ReviewFixPlan,
    ReviewFixResult,
    check_finding_paths,
)
from fixloop.workflows.review_fix_recovery import ResumeState
from fixloop.workflows.review_fix_session import Session

REPORT_MESSAGE = "docs({phase}): add code review fix report"


@dataclass
class FixLoop:
    """The fix → report → re-review loop of one run, inside its worktree."""

    session: Session
    plan: ReviewFixPlan
    result: ReviewFixResult
    state: ResumeState
    progress: Progress
    backups: list[str] = field(default_factory=list)

    @property
    def review_rel(self) -> str:
        return self.plan.review_rel

    @property
    def report_rel(self) -> str:
        return fix_report_path(self.plan.review_rel)

    def warn(self, warning: str) -> None:
        self.result.warnings.append(warning)
        self.progress(ReviewFixEvent("warning", warning))

    def run(self) -> None:
        fixer = FindingFixer(self.session)
        self.session.artifacts.update({self.review_rel, self.report_rel})
        options = self.plan.options
        iteration = 1
        current = self.plan.review
        while True:
            self.result.iterations = iteration
            self.progress(ReviewFixEvent("iteration", f"iteration {iteration}"))
            outcomes: list[FindingOutcome] = []
            self.result.outcomes = outcomes  # the same list: a failure mid-pass keeps what was done
            for finding in current.in_scope(options.scope):
                outcome = self.state.carried_over(finding, iteration)
                if outcome is None:
                    self.progress(
                        ReviewFixEvent("finding", f"{finding.id} {finding.title}", finding)
                    )
                    outcome = fixer.fix(finding, iteration)
                outcomes.append(outcome)
                self.state.record(outcome)
                self.progress(ReviewFixEvent("outcome", outcome.status, finding, outcome))
            self.write_report(iteration, outcomes)
            if not options.auto or iteration >= options.max_iterations:
                break
            self.back_up(iteration)
            next_review = self.re_review(current, iteration + 1)
            if next_review is None or next_review.status == "clean":
                break
            current = next_review
            iteration += 1
        self.commit_report()

    def write_report(self, iteration: int, outcomes: list[FindingOutcome]) -> None:
        fixed = tuple(
            FixedEntry(o.finding.id, o.finding.title, o.files, o.commit, o.summary, o.status)
            for o in outcomes
            if o.fixed
        )
        skipped = tuple(
            SkippedEntry(
                o.finding.id,
                o.finding.title,
                o.finding.location,
                f"{o.status} ({o.detail})" if o.detail else o.status,
                o.finding.issue,
            )
            for o in outcomes
            if not o.fixed
        )
        report = FixReport(
            phase=self.session.padded_phase,
            fixed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            review_path=self.review_rel,
            iteration=iteration,
            fixed=fixed,
            skipped=skipped,
        )
        target = self.session.worktree / self.report_rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_fix_report(report), encoding="utf-8")

    def back_up(self, iteration: int) -> None:
        review_copy = self.session.worktree / self.review_rel
        if iteration == 1 and (
            not review_copy.is_file() or review_copy.read_bytes() != self.plan.review_text
        ):
            # The user's REVIEW.md may be uncommitted; the backup must be the review we fixed.
            review_copy.parent.mkdir(parents=True, exist_ok=True)
            review_copy.write_bytes(self.plan.review_text)
        backup = self.session.step(
            "backup-iteration", FIX_REPORT_PATH=self.report_rel, ITERATION=str(iteration)
        )
        if not backup.ok:
            raise StepFailed(backup)
        made = [line for line in required_output(backup, "BACKUPS").splitlines() if line]
        self.backups += made
        self.session.artifacts.update(made)

    def re_review(self, review: Review, iteration: int) -> Review | None:
        session = self.session
        files = list(review.files_reviewed_list) or list(
            dict.fromkeys(path for finding in review.findings for path in finding.files)
        )
        self.progress(ReviewFixEvent("iteration", f"re-review before iteration {iteration}"))
        outcome = session.dispatcher.call(
            "reviewer",
            {
                "mode": "review-md",
                "files": files,
                "worktree": str(session.worktree),
                "depth": review.depth,
                "phase": session.padded_phase,
                "output_path": self.review_rel,
            },
            f"Re-review the files after the fixes; rewrite {self.review_rel} (review-md mode).",
            session.worktree,
            writable=[self.review_rel],
            key=f"reviewer/review/iteration-{iteration}",
        )
        if not self.reviewer_left_code_alone():
            return None
        if not outcome.ok:
            self.warn(f"re-review inconclusive ({outcome.reason}: {outcome.detail}); stopping")
            return None
        try:
            new_review = load_review(session.worktree / self.review_rel)
            check_finding_paths(new_review, session.worktree, self.review_rel)
        except FixloopError as exc:
            self.warn(f"re-review wrote an unusable REVIEW.md ({exc}); stopping")
            return None
        if new_review.status == "clean":
            self.progress(ReviewFixEvent("status", "re-review is clean"))
        return new_review

    def reviewer_left_code_alone(self) -> bool:
        """The reviewer writes only REVIEW.md: undo anything else it did, and say so."""
        session = self.session
        stray = session.changed_paths()
        if session.head_moved:
            message = f"revert({session.padded_phase}): undo the commit the reviewer made"
            error = session.undo_foreign_commit(stray, message)
            self.warn(
                "the reviewer committed on its own; "
                + (f"undoing it failed: {error}" if error else "its commit was undone")
                + "; stopping"
            )
            return False
        if stray:
            error = session.rollback(stray)
            self.warn(
                f"the reviewer changed {', '.join(stray)}; "
                + (f"rolling back failed: {error}" if error else "rolled back")
            )
        return True

    def commit_report(self) -> None:
        session = self.session
        checked = session.step("check-fix-report", FIX_REPORT_PATH=self.report_rel)
        if not checked.ok:
            self.keep_uncommitted(checked.describe_failure())
            return
        self.result.report_status = required_output(checked, "REPORT_STATUS")
        paths = [self.report_rel]
        if self.plan.options.auto:
            changes = session.changes()
            # An untracked REVIEW.md stays out: committing it would collide with the user's
            # untracked copy when their branch fast-forwards.
            if changes.get(self.review_rel, "??") != "??":
                paths.append(self.review_rel)
            paths += self.backups
        commit = session.commit(paths, REPORT_MESSAGE.format(phase=session.padded_phase))
        if commit.error:
            self.keep_uncommitted(commit.error)
            return
        self.result.report_path = self.report_rel
        self.result.report_commit = commit.short
        self.progress(ReviewFixEvent("report", f"{self.report_rel} committed ({commit.short})"))

    def keep_uncommitted(self, why: str) -> None:
        """The worktree is about to go: keep the report where the run's records are."""
        kept = self.session.run.dir / "uncommitted"
        kept.mkdir(parents=True, exist_ok=True)
        for relative in [self.report_rel, *self.backups]:
            source = self.session.worktree / relative
            if source.is_file():
                shutil.copyfile(source, kept / source.name)
        self.warn(f"REVIEW-FIX.md not committed ({why}); a copy is in {kept}")
