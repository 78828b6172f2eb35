"""Recovery: find the leftovers of runs that died, and clean them up through the document.

What counts as a leftover of run R (all named by the git protocol, `workflows/git-protocol.md`):
its sentinel `sentinels/R` (or a half-written `sentinels/R.tmp`), a worktree registered at
`.fixloop/worktrees/R` (or the state folder's `worktrees/R`, where runs kept it before), a branch
`fixloop/run/R`, tags under `fixloop/R/`. Run R is left alone while it is live (its runtime
holds `runs/R/lock`); otherwise the document's `recover-run` step removes what it
can, keeps any temp branch holding commits the user's branch does not have, and removes the
sentinel last. Python only *finds* runs here (read-only git); every change is made by the step.
What a dead run left outside git (a design task's dev servers, a sandbox's containers) is swept
first, by the sweepers the caller hands in: they run in the worktrees about to be removed, and
recovery imports neither the browser nor the sandboxes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fixloop import gitrepo, hostgit
from fixloop.documents.pack import WorkflowDoc
from fixloop.gitrepo import state_dir_of
from fixloop.runs.run import RUN_ID_PATTERN, Run, is_live, list_runs, mark_recovered
from fixloop.steps.caller import Steps

_RUN_ID = re.compile(RUN_ID_PATTERN)
TEMP_BRANCH_PREFIX = "refs/heads/fixloop/run/"
TAG_PREFIX = "refs/tags/fixloop/"

# Cleans up what the dead runs whose folders it is given left outside git; one line for each
# thing it stopped or removed.
Sweeper = Callable[[Sequence[Path]], list[str]]


@dataclass(frozen=True)
class Recovered:
    """What recovery did for one dead run."""

    run_id: str
    had_sentinel: bool
    worktree: str
    worktree_removed: bool
    temp_branch: str
    branch_deleted: bool
    kept_branch: str | None
    unmerged: int
    branch: str | None
    error: str | None = None

    def describe(self) -> str:
        if self.error:
            return f"run {self.run_id}: recovery FAILED: {self.error}"
        done: list[str] = []
        if self.worktree_removed:
            done.append(f"removed worktree {self.worktree}")
        if self.branch_deleted:
            done.append(f"deleted branch {self.temp_branch}")
        if self.had_sentinel:
            done.append("removed sentinel")
        if self.kept_branch and self.unmerged == 0:
            done.append(f"KEPT branch {self.kept_branch}: it could not be deleted (checked out?)")
        elif self.kept_branch:
            where = self.branch or "any other branch"
            done.append(
                f"KEPT branch {self.kept_branch}: {self.unmerged} commit(s) not on {where}; "
                f"merge it (git merge --ff-only {self.kept_branch}) or delete it "
                f"(git branch -D {self.kept_branch})"
            )
        return f"run {self.run_id}: " + ("; ".join(done) or "nothing left to remove")


@dataclass(frozen=True)
class Stopped:
    """A run that stopped part way and continues from its folder (it left nothing in git)."""

    run_id: str
    workflow: str
    resume_with: str

    def describe(self) -> str:
        return (
            f"run {self.run_id} ({self.workflow}) stopped before it finished; nothing to clean "
            f"up; continue it with: {self.resume_with}"
        )


@dataclass
class RecoveryReport:
    recovered: list[Recovered] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    stopped: list[Stopped] = field(default_factory=list)
    swept: list[str] = field(default_factory=list)  # what the sweepers stopped or removed

    @property
    def ok(self) -> bool:
        return all(item.error is None for item in self.recovered)

    def lines(self) -> list[str]:
        lines = list(self.swept) + [item.describe() for item in self.recovered]
        lines += [f"run {run_id}: still running; left alone" for run_id in self.live]
        lines += [item.describe() for item in self.stopped]
        return lines or ["nothing to recover"]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "recovered": [asdict(item) for item in self.recovered],
            "live": self.live,
            "stopped": [asdict(item) for item in self.stopped],
            "swept": self.swept,
        }


def stopped_runs_to_resume(state_dir: Path, skip: set[str]) -> list[Stopped]:
    """Runs that stopped (crashed, or failed on a step) and say how they continue (`resume_with`
    in their record, set when they started), whose saved state is not done."""
    found: list[Stopped] = []
    for info in list_runs(state_dir):
        run_id = str(info.get("id"))
        resume = (info.get("details") or {}).get("resume_with")
        if run_id in skip or info.get("live") or not resume:
            continue
        if info.get("state") not in ("crashed", "failed"):
            continue
        try:
            saved = json.loads((state_dir / "runs" / run_id / "state.json").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(saved, dict) and not saved.get("done"):
            found.append(Stopped(run_id, str(info.get("workflow")), str(resume)))
    return found


def leftover_run_ids(repo: Path, state_dir: Path) -> set[str]:
    """Every run id some leftover names: sentinel, worktree, temp branch or tag."""
    found: set[str] = set()
    sentinels = state_dir / "sentinels"
    if sentinels.is_dir():
        found |= {path.name.removesuffix(".tmp") for path in sentinels.iterdir()}
    folders = {folder.resolve() for folder in hostgit.run_worktree_folders(state_dir.parent)}
    found |= {path.name for path in gitrepo.worktrees(repo) if path.parent in folders}
    for ref in gitrepo.refs(repo, TEMP_BRANCH_PREFIX) + gitrepo.refs(repo, TAG_PREFIX):
        if ref.startswith(TEMP_BRANCH_PREFIX):
            found.add(ref.removeprefix(TEMP_BRANCH_PREFIX))
        elif ref.startswith(TAG_PREFIX):
            found.add(ref.removeprefix(TAG_PREFIX).split("/", 1)[0])
    return {run_id for run_id in found if _RUN_ID.match(run_id)}


def recover(
    repo: Path,
    protocol: WorkflowDoc,
    *,
    run: Run | None = None,
    timeout_s: float = 120.0,
    sweepers: Sequence[Sweeper] = (),
) -> RecoveryReport:
    """Recover every dead run of the repository at `repo` (never `run` itself, never a live one),
    after `sweepers` have cleaned up what the dead runs left outside git."""
    state_dir = run.state_dir if run else state_dir_of(repo)
    # A dead run's agent may have aimed its worktree's `.git` file elsewhere; git's worktree
    # commands would follow it, so each pointer goes back to its registered folder first.
    hostgit.pin_run_worktrees(state_dir)
    dead = dead_run_folders(state_dir, run) if sweepers else []
    report = RecoveryReport(swept=[line for sweep in sweepers for line in sweep(dead)])
    for run_id in sorted(leftover_run_ids(repo, state_dir)):
        if (run is not None and run_id == run.id) or is_live(state_dir / "runs" / run_id):
            report.live.append(run_id)
            continue
        had_sentinel = (state_dir / "sentinels" / run_id).is_file()
        result = Steps(protocol, run, timeout_s).attempt("recover-run", repo, RUN_ID=run_id)
        out = result.outputs
        unmerged = out.get("UNMERGED", "0")
        item = Recovered(
            run_id=run_id,
            had_sentinel=had_sentinel,
            worktree=out.get("WORKTREE", ""),
            worktree_removed=out.get("WORKTREE_REMOVED") == "yes",
            temp_branch=out.get("TEMP_BRANCH", ""),
            branch_deleted=out.get("BRANCH_DELETED") == "yes",
            kept_branch=out.get("KEPT_BRANCH") or None,
            unmerged=int(unmerged) if unmerged.isdigit() else 0,
            branch=out.get("BRANCH") or None,
            error=None if result.ok else result.describe_failure(),
        )
        report.recovered.append(item)
        if result.ok:
            mark_recovered(state_dir / "runs" / run_id, asdict(item))
    handled = {item.run_id for item in report.recovered} | set(report.live)
    report.stopped = stopped_runs_to_resume(state_dir, handled | ({run.id} if run else set()))
    return report


def dead_run_folders(state_dir: Path, run: Run | None = None) -> list[Path]:
    """The folders of the runs no process holds (never `run`'s own): what sweepers clean up."""
    runs = state_dir / "runs"
    folders = sorted(runs.iterdir()) if runs.is_dir() else []
    own = run.id if run is not None else None
    return [f for f in folders if _RUN_ID.match(f.name) and f.name != own and not is_live(f)]
