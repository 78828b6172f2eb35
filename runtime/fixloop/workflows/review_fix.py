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

from fixloop.agents.backend import Backend
from fixloop.agents.dispatch import Dispatcher
from fixloop.documents.pack import Pack
from fixloop.runs.recovery import RecoveryReport
from fixloop.runs.session import GitSession, StepFailed, git_session, required_output
from fixloop.steps.run import Run
from fixloop.steps.runner import run_step, step_inputs
from fixloop.workflows.review_fix_loop import FixLoop
from fixloop.workflows.review_fix_plan import (
    MAX_ITERATIONS,
    Progress,
    ReviewFixEvent,
    ReviewFixOptions,
    ReviewFixPlan,
    ReviewFixResult,
    plan_review_fix,
    quiet,
)
from fixloop.workflows.review_fix_recovery import STATE_FILE, ResumeState, resume_interrupted
from fixloop.workflows.review_fix_session import Session

__all__ = [
    "MAX_ITERATIONS",
    "Progress",
    "ReviewFixEvent",
    "ReviewFixOptions",
    "ReviewFixPlan",
    "ReviewFixResult",
    "plan_review_fix",
    "run_review_fix",
]


def run_review_fix(
    options: ReviewFixOptions, pack: Pack, backend: Backend, progress: Progress = quiet
) -> ReviewFixResult:
    plan = plan_review_fix(options)
    flow = pack.workflow("review-fix")
    values = step_inputs(flow, "check-review-status", plan.inputs)
    status = run_step(flow, "check-review-status", cwd=plan.repo, inputs=values)
    if not status.ok:
        raise StepFailed(status)
    result = ReviewFixResult(plan.review_rel, required_output(status, "STATUS"))
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
            committed = [o.finding.id for o in result.outcomes if o.commit]
            if committed:
                # The findings committed before the failure are complete, verified fixes.
                warning = (
                    f"review-fix stopped: {exc}; the fixes of {', '.join(committed)} "
                    "were committed: check git log"
                )
                progress(ReviewFixEvent("warning", warning))
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
            FixLoop(work, plan, result, state, progress).run()
    finally:
        outcome = session.outcome if session is not None else None
        if outcome is not None:
            result.fast_forwarded = outcome.fast_forwarded
            result.kept_branch = outcome.kept_branch or ""
            if result.kept_branch:
                result.warnings.append(outcome.describe())
            progress(ReviewFixEvent("cleanup", outcome.describe()))
