"""Pruning: remove the folders of old runs nobody needs any more, and nothing anyone may need.

Every run leaves `<git-common-dir>/fixloop/runs/<run-id>/` behind (its trace, state, snapshots),
so a repository used in CI collects them forever. `prune_runs` removes the folders of runs that
are over, oldest first, except the newest `keep` of them and (with `older_than_days`) those that
ended more recently than that. A run is over when it finished; when it crashed and `fixloop
recover` has cleaned up after it; when it kept a temp branch that is gone since (merged or
deleted by hand); or when it was a `fixloop step run` that failed. A folder is never removed
when its run:

- is live: some process holds its lock (`steps.run.is_live`, the same test recovery uses);
- crashed and was not recovered (a crashed fix-findings run is resumed from its folder), or
  failed as a workflow run (`--resume` continues it), or is unreadable (a run starting right now
  has no `run.json` yet);
- still has leftovers `fixloop recover` works from: a sentinel, a worktree, a temp branch or tags
  (`runs.recovery.leftover_run_ids`);
- kept a temp branch holding commits the user's branch does not have, and the branch is still
  there: the record says why;
- holds user content the run set aside (see `saved_content`), unless `include_saved` is given:
  those files may be the only copy of the user's work, so deleting them takes an explicit flag.

Removal holds the repository lock (`steps.locking`), the one the steps that create sentinels,
worktrees and branches take, so a prune sees a consistent picture and never races a run's setup.
A dry run takes no lock and changes nothing. Python only removes run folders here: git refs (such
as `refs/fixloop/prestaged/<run-id>/…`) are never touched, and are named so the user can.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fixloop import gitrepo
from fixloop.gitrepo import state_dir_of
from fixloop.runs.recovery import leftover_run_ids
from fixloop.runs.run import RUN_ID_PATTERN, is_live, read_run
from fixloop.steps.locking import repository_lock

DEFAULT_KEEP = 20
PRESTAGED_REFS = "refs/fixloop/prestaged/"
_RUN_ID = re.compile(RUN_ID_PATTERN)
# User content a run may set aside in its folder (see workflows/fix_findings.py, tree_guard.py,
# review_fix_loop.py): the user's staged hunks, the bytes of files put back, an uncommitted report.
_SAVED_DIRS = ("displaced", "uncommitted")
_SAVED_FILES = re.compile(r"^prestaged-\d+\.patch$")


@dataclass(frozen=True)
class Decision:
    """What pruning did, or would do, with one run folder, and why."""

    run_id: str
    workflow: str | None
    state: str
    ended_at: str | None
    removed: bool
    reason: str
    saved: tuple[str, ...] = ()  # user content in the folder, relative to it
    refs: tuple[str, ...] = ()  # git refs holding user content this run set aside

    def describe(self, dry_run: bool) -> str:
        verb = ("would remove" if dry_run else "removed") if self.removed else "kept"
        ended = f", ended {self.ended_at}" if self.ended_at else ""
        line = (
            f"{verb:<12} {self.run_id}  {self.workflow or '?'}  {self.state}{ended}: {self.reason}"
        )
        if self.refs:
            line += f" (refs left in git: {', '.join(self.refs)}; delete with git update-ref -d)"
        return line


@dataclass
class PruneReport:
    dry_run: bool
    keep: int
    older_than_days: float | None
    decisions: list[Decision] = field(default_factory=list)

    @property
    def removed(self) -> list[Decision]:
        return [d for d in self.decisions if d.removed]

    @property
    def kept(self) -> list[Decision]:
        return [d for d in self.decisions if not d.removed]

    def lines(self) -> list[str]:
        lines = [d.describe(self.dry_run) for d in self.removed]
        lines += [d.describe(self.dry_run) for d in self.kept]
        verb = "would remove" if self.dry_run else "removed"
        lines.append(f"{verb} {len(self.removed)} run folder(s), kept {len(self.kept)}")
        return lines

    def to_json(self) -> dict[str, Any]:
        def item(decision: Decision) -> dict[str, Any]:
            data = asdict(decision)
            del data["run_id"], data["removed"]
            return {
                "id": decision.run_id,
                **data,
                "saved": list(decision.saved),
                "refs": list(decision.refs),
            }

        return {
            "dry_run": self.dry_run,
            "keep": self.keep,
            "older_than_days": self.older_than_days,
            "removed": [item(d) for d in self.removed],
            "kept": [item(d) for d in self.kept],
        }


def saved_content(run_dir: Path) -> list[str]:
    """User content a run set aside in its folder: prestaged patches, displaced/, uncommitted/."""
    found: list[str] = []
    for root, dirs, files in os.walk(run_dir):
        here = Path(root)
        for name in sorted(dirs):
            if name in _SAVED_DIRS and any((here / name).iterdir()):
                found.append(str((here / name).relative_to(run_dir)) + "/")
        dirs[:] = sorted(d for d in dirs if d not in _SAVED_DIRS)
        found += [
            str((here / n).relative_to(run_dir)) for n in sorted(files) if _SAVED_FILES.match(n)
        ]
    return sorted(found)


def _prestaged_refs(repo: Path) -> dict[str, list[str]]:
    refs: dict[str, list[str]] = {}
    for ref in gitrepo.refs(repo, PRESTAGED_REFS):
        refs.setdefault(ref.removeprefix(PRESTAGED_REFS).split("/", 1)[0], []).append(ref)
    return refs


def _ended(info: dict[str, Any]) -> datetime | None:
    for key in ("ended_at", "started_at"):
        value = info.get(key)
        if isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value)
            except ValueError:
                continue
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def _kept_branch(info: dict[str, Any]) -> str | None:
    for key in ("details", "recovery"):
        section = info.get(key)
        if isinstance(section, dict) and section.get("kept_branch"):
            return str(section["kept_branch"])
    return None


STEP_RUN = "step_run"  # the `details` key `fixloop step run` records: which step it ran


def _protected(
    info: dict[str, Any], run_id: str, leftovers: set[str], branches: set[str]
) -> str | None:
    """Why this run's folder must stay whatever its age, or None when it may go (subject to
    --keep, --older-than and --include-saved): a finished run, a crashed run that recovery has
    cleaned up after, a kept-branch run whose branch is gone, a failed `step run`."""
    state = str(info.get("state"))
    if info.get("live"):
        return "running: its lock is held"
    kept = _kept_branch(info)
    if kept and kept in branches:
        return f"its temp branch {kept} was kept for commits not on your branch"
    if run_id in leftovers:
        return (
            "not yet recovered: its sentinel, worktree, temp branch or tags remain "
            "(recovery needs them; run `fixloop recover`)"
        )
    if kept:
        return None
    if state == "crashed" and not info.get("recovered_at"):
        return "crashed: kept for `fixloop recover` and `--resume`"
    if state == "failed" and STEP_RUN not in (info.get("details") or {}):
        return "failed: kept for `--resume` (a stopped run continues from its folder)"
    if state not in ("finished", "crashed", "failed"):
        return f"{state}: only finished runs are pruned"
    return None


def _why_it_may_go(info: dict[str, Any]) -> str:
    """What made a run that is not `finished` prunable, for the reason a user reads."""
    kept = _kept_branch(info)
    if kept:
        return f"its kept branch {kept} is gone"
    state = str(info.get("state"))
    if state == "crashed":
        return "crashed and recovered"
    if state == "failed":
        return f"a failed `step run` ({(info.get('details') or {}).get(STEP_RUN, '?')})"
    return ""


def prune_runs(
    repo: Path,
    *,
    keep: int = DEFAULT_KEEP,
    older_than_days: float | None = None,
    include_saved: bool = False,
    dry_run: bool = False,
    now: datetime | None = None,
    lock_timeout_s: float = 60.0,
) -> PruneReport:
    """Remove (or with `dry_run`, list) the folders of old finished runs of the repo at `repo`."""
    state_dir = state_dir_of(repo)
    report = PruneReport(dry_run, keep, older_than_days)
    if not (state_dir / "runs").is_dir():
        return report
    if dry_run:
        _decide(repo, state_dir, report, include_saved, now or datetime.now(UTC))
        return report
    with repository_lock(state_dir, lock_timeout_s):
        _decide(repo, state_dir, report, include_saved, now or datetime.now(UTC))
        for decision in report.removed:  # oldest first
            run_dir = state_dir / "runs" / decision.run_id
            if is_live(run_dir):  # started again since we looked: never remove a live run
                index = report.decisions.index(decision)
                report.decisions[index] = _keep(decision, "running: its lock is held")
                continue
            shutil.rmtree(run_dir)
    return report


def _keep(decision: Decision, reason: str) -> Decision:
    return Decision(**{**asdict(decision), "removed": False, "reason": reason})


def _decide(
    repo: Path, state_dir: Path, report: PruneReport, include_saved: bool, now: datetime
) -> None:
    leftovers = leftover_run_ids(repo, state_dir)
    branches = {ref.removeprefix("refs/heads/") for ref in gitrepo.refs(repo, "refs/heads/")}
    refs = _prestaged_refs(repo)
    finished: list[tuple[dict[str, Any], Decision]] = []
    for run_dir in sorted((state_dir / "runs").iterdir()):
        run_id = run_dir.name
        if not _RUN_ID.match(run_id) or not run_dir.is_dir() or run_dir.is_symlink():
            continue  # not a run folder of ours: never touched
        info = read_run(run_dir)
        ended = info.get("ended_at")
        decision = Decision(
            run_id=run_id,
            workflow=info.get("workflow"),
            state=str(info.get("state")),
            ended_at=ended if isinstance(ended, str) else None,
            removed=False,
            reason="",
            saved=tuple(saved_content(run_dir)),
            refs=tuple(refs.get(run_id, ())),
        )
        why = _protected(info, run_id, leftovers, branches)
        if why is not None:
            report.decisions.append(_keep(decision, why))
        else:
            finished.append((info, decision))
    # Newest first: the first `keep` stay, the rest are removed unless too young or saved.
    finished.sort(key=lambda pair: (pair[1].ended_at or "", pair[1].run_id), reverse=True)
    removed: list[Decision] = []
    for position, (info, decision) in enumerate(finished):
        moment = _ended(info)
        age_days = (now - moment).total_seconds() / 86400 if moment else None
        if position < report.keep:
            report.decisions.append(
                _keep(decision, f"one of the newest {report.keep} finished runs")
            )
        elif report.older_than_days is not None and (
            age_days is None or age_days < report.older_than_days
        ):
            younger = f"finished less than {report.older_than_days:g} day(s) ago"
            report.decisions.append(_keep(decision, younger if moment else "no end time recorded"))
        elif decision.saved and not include_saved:
            held = ", ".join(decision.saved)
            why = f"holds user content the run set aside ({held}); --include-saved removes it"
            report.decisions.append(_keep(decision, why))
        else:
            note = f"; with the user content it set aside ({', '.join(decision.saved)})"
            reasons = [f"beyond the newest {report.keep} finished runs"] if report.keep else []
            if report.older_than_days is not None:
                reasons.append(f"older than {report.older_than_days:g} day(s)")
            reason = " and ".join(reasons) or "finished (--keep 0)"
            reason += note if decision.saved else ""
            gone = _why_it_may_go(info)
            reason = f"{gone}; {reason}" if gone else reason
            removed.append(Decision(**{**asdict(decision), "removed": True, "reason": reason}))
    report.decisions[:0] = reversed(removed)  # oldest first
