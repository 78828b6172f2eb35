"""Review-fix: a REVIEW.md's findings → verified, atomic commits, as `workflows/review-fix.md` says.

    result = run_review_fix(ReviewFixOptions(review=Path("02-REVIEW.md"), repo=repo), context)

`ReviewFix.run` is the document's "Order of work", top to bottom; each part is a method named
after the document section it carries out. Bad input (a REVIEW.md that does not parse, a path
outside the repository) is a FixloopError before anything changes; the git protocol's cleanup
runs on every way out once the worktree exists.
"""

from __future__ import annotations

from pathlib import Path

from fixloop.diagnostics import FixloopError
from fixloop.documents.source import parse_document
from fixloop.gitrepo import state_dir_of
from fixloop.reviews.fix_report import fix_report_path
from fixloop.reviews.model import Review, ReviewFinding
from fixloop.reviews.parser import load_review
from fixloop.runs.state import digest
from fixloop.steps.result import required_output
from fixloop.steps.runner import step_inputs
from fixloop.workflows.kernel.workflow import Context, Workflow, implements
from fixloop.workflows.review_fix.dry_run import plan_only
from fixloop.workflows.review_fix.finding import FindingFixer, fixer_key
from fixloop.workflows.review_fix.outcome import (
    FindingOutcome,
    FindingStatus,
    ReviewFixResult,
    ReviewFixState,
)
from fixloop.workflows.review_fix.plan import (
    ReviewFixOptions,
    ReviewFixPlan,
    check_finding_paths,
    plan_review_fix,
)
from fixloop.workflows.review_fix.report import (
    REPORT_MESSAGE,
    fix_report,
    keep_copies,
    write_fix_report,
)
from fixloop.workflows.review_fix.resume import (
    Resumed,
    finished_earlier,
    fixed_by_stopped_runs,
    resume_interrupted,
)
from fixloop.workflows.review_fix.worktree import GitChangeFailed, Worktree


