"""Review-fix (seed 004, the GSD code fixer): REVIEW.md findings → verified, atomic commits.

    result = run_review_fix(ReviewFixOptions(review=Path("02-REVIEW.md"), repo=repo), pack, backend)

Order (the prose of `workflows/review-fix.md`): read and check REVIEW.md completely before anything
changes (bad input is a FixloopError naming file, line and finding); `clean`/`skipped` → done, no
report; heal a killed earlier run; worktree + sentinel; fix the findings in scope, most severe
first; write REVIEW-FIX.md; with `--auto` re-review and fix again (≤ 3 iterations, `.iterN.md`
backups, stop early when clean); commit the report once; and always, in `finally`, the git
protocol's cleanup, which fast-forwards the user's branch or keeps the temp branch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixloop.agents.backend import Backend
from fixloop.agents.budget import RunBudget
from fixloop.agents.dispatch import Dispatcher
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.pack import Pack
from fixloop.reviews.fix_report import (
    FixedEntry,
    FixReport,
    SkippedEntry,
    fix_report_path,
    render_fix_report,
)
from fixloop.reviews.model import FixScope, Review, ReviewFinding
from fixloop.reviews.parser import load_review
from fixloop.runs.recovery import RecoveryReport
from fixloop.runs.session import GitSession, StepFailed, git_session
from fixloop.steps.paths import check_path
from fixloop.steps.run import Run
from fixloop.steps.runner import run_step
from fixloop.workflows.review_fix_finding import FindingFixer, FindingOutcome
from fixloop.workflows.review_fix_recovery import STATE_FILE, ResumeState, resume_interrupted
from fixloop.workflows.review_fix_session import Session

MAX_ITERATIONS = 3
REPORT_MESSAGE = "docs({phase}): add code review fix report"
_PADDED_PHASE = re.compile(r"^[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True)
class ReviewFixOptions:
    review: Path  # REVIEW.md; relative paths are taken from the current directory
    repo: Path
    scope: FixScope = FixScope.CRITICAL_WARNING
    auto: bool = False
    max_iterations: int = MAX_ITERATIONS
    budget: RunBudget | None = None  # once spent, no new agent call starts


@dataclass(frozen=True)
class ReviewFixEvent:
    """Something a progress display can show; `kind` says which fields are set."""

    # status, recovered, worktree, finding, outcome, iteration, report, cleanup or warning
    kind: str
    message: str
    finding: ReviewFinding | None = None
    outcome: FindingOutcome | None = None


Progress = Callable[[ReviewFixEvent], None]


@dataclass
class ReviewFixResult:
    review_path: str
    review_status: str
    run_id: str = ""
    iterations: int = 0
    outcomes: list[FindingOutcome] = field(default_factory=list)
    report_path: str = ""  # repository-relative, once committed
    report_status: str = ""
    report_commit: str = ""
    fast_forwarded: bool = False
    kept_branch: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def fixed(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if o.fixed]

    @property
    def skipped(self) -> list[FindingOutcome]:
        return [o for o in self.outcomes if not o.fixed]

    @property
    def exit_code(self) -> int:
        """0 when nothing is left to do, 1 when a finding was skipped or the branch was kept."""
        if self.review_status in ("clean", "skipped"):
            return 0
        return 1 if self.skipped or self.kept_branch or not self.report_commit else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "review_path": self.review_path,
            "review_status": self.review_status,
            "run_id": self.run_id,
            "iterations": self.iterations,
            "fixed": len(self.fixed),
            "skipped": len(self.skipped),
            "findings": [outcome.to_json() for outcome in self.outcomes],
            "report_path": self.report_path,
            "report_status": self.report_status,
            "report_commit": self.report_commit,
            "fast_forwarded": self.fast_forwarded,
            "kept_branch": self.kept_branch,
            "warnings": self.warnings,
        }


def _quiet(event: ReviewFixEvent) -> None:
    del event


def _review_location(options: ReviewFixOptions, repo: Path) -> tuple[Path, str]:
    """REVIEW.md's absolute path and its path inside the repository (refused when outside)."""
    given = options.review if options.review.is_absolute() else Path.cwd() / options.review
    shown = display_path(given)
    try:
        relative = given.resolve().relative_to(repo).as_posix()
    except ValueError:
        raise FixloopError(
            Diagnostic(
                shown, 1, 1, "review-path", f"REVIEW.md must be inside the repository {repo}"
            )
        ) from None
    try:
        check_path(repo, relative)
    except FixloopError as exc:
        message = exc.diagnostics[0].message
        raise FixloopError(Diagnostic(shown, 1, 1, "review-path", message)) from None
    return given, relative


def padded_phase_of(review: Review, shown: str, line: int) -> str:
    match = _PADDED_PHASE.match(review.phase)
    if match is None:
        raise FixloopError(
            Diagnostic(
                shown, line, 1, "review-phase",
                f"phase {review.phase!r} does not start with a phase number like 02 or 3.1",
            )
        )  # fmt: skip
    return match.group(0)


def check_finding_paths(review: Review, repo: Path, shown: str) -> None:
    """Every path a finding names stays inside the repository (symlinks included)."""
    for finding in review.findings:
        for path in finding.files:
            try:
                check_path(repo, path)
            except FixloopError as exc:
                reason = exc.diagnostics[0].message
                raise FixloopError(
                    Diagnostic(
                        shown, finding.heading_line, 1, "review-path",
                        f"finding {finding.id}: {reason}",
                    )
                ) from None  # fmt: skip
            if (repo / path).is_symlink() and not (repo / path).resolve().is_relative_to(repo):
                raise FixloopError(
                    Diagnostic(
                        shown, finding.heading_line, 1, "review-path",
                        f"finding {finding.id}: {path!r} is a symbolic link out of the repository",
                    )
                )  # fmt: skip


