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
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.reviews.model import ReviewFinding
from fixloop.runs.run import list_runs, mark_recovered, read_run
from fixloop.runs.state import load_state, stopped_runs
from fixloop.workflows.kernel.workflow import AnyWorkflow
from fixloop.workflows.review_fix.finding import is_logic_finding
from fixloop.workflows.review_fix.outcome import FindingOutcome, FindingStatus, ReviewFixState
from fixloop.workflows.review_fix.report import REPORT_MESSAGE


@dataclass
class Resumed:
    """What interrupted runs of this review already did: fixes now on the user's branch
    (`carried`), and their committed report."""

    carried: dict[str, dict[str, Any]] = field(default_factory=dict)
    from_run: str = ""
    report_commit: str = ""  # the interrupted run committed its report: all its work is done
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # that run's recorded outcomes

    def carried_over(self, finding: ReviewFinding, iteration: int) -> FindingOutcome | None:
        if iteration != 1:
            return None
        entry = self.carried.get(finding.id)
        if entry is None:
            return None
        fallback = FindingStatus.NEEDS_HUMAN if is_logic_finding(finding) else FindingStatus.FIXED
        return FindingOutcome(
            finding,
            iteration,
            FindingStatus(entry.get("status") or fallback),
            files=tuple(str(path) for path in entry.get("files", [])),
            commit=str(entry.get("commit", "")),
            summary=str(entry.get("summary", "")),
            detail=f"committed by the interrupted run {self.from_run}",
        )

    def recorded(self, finding: ReviewFinding) -> FindingOutcome | None:
        """The interrupted run's own record of `finding` (for a run that finished its report)."""
        entry = next((e for e in self.outcomes if str(e.get("id")) == finding.id), None)
        if entry is None:
            return self.carried_over(finding, 1)
        return FindingOutcome(
            finding,
            int(entry.get("iteration") or 1),
            FindingStatus(str(entry.get("status") or "skipped")),
            str(entry.get("reason") or ""),
            files=tuple(str(path) for path in entry.get("files") or []),
            commit=str(entry.get("commit") or ""),
            summary=str(entry.get("summary") or ""),
            detail=f"by the interrupted run {self.from_run}",
        )


def fixed_by_stopped_runs(state_dir: Path, input_digest: str, padded_phase: str) -> set[str]:
    """Findings that stopped runs of this very review fixed: recorded in their state, or
    committed on their temporary branch (a run killed right after a commit never recorded it).
    The next run need not call the fixer for them: they are resumed, or offered from a branch."""
    done: set[str] = set()
    subject = _fix_subject(padded_phase)
    for dead, earlier in stopped_runs(state_dir, ReviewFixState, input_digest):
        done |= {str(entry.get("id")) for entry in earlier.outcomes if entry.get("commit")}
        sentinel = state_dir / "sentinels" / dead
        kept = (read_run(state_dir / "runs" / dead).get("recovery") or {}).get("kept_branch")
        if not sentinel.is_file() and kept:
            try:  # from its base: merged already or not, they are fixed (or refused, below)
                repo = gitrepo.toplevel(state_dir.parent)
                since = earlier.base or "HEAD"
                commits = gitrepo.commits_between(repo, since, f"refs/heads/{kept}")
            except FixloopError:
                continue
            done |= {match["id"] for c in commits if (match := subject.match(c.subject))}
            continue
        if not sentinel.is_file():
            continue
        try:
            base = gitrepo.config_value(sentinel, "fixloop.base")
            branch = gitrepo.config_value(sentinel, "fixloop.tempbranch")
            repo = Path(gitrepo.config_value(sentinel, "fixloop.repo"))
            commits = gitrepo.commits_between(repo, base, f"refs/heads/{branch}")
        except FixloopError:
            continue
        done |= {match["id"] for c in commits if (match := subject.match(c.subject))}
    return done


def finished_earlier(state_dir: Path, input_digest: str, repo: Path) -> tuple[str, str] | None:
    """(run id, report commit) of the latest finished run of this very review whose report
    commit the user's branch holds: everything it asked for is done, and running again would
    only fix the same findings twice. None when there is no such run."""
    for info in reversed(list_runs(state_dir)):
        run_id = str(info.get("id", ""))
        if info.get("workflow") != "review-fix" or info.get("state") != "finished":
            continue
        commit = str((info.get("details") or {}).get("report_commit") or "")
        try:
            state = load_state(state_dir / "runs" / run_id, ReviewFixState)
            if state.input_digest == input_digest and commit and gitrepo.is_ancestor(repo, commit):
                return run_id, commit
        except FixloopError:
            continue
    return None


def _fix_subject(padded_phase: str) -> re.Pattern[str]:
    return re.compile(rf"^fix\({re.escape(padded_phase)}\): (?P<id>\S+) ")


