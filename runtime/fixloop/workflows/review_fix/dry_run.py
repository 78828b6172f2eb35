"""Review-fix's dry run: what a run would do, said after every check a run makes before it starts.

The review is parsed, its status read, the repository checked (`preflight` of the git protocol)
and the backend checked, exactly as a run does; then, instead of starting, this says per finding
what would happen to it, which dead runs would be resumed or recovered first, which branch would
be fast-forwarded and where the report would go. It only reads: no run folder, no lock, no
worktree, nothing in `.git` (git is asked with `GIT_OPTIONAL_LOCKS=0`, so not even the index's
stat cache is refreshed).
"""

from __future__ import annotations

from fixloop import gitrepo
from fixloop.reviews.fix_report import fix_report_path
from fixloop.runs.recovery import leftover_run_ids
from fixloop.runs.run import is_live
from fixloop.runs.state import digest
from fixloop.workflows.review_fix.outcome import FindingOutcome, FindingStatus, ReviewFixResult
from fixloop.workflows.review_fix.plan import ReviewFixPlan
from fixloop.workflows.review_fix.resume import fixed_by_stopped_runs


def plan_only(plan: ReviewFixPlan, result: ReviewFixResult) -> ReviewFixResult:
    """Fill `result` with what a run would do; nothing is created or changed."""
    options = plan.options
    state_dir = gitrepo.state_dir_of(plan.repo)
    findings = plan.review.in_scope(options.scope)
    done = fixed_by_stopped_runs(state_dir, digest(plan.review_text), plan.padded_phase)
    result.dry_run = True
    lines = result.planned
    out_of_scope = len(plan.review.findings) - len(findings)
    lines.append(
        f"{plan.review_rel}: {len(plan.review.findings)} finding(s); {len(findings)} in scope "
        f"({options.scope}), {out_of_scope} out of scope"
    )
    dead = sorted(
        run_id
        for run_id in leftover_run_ids(plan.repo, state_dir)
        if not is_live(state_dir / "runs" / run_id)
    )
    if dead:
        lines.append(f"would first resume or recover dead run(s): {', '.join(dead)}")
    branch = gitrepo.git_repo(plan.repo).active_branch.name
    lines.append(f"would work in a worktree on a temporary branch from {branch}")
    for index, finding in enumerate(findings, start=1):
        files = ", ".join(finding.files)
        if finding.id in done:
            action = "already fixed by an interrupted run: carried over, not fixed again"
        else:
            action = f"would dispatch the fixer on {files}, verify, then commit or roll back"
        lines.append(f"[{index}/{len(findings)}] {finding.id} ({finding.severity}): {action}")
        result.outcomes.append(
            FindingOutcome(finding, 1, FindingStatus.PENDING, action, files=finding.files)
        )
    if options.auto:
        lines.append(f"then re-review and fix again, at most {options.max_iterations} iterations")
    lines.append(
        f"would commit {fix_report_path(plan.review_rel)} once, then fast-forward {branch}"
    )
    return result


__all__ = ["plan_only"]