class ReviewFix(Workflow[ReviewFixOptions, ReviewFixPlan, ReviewFixResult]):
    name = "review-fix"
    state: ReviewFixState

    def __init__(self, context: Context, options: ReviewFixOptions) -> None:
        super().__init__(context, options)
        self.backups: list[str] = []

    # -- the parts of the kernel's run -----------------------------------------------------

    def claimed_input(self) -> Path:
        return self.options.review  # the review: its findings are fixed and reported once

    def plan(self) -> ReviewFixPlan:
        return self.parse_findings()

    def new_result(self, plan: ReviewFixPlan) -> ReviewFixResult:
        return ReviewFixResult(plan.review_rel, self.check_review_status(plan))

    def nothing_to_do(self, plan: ReviewFixPlan) -> str | None:
        status = self.result.review_status
        if status in ("clean", "skipped"):
            return f"review is {status}: no issues to fix"
        done = finished_earlier(state_dir_of(plan.repo), digest(plan.review_text), plan.repo)
        if done is not None:
            run_id, commit = done
            return (
                f"{plan.review_rel} was fixed by run {run_id} (report {commit[:7]} is on your "
                "branch): nothing to do; edit the review or write a new one to fix again"
            )
        if status == "unknown":
            self.warn("REVIEW.md has no recognised status; trying to fix its findings anyway")
        return None

    def first_calls(self, plan: ReviewFixPlan) -> list[str]:
        """The fixer calls this run starts with: one per finding in scope that no stopped run of
        the same review has already committed."""
        done = fixed_by_stopped_runs(
            state_dir_of(plan.repo), digest(plan.review_text), plan.padded_phase
        )
        findings = plan.review.in_scope(self.options.scope)
        return [fixer_key(f.id, 1) for f in findings if f.id not in done]

    def dry_run(self, plan: ReviewFixPlan) -> None:
        plan_only(plan, self.result)

    def new_state(self, plan: ReviewFixPlan) -> ReviewFixState:
        return ReviewFixState(
            workflow="review-fix",
            input_path=plan.review_rel,
            input_digest=digest(plan.review_text),
        )

    def work(self, plan: ReviewFixPlan) -> None:
        resumed = self.resume_interrupted(self.state, plan)
        if resumed.report_commit:  # the interrupted run had done everything but clean up
            self.take_over_finished(plan, resumed)
            return
        with self.git_session() as git:
            self.state.base = git.base
            self.save_state()
            worktree = Worktree(git, artifacts={plan.review_rel, self.report_rel(plan)})
            self.fix_in_worktree(plan, worktree, resumed, self.state)

    def on_failure(self, exc: BaseException) -> None:
        committed = [o.finding.id for o in self.result.outcomes if o.commit]
        if committed:  # the findings committed before the failure are complete, verified fixes
            fixes = ", ".join(committed)
            self.warn(f"review-fix stopped: {exc}; the fixes of {fixes} were committed")

    def fix_in_worktree(
        self,
        plan: ReviewFixPlan,
        worktree: Worktree,
        resumed: Resumed,
        state: ReviewFixState,
    ) -> None:
        """Fix, report and (with --auto) re-review, at most `max_iterations` passes."""
        result = self.result
        fixer = FindingFixer(
            self, worktree, plan.padded_phase, plan.inputs, self.options.on_scope_expansion
        )
        review, iteration = plan.review, 1
        while True:
            result.iterations = iteration
            result.outcomes = []  # filled as findings finish: a failure keeps what was done
            findings = review.in_scope(self.options.scope)
            for index, finding in enumerate(findings, start=1):
                where = {"index": index, "total": len(findings)}
                outcome = resumed.carried_over(finding, iteration) or self.fix_one_finding(
                    fixer, finding, iteration, where
                )
                result.outcomes.append(outcome)
                state.outcomes.append(outcome.to_json())
                self.save_state()
                self.item(
                    finding.id,
                    outcome.status,
                    outcome.label,
                    title=finding.title,
                    data={**where, "commit": outcome.commit, "diff": outcome.diff},
                )
            self.write_fix_report(plan, worktree, iteration, result.outcomes)
            if not self.options.auto or iteration >= self.options.max_iterations:
                break
            next_review = self.auto_re_review(plan, worktree, review, iteration)
            if next_review is None or next_review.status == "clean":
                break
            review, iteration = next_review, iteration + 1
        self.check_fix_report(plan, worktree)

    # -- the document's sections, in its order of work ------------------------------------

    @implements("parse-findings")
    def parse_findings(self) -> ReviewFixPlan:
        plan = plan_review_fix(self.options)
        counts = plan.review.counts()
        in_scope = len(plan.review.in_scope(self.options.scope))
        self.note(
            f"{plan.review_rel}: {counts['total']} finding(s) read (critical {counts['critical']}, "
            f"warning {counts['warning']}, info {counts['info']}); {in_scope} in scope"
        )
        return plan

    @implements("check-review-status")
    def check_review_status(self, plan: ReviewFixPlan) -> str:
        shared = step_inputs(self.doc, "check-review-status", plan.inputs)
        checked = self.step("check-review-status", plan.repo, **shared)
        return required_output(checked, "STATUS")

    @implements("resume-interrupted")
    def resume_interrupted(self, state: ReviewFixState, plan: ReviewFixPlan) -> Resumed:
        return resume_interrupted(self, state, plan.padded_phase)

    @implements("fix-one-finding")
    def fix_one_finding(
        self, fixer: FindingFixer, finding: ReviewFinding, iteration: int, where: dict[str, int]
    ) -> FindingOutcome:
        self.item(finding.id, FindingStatus.RUNNING, title=finding.title, data=where)
        return fixer.fix(finding, iteration)

    @implements("write-fix-report")
    def write_fix_report(
        self,
        plan: ReviewFixPlan,
        worktree: Worktree,
        iteration: int,
        outcomes: list[FindingOutcome],
    ) -> None:
        report = fix_report(
            outcomes,
            phase=plan.review.phase or plan.padded_phase,
            number=plan.padded_phase,
            review_rel=plan.review_rel,
            iteration=iteration,
        )
        write_fix_report(worktree.path / self.report_rel(plan), report)

    @implements("auto-re-review")
    def auto_re_review(
        self, plan: ReviewFixPlan, worktree: Worktree, review: Review, iteration: int
    ) -> Review | None:
        """Keep this pass as `.iterN.md`, let the reviewer rewrite REVIEW.md, and read it."""
        self.backup_iteration(plan, worktree, iteration)
        files = list(review.files_reviewed_list) or list(
            dict.fromkeys(path for finding in review.findings for path in finding.files)
        )
        self.note(f"re-review before iteration {iteration + 1}")
        inputs = {
            "mode": "review-md",
            "files": files,
            "worktree": str(worktree.path),
            "depth": review.depth,
            "phase": plan.padded_phase,
            "output_path": plan.review_rel,
        }
        outcome = self.call(
            "reviewer",
            inputs,
            f"Re-review the files after the fixes; rewrite {plan.review_rel} (review-md mode).",
            worktree.path,
            writable=[plan.review_rel],
            key=f"reviewer/review/iteration-{iteration + 1}",
        )
        if not self.reviewer_left_code_alone(plan, worktree):
            return None
        if not outcome.ok:
            self.warn(f"re-review inconclusive ({outcome.reason}: {outcome.detail}); stopping")
            return None
        try:
            new_review = load_review(worktree.path / plan.review_rel)
            check_finding_paths(new_review, worktree.path, plan.review_rel)
        except FixloopError as exc:
            self.warn(f"re-review wrote an unusable REVIEW.md ({exc}); stopping")
            return None
        if new_review.status == "clean":
            self.note("re-review is clean")
        return new_review

    @implements("backup-iteration")
    def backup_iteration(self, plan: ReviewFixPlan, worktree: Worktree, iteration: int) -> None:
        review_copy = worktree.path / plan.review_rel
        if iteration == 1 and (
            not review_copy.is_file() or review_copy.read_bytes() != plan.review_text
        ):
            # The user's REVIEW.md may be uncommitted; the backup must be the review we fixed.
            review_copy.parent.mkdir(parents=True, exist_ok=True)
            review_copy.write_bytes(plan.review_text)
        backup = self.step(
            "backup-iteration",
            worktree.path,
            **step_inputs(self.doc, "backup-iteration", plan.inputs),
            FIX_REPORT_PATH=self.report_rel(plan),
            ITERATION=str(iteration),
        )
        made = [line for line in required_output(backup, "BACKUPS").splitlines() if line]
        self.backups += made
        worktree.artifacts.update(made)

    def reviewer_left_code_alone(self, plan: ReviewFixPlan, worktree: Worktree) -> bool:
        """The reviewer writes only REVIEW.md: undo anything else it did, and say so."""
        stray = worktree.changed_paths()
        if worktree.head_moved:
            message = f"revert({plan.padded_phase}): undo the commit the reviewer made"
            try:
                worktree.undo_foreign_commit(stray, message)
                self.warn("the reviewer committed on its own; its commit was undone; stopping")
            except GitChangeFailed as exc:
                self.warn(f"the reviewer committed on its own; undoing it failed: {exc}; stopping")
            return False
        if stray:
            try:
                worktree.rollback(stray)
                self.warn(f"the reviewer changed {', '.join(stray)}; rolled back")
            except GitChangeFailed as exc:
                self.warn(f"the reviewer changed {', '.join(stray)}; rolling back failed: {exc}")
        return True

    @implements("check-fix-report")
    def check_fix_report(self, plan: ReviewFixPlan, worktree: Worktree) -> None:
        """Commit the report (and with --auto the backups) once, if its status is valid."""
        result = self.result
        report_rel = self.report_rel(plan)
        shared = step_inputs(self.doc, "check-fix-report", plan.inputs)
        checked = self.try_step(
            "check-fix-report", worktree.path, **shared, FIX_REPORT_PATH=report_rel
        )
        if not checked.ok:
            self.keep_uncommitted(plan, worktree, checked.describe_failure())
            return
        result.report_status = required_output(checked, "REPORT_STATUS")
        paths = [report_rel]
        if self.options.auto:
            # An untracked REVIEW.md stays out: committing it would collide with the user's
            # untracked copy when their branch fast-forwards.
            if worktree.is_tracked(plan.review_rel):
                paths.append(plan.review_rel)
            paths += self.backups
        try:
            commit = worktree.commit(paths, REPORT_MESSAGE.format(phase=plan.padded_phase))
        except GitChangeFailed as exc:
            self.keep_uncommitted(plan, worktree, str(exc))
            return
        result.report_path = report_rel
        result.report_commit = commit[:7]
        self.note(f"{report_rel} committed ({result.report_commit})")

    # -- helpers ----------------------------------------------------------------------------

    def take_over_finished(self, plan: ReviewFixPlan, resumed: Resumed) -> None:
        """An interrupted run had fixed, reported and committed everything; its cleanup (done
        now) was all that was left. Its outcomes and report are this run's: nothing is fixed
        or committed twice."""
        result = self.result
        for finding in plan.review.in_scope(self.options.scope):
            outcome = resumed.recorded(finding)
            if outcome is not None:
                result.outcomes.append(outcome)
        result.iterations = max((o.iteration for o in result.outcomes), default=1)
        report_rel = self.report_rel(plan)
        result.report_path, result.report_commit = report_rel, resumed.report_commit
        try:
            target = plan.repo / report_rel
            report = parse_document(target.read_text("utf-8"), target)
            result.report_status = str(report.metadata.get("status", ""))
        except (OSError, FixloopError):
            result.report_status = ""
        result.fast_forwarded = True
        self.note(f"{report_rel} was committed by run {resumed.from_run} ({resumed.report_commit})")

    @staticmethod
    def report_rel(plan: ReviewFixPlan) -> str:
        return fix_report_path(plan.review_rel)

    def keep_uncommitted(self, plan: ReviewFixPlan, worktree: Worktree, why: str) -> None:
        """The worktree is about to go: keep the report where the run's records are."""
        relatives = [self.report_rel(plan), *self.backups]
        kept = keep_copies(worktree.path, relatives, self.active_run.dir / "uncommitted")
        self.warn(f"REVIEW-FIX.md not committed ({why}); a copy is in {kept}")


def run_review_fix(options: ReviewFixOptions, context: Context) -> ReviewFixResult:
    return ReviewFix(context, options).run()


__all__ = ["ReviewFix", "run_review_fix"]
