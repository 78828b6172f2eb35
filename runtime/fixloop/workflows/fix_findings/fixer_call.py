"""One fixer call in the user's own tree, and putting things back when it or the run goes wrong.

fix-findings works in the user's working tree, so everything a fixer call may leave behind is
put back here, per file:

- before the call: the snapshot of the round's files (bytes, index entries) and a fingerprint of
  the whole tree (`tree_guard`);
- after it: the fixer's own git is undone first (`fixer_git`, step `undo-fixer-commit`: HEAD
  back on the user's branch, the branch back at its commit with a compare-and-swap, a stash the
  fixer made put back; the index and the files stay; what it did is named), then every path
  outside the call's files that changed is put back (`tree_guard`); any of it makes the attempt
  fail, whatever the fixer reported;
- a failed attempt: the round's files get back their bytes and their index entries;
- a run that stops on a failed step before a fix was verified: the fix is taken back out of the
  user's files and kept in the run folder (`unverified/`), and `--resume` makes the round again;
- a backend that fails during the call (`BackendFailed`: an outage, a rejected key): what the
  call did before it failed is undone as for a failed attempt, then the run stops.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from fixloop.agents.backend import AgentOutcome, BackendFailed
from fixloop.workflows.fix_findings import snapshots
from fixloop.workflows.fix_findings.briefs import fixer_brief
from fixloop.workflows.fix_findings.fixer_git import GitState
from fixloop.workflows.fix_findings.state import FindingRecord, RoundRecord
from fixloop.workflows.kernel.denied_writes import Denials, sort_denials

if TYPE_CHECKING:
    from fixloop.workflows.fix_findings.findings_run import FindingsRun

UNVERIFIED = "unverified"


def before_round(flow: FindingsRun, index: int, number: int, files: Sequence[str]) -> RoundRecord:
    """What the round's files were before the fixer ran: bytes on disk, index entries."""
    folder = flow.active_run.dir / "snapshots" / f"finding-{index}" / f"round-{number}"
    return RoundRecord(
        number=number,
        phase="fixed",
        summary="",
        verdict="inconclusive",
        snapshot_dir=str(folder),
        snapshot=snapshots.take(flow.repo, files, folder),
        index_before=flow.steps.index_entries(files) if files else {},
    )


def undo_interrupted_call(flow: FindingsRun, index: int, record: FindingRecord) -> None:
    """Killed during a fixer call: put its files back before the call is made again."""
    interrupted = record.in_flight
    assert interrupted is not None
    snapshots.restore(flow.repo, Path(interrupted.snapshot_dir), interrupted.snapshot)
    if interrupted.tree_before:
        here = flow.active_run.dir / "resumed" / f"finding-{index}"  # the old run stays as it was
        stray = flow.guard.after(Path(interrupted.tree_before), record.scope, into=here)
        record.notes += stray.notes("an interrupted fixer call")
    record.in_flight = None
    flow.save()


def call_fixer(
    flow: FindingsRun, record: FindingRecord, number: int, key: str, note: str
) -> tuple[AgentOutcome, Denials]:
    """One fixer call between two tree fingerprints: its denials, plus what it changed."""
    inputs, task = fixer_brief(
        record,
        number,
        max_rounds=flow.max_rounds(record),
        repo=flow.repo,
        rules=flow.brief,
        note=note,
    )
    assert record.in_flight is not None
    tree = flow.guard.before(Path(record.in_flight.snapshot_dir))
    record.in_flight.tree_before = str(tree)
    flow.save()
    git_before = GitState.capture(flow.repo)
    try:
        outcome = flow.call("fixer", inputs, task, flow.repo, writable=record.scope, key=key)
    except BackendFailed:
        # The turns before the failure may have edited: put everything back, then stop.
        _undo_commit(flow, record, number, git_before)
        record.notes += flow.guard.after(tree, record.scope).notes(f"R{number}")
        restore_round_files(flow, record.in_flight)
        record.in_flight = None
        flow.save()
        raise
    undone = _undo_commit(flow, record, number, git_before)
    stray = flow.guard.after(tree, record.scope)
    record.notes += stray.notes(f"R{number}")
    if outcome.denied:
        refused = ", ".join(f"{d.path} ({d.reason})" for d in outcome.denied)
        record.notes.append(f"R{number}: the fixer's writes were refused: {refused}")
    denials = sort_denials(flow.repo, outcome.denied, record.scope)
    denials = denials.with_stray(stray.changed, stray.unrestorable)
    if undone:
        denials = replace(denials, forbidden=(*denials.forbidden, undone))
    return outcome, denials


def _undo_commit(flow: FindingsRun, record: FindingRecord, number: int, before: GitState) -> str:
    """Undo the fixer's branch switch, commit, reset or stash; what it did, in words ("" for
    none)."""
    after = GitState.capture(flow.repo)
    did = before.changes(flow.repo, after)
    if not did:
        return ""
    flow.steps.undo_fixer_git(before.commit, before.ref, before.stash)
    branch = before.ref.removeprefix("refs/heads/") or "the detached HEAD"
    said = (
        f"the fixer {'; '.join(did)}; undone ({branch} is back at {before.commit[:12]}; your "
        f"index and files are as they were), so the attempt failed"
    )
    record.notes.append(f"R{number}: {said}")
    flow.warn(f"finding {record.finding.id}: {said}", item=str(record.finding.id))
    return said


def restore_round_files(flow: FindingsRun, before: RoundRecord) -> None:
    """A failed attempt: its files get back their bytes and index entries, one by one."""
    snapshots.restore(flow.repo, Path(before.snapshot_dir), before.snapshot)
    files = list(before.snapshot)
    if not files:
        return
    now = flow.steps.index_entries(files)
    changed = [name for name in files if now.get(name) != before.index_before.get(name)]
    if changed:
        flow.steps.restore_index(changed, before.index_before)


def take_back_unverified(flow: FindingsRun, record: FindingRecord, *, staged: bool = False) -> None:
    """The run stops before this round's fix was verified: take it back out of the user's files
    (and, with `staged`, out of the index too: a fix staged but never verified).

    The fixer's version is kept in the run folder; the round is dropped, so `--resume` makes it
    again from the files as they were."""
    last = record.rounds[-1] if record.rounds else None
    phases = ("fixed", "staging", "staged") if staged else ("fixed",)
    if last is None or last.phase not in phases:
        return
    kept = flow.active_run.dir / UNVERIFIED
    for name in last.files_changed:
        source = flow.repo / name
        if source.is_file() and not source.is_symlink():
            (kept / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, kept / name)
    if staged:
        restore_round_files(flow, last)
    else:
        snapshots.restore(flow.repo, Path(last.snapshot_dir), last.snapshot)
    record.rounds.pop()
    record.notes.append(
        f"R{last.number}'s fix of {', '.join(last.files_changed)} was not verified when the run "
        f"stopped: it was taken back out of your files (kept in {kept})"
    )
    flow.save()


__all__ = [
    "UNVERIFIED",
    "before_round",
    "call_fixer",
    "restore_round_files",
    "take_back_unverified",
    "undo_interrupted_call",
]