def _phase_line(path: Path) -> int:
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.startswith("phase:"):
            return number
    return 1


@dataclass(frozen=True)
class ReviewFixPlan:
    """Everything checked before a run may change anything."""

    options: ReviewFixOptions
    repo: Path
    review: Review
    review_rel: str  # REVIEW.md inside the repository
    review_text: bytes  # REVIEW.md as read and parsed
    padded_phase: str

    @property
    def inputs(self) -> dict[str, str]:
        """The review-fix document's inputs, as its steps receive them."""
        return {
            "REVIEW_PATH": self.review_rel,
            "PADDED_PHASE": self.padded_phase,
            "FIX_SCOPE": str(self.options.scope),
            "AUTO": "true" if self.options.auto else "false",
        }


def plan_review_fix(options: ReviewFixOptions) -> ReviewFixPlan:
    """Read and check REVIEW.md completely; raise FixloopError (file:line, finding) on bad input."""
    repo = options.repo.resolve()
    if not repo.is_dir():
        raise FixloopError(Diagnostic(str(options.repo), 1, 1, "repository", "not a directory"))
    review_file, review_rel = _review_location(options, repo)
    shown = display_path(review_file)
    review_text = review_file.read_bytes()
    review = load_review(review_file)
    padded_phase = padded_phase_of(review, shown, _phase_line(review_file))
    check_finding_paths(review, repo, shown)
    return ReviewFixPlan(options, repo, review, review_rel, review_text, padded_phase)


def run_review_fix(
    options: ReviewFixOptions, pack: Pack, backend: Backend, progress: Progress = _quiet
) -> ReviewFixResult:
    plan = plan_review_fix(options)
    flow = pack.workflow("review-fix")
    status = run_step(flow, "check-review-status", cwd=plan.repo, inputs=plan.inputs)
    if not status.ok:
        raise StepFailed(status)
    result = ReviewFixResult(plan.review_rel, status.outputs.get("STATUS", "unknown"))
    if result.review_status in ("clean", "skipped"):
        progress(ReviewFixEvent("status", f"review is {result.review_status}: no issues to fix"))
        return result
    if result.review_status == "unknown":
        warning = "REVIEW.md has no recognised status; trying to fix its findings anyway"
        result.warnings.append(warning)
        progress(ReviewFixEvent("warning", warning))
    with Run.start(plan.repo, "review-fix") as run:
        result.run_id = run.id
        try:
            _run_in_worktree(run, plan, result, pack=pack, backend=backend, progress=progress)
        except BaseException as exc:
            run.finish("failed", error=str(exc), **result.to_json())
            raise
        run.finish("kept-branch" if result.kept_branch else "finished", **result.to_json())
    return result


def _run_in_worktree(
    run: Run,
    plan: ReviewFixPlan,
    result: ReviewFixResult,
    *,
    pack: Pack,
    backend: Backend,
    progress: Progress,
) -> None:
    git_protocol = pack.workflow("git-protocol")
    flow = pack.workflow("review-fix")
    resumed = resume_interrupted(run, flow, git_protocol, plan.inputs, plan.review_text)
    for note in resumed.notes:
        progress(ReviewFixEvent("recovered", note))
    recovered: list[RecoveryReport] = []
    session: GitSession | None = None
    try:
        with git_session(run, protocol=git_protocol, recovered=recovered) as session:
            for line in (line for report in recovered for line in report.lines()):
                if line != "nothing to recover":
                    progress(ReviewFixEvent("recovered", line))
            progress(ReviewFixEvent("worktree", f"worktree on {session.temp_branch}"))
            dispatcher = Dispatcher(
                pack, backend, trace_path=run.dir / "agents.jsonl", budget=plan.options.budget
            )
            state = ResumeState(run.dir / STATE_FILE, plan.review_rel, plan.review_text, resumed)
            work = Session(flow, session, dispatcher, plan.inputs, plan.padded_phase)
            _Loop(work, plan, result, state, progress).run()
    finally:
        outcome = session.outcome if session is not None else None
        if outcome is not None:
            result.fast_forwarded = outcome.fast_forwarded
            result.kept_branch = outcome.kept_branch or ""
            if result.kept_branch:
                result.warnings.append(outcome.describe())
            progress(ReviewFixEvent("cleanup", outcome.describe()))


@dataclass
class _Loop:
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
            self.result.outcomes = outcomes
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
        made = [line for line in backup.outputs.get("BACKUPS", "").splitlines() if line]
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

    def commit_report(self) -> None:
        session = self.session
        checked = session.step("check-fix-report", FIX_REPORT_PATH=self.report_rel)
        if not checked.ok:
            self.warn(f"REVIEW-FIX.md not committed: {checked.describe_failure()}")
            return
        self.result.report_status = checked.outputs.get("REPORT_STATUS", "")
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
            self.warn(f"REVIEW-FIX.md not committed: {commit.error}")
            return
        self.result.report_path = self.report_rel
        self.result.report_commit = commit.short
        self.progress(ReviewFixEvent("report", f"{self.report_rel} committed ({commit.short})"))