def resume_interrupted(flow: AnyWorkflow, state: ReviewFixState, padded_phase: str) -> Resumed:
    """Take over what killed runs of this same review did; say which findings they fixed."""
    run = flow.active_run
    resumed = Resumed()
    for dead, earlier in stopped_runs(run.state_dir, ReviewFixState, state.input_digest):
        info = read_run(run.state_dir / "runs" / dead)
        if dead == run.id or (info.get("recovery") or {}).get("resumed_by"):
            continue
        if (run.state_dir / "sentinels" / dead).is_file():
            _finish_its_cleanup(flow, resumed, dead, earlier, padded_phase)
            continue
        kept = str((info.get("recovery") or {}).get("kept_branch") or "")
        if kept and gitrepo.branch_exists(run.repo, kept):
            _adopt_kept_branch(flow, resumed, dead, earlier, branch=kept, padded_phase=padded_phase)
        elif earlier.base:
            # Killed inside its cleanup, after the fast-forward: its fixes are on the branch.
            try:
                commits = gitrepo.commits_between(run.repo, earlier.base, "HEAD")
            except FixloopError as exc:
                flow.warn(f"interrupted run {dead}: listing its commits failed ({exc})")
                continue
            _adopt(flow, resumed, dead, earlier, padded_phase, commits=commits)
            mark_recovered(run.state_dir / "runs" / dead, {"resumed_by": run.id})
    return resumed


def _finish_its_cleanup(
    flow: AnyWorkflow, resumed: Resumed, dead: str, earlier: ReviewFixState, padded_phase: str
) -> None:
    """The dead run's sentinel is there: its cleanup fast-forwards the user's branch."""
    run = flow.active_run
    sentinel = run.state_dir / "sentinels" / dead
    base = earlier.base
    try:  # listed before the cleanup deletes its temporary branch
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
        return
    mark_recovered(run.state_dir / "runs" / dead, {"resumed_by": run.id, **step.outputs})
    kept = step.outputs.get("KEPT_BRANCH", "")
    if (
        step.outputs.get("FAST_FORWARDED") != "yes"
        and kept
        and gitrepo.branch_exists(run.repo, kept)
    ):
        _adopt_kept_branch(flow, resumed, dead, earlier, branch=kept, padded_phase=padded_phase)
        return
    if listing_error or step.outputs.get("FAST_FORWARDED") != "yes":
        # Its branch is gone: killed in its own cleanup after the fast-forward, its commits
        # are on the user's branch already (or nowhere, when someone deleted the branch).
        try:
            if not base:
                raise FixloopError([])
            commits = gitrepo.commits_between(run.repo, base, "HEAD")
        except FixloopError:
            flow.warn(
                f"interrupted run {dead}: listing its fixes failed ({listing_error}); its "
                "findings are checked again"
            )
            return
    _adopt(flow, resumed, dead, earlier, padded_phase, commits=commits)


def _adopt(
    flow: AnyWorkflow,
    resumed: Resumed,
    dead: str,
    earlier: ReviewFixState,
    padded_phase: str,
    *,
    commits: list[gitrepo.CommitInfo],
) -> None:
    """The dead run's `commits` are on the user's branch: carry its fixes (and its report, when
    it got that far) over instead of making them again."""
    recorded = {str(entry.get("id")): entry for entry in earlier.outcomes}
    subject, report = _fix_subject(padded_phase), REPORT_MESSAGE.format(phase=padded_phase)
    for commit in commits:
        if commit.subject == report:
            resumed.report_commit, resumed.outcomes = commit.sha[:7], list(earlier.outcomes)
        match = subject.match(commit.subject)
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
        f"resumed interrupted run {dead}: {len(resumed.carried)} fix(es) it committed are now "
        "on your branch" + ("; so is its report" if resumed.report_commit else "")
    )


def _adopt_kept_branch(
    flow: AnyWorkflow,
    resumed: Resumed,
    dead: str,
    earlier: ReviewFixState,
    *,
    branch: str,
    padded_phase: str,
) -> None:
    """The dead run's fixes are on a branch recovery kept. Once the user has merged it, they
    are carried over like any fix on their branch. Before that, the run refuses: fixing the
    other findings would move the user's branch, and the kept branch could no longer be
    fast-forwarded as its advice says."""
    repo = flow.active_run.repo
    try:
        ahead = gitrepo.commits_between(repo, "HEAD", f"refs/heads/{branch}")
        base = earlier.base
        merged = gitrepo.commits_between(repo, base, f"refs/heads/{branch}") if base else []
    except FixloopError:
        return
    subject = _fix_subject(padded_phase)
    pending = [m["id"] for c in ahead if (m := subject.match(c.subject))]
    if pending:
        how = (
            f"git merge --ff-only {branch}"
            if gitrepo.is_ancestor(repo, "HEAD", f"refs/heads/{branch}")
            else f"git merge {branch}"
        )
        problem = (
            f"the interrupted run {dead} fixed {', '.join(pending)} on the kept branch "
            f"{branch}: merge it first ({how}), or delete it (git branch -D {branch}) to have "
            "them fixed again; nothing was changed"
        )
        raise FixloopError(Diagnostic(earlier.input_path, 1, 1, "kept-branch", problem), 1)
    if merged:
        _adopt(flow, resumed, dead, earlier, padded_phase, commits=merged)
        run = flow.active_run
        mark_recovered(run.state_dir / "runs" / dead, {"resumed_by": run.id})


__all__ = ["Resumed", "fixed_by_stopped_runs", "resume_interrupted"]
