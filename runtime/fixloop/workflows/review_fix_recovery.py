"""Surviving a kill: review-fix's progress on disk, and resuming after a run that died mid-way.

Each finding's outcome is written to `<run dir>/review-fix.json` as soon as it is known. A killed
run leaves its sentinel; its lock is released by the kernel. The next review-fix run of the *same*
REVIEW.md (same bytes) resumes it: the git protocol's `cleanup` step, driven by the dead run's
sentinel, fast-forwards the user's branch to the dead run's commits — each a complete, verified
fix, by design — and removes its worktree, temp branch and sentinel. The findings it fixed are then
carried over instead of being fixed (and paid for) again. Dead runs of anything else are left to
the generic recovery of `runs.recovery`, which keeps their commits on a branch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.documents.pack import WorkflowDoc
from fixloop.reviews.fix_report import HUMAN_VERIFICATION
from fixloop.reviews.model import ReviewFinding
from fixloop.steps.run import Run, is_live, list_runs, mark_recovered
from fixloop.steps.runner import run_step
from fixloop.workflows.review_fix_finding import FindingOutcome, is_logic_finding

STATE_FILE = "review-fix.json"


def _digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


@dataclass
class Resumed:
    """What resuming found: notes for the user, and the dead run's fixed findings by id."""

    notes: list[str] = field(default_factory=list)
    carried: dict[str, dict[str, Any]] = field(default_factory=dict)
    from_run: str = ""


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _fix_commits(listing: bytes) -> list[tuple[str, str, tuple[str, ...]]]:
    """(commit, subject, files) entries of an `interrupted-fixes` list file."""
    entries: list[tuple[str, str, tuple[str, ...]]] = []
    fields = [os.fsdecode(part) for part in listing.split(b"\0")]
    index = 0
    while index + 1 < len(fields) and fields[index]:
        commit, subject = fields[index], fields[index + 1]
        index += 2
        files: list[str] = []
        while index < len(fields) and fields[index]:
            files.append(fields[index])
            index += 1
        index += 1  # the empty field that ends the entry
        entries.append((commit, subject, tuple(files)))
    return entries


def resume_interrupted(
    run: Run, flow: WorkflowDoc, git_protocol: WorkflowDoc, inputs: dict[str, str], text: bytes
) -> Resumed:
    """Fast-forward the fixes of killed runs of this same review; say which findings they fixed."""
    resumed = Resumed()
    header = {"review_path": inputs["REVIEW_PATH"], "review_sha256": _digest(text)}
    fix_subject = re.compile(rf"^fix\({re.escape(inputs['PADDED_PHASE'])}\): (?P<id>\S+) ")
    for info in list_runs(run.state_dir):
        dead = str(info.get("id", ""))
        run_dir = run.state_dir / "runs" / dead
        if (
            info.get("workflow") != "review-fix"
            or dead == run.id
            or is_live(run_dir)
            or not (run.state_dir / "sentinels" / dead).is_file()
        ):
            continue
        state = _read_state(run_dir / STATE_FILE)
        if {key: state.get(key) for key in header} != header:
            continue  # another review: the generic recovery keeps its commits on a branch
        listing = run.dir / f"interrupted-{dead}"
        values = {"DEAD_RUN": dead, "LIST_FILE": str(listing)}
        listed = run_step(flow, "interrupted-fixes", cwd=run.repo, inputs=values, run=run)
        step = run_step(git_protocol, "cleanup", cwd=run.repo, inputs={"RUN_ID": dead}, run=run)
        if not step.ok:
            resumed.notes.append(f"could not resume interrupted run {dead}: "
                                 f"{step.describe_failure()}")  # fmt: skip
            continue
        mark_recovered(run_dir, {"resumed_by": run.id, **step.outputs})
        if step.outputs.get("FAST_FORWARDED") != "yes":
            kept = step.outputs.get("KEPT_BRANCH", "")
            resumed.notes.append(f"interrupted run {dead}: its fixes are kept on {kept}")
            continue
        if not listed.ok:
            resumed.notes.append(
                f"interrupted run {dead}: its fixes are on your branch, but listing them failed "
                f"({listed.describe_failure()}); its findings are checked again"
            )
            continue
        recorded = {str(entry.get("id")): entry for entry in state.get("outcomes", [])}
        for commit, subject, files in _fix_commits(listing.read_bytes()):
            match = fix_subject.match(subject)
            if match is None:
                continue
            entry = recorded.get(match["id"], {})
            resumed.carried[match["id"]] = {
                "status": entry.get("status"),
                "summary": entry.get("summary") or subject,
                "files": list(files),
                "commit": commit[:7],
            }
        resumed.from_run = dead
        resumed.notes.append(
            f"resumed interrupted run {dead}: {len(resumed.carried)} fix(es) it committed "
            "are now on your branch"
        )
    return resumed


class ResumeState:
    """This run's progress file, and the fixed findings an interrupted run already committed."""

    def __init__(self, path: Path, review_rel: str, review_text: bytes, resumed: Resumed) -> None:
        self.path = path
        self.header = {"review_path": review_rel, "review_sha256": _digest(review_text)}
        self.resumed = resumed
        self.outcomes: list[dict[str, Any]] = []
        self._write()

    def carried_over(self, finding: ReviewFinding, iteration: int) -> FindingOutcome | None:
        entry = self.resumed.carried.get(finding.id) if iteration == 1 else None
        if entry is None:
            return None
        status = entry.get("status") or (
            HUMAN_VERIFICATION if is_logic_finding(finding) else "fixed"
        )
        return FindingOutcome(
            finding,
            iteration,
            str(status),
            tuple(str(path) for path in entry.get("files", [])),
            str(entry.get("commit", "")),
            str(entry.get("summary", "")),
            f"committed by the interrupted run {self.resumed.from_run}",
        )

    def record(self, outcome: FindingOutcome) -> None:
        self.outcomes.append(outcome.to_json())
        self._write()

    def _write(self) -> None:
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        data = {**self.header, "outcomes": self.outcomes}
        temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        temporary.replace(self.path)


__all__ = ["STATE_FILE", "ResumeState", "Resumed", "resume_interrupted"]
