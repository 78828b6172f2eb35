"""Escalation: the summary of an unresolved finding, the question that follows it, and its answers.

What each answer does (the loop never runs a Round 3):
- "Defer this finding" (recommended; also the answer when nobody can be asked): nothing changes;
  the finding is reported in the escalated bucket with what is staged for it.
- "Manual fix" / "Try a different approach": nothing changes either; the note says what the user
  chose, so whoever reads the report knows the next step is theirs.
- "Discard R2 changes and revert": the last round's files get back the index entries and the
  working-tree bytes they had before that round, per file (`discard_last_round`).
"""

from __future__ import annotations

from pathlib import Path

from fixloop.workflows.fix_findings import snapshots
from fixloop.workflows.fix_findings.staging import StagingSteps
from fixloop.workflows.fix_findings.state import FindingRecord, FixFindingsState
from fixloop.workflows.kernel.choices import Prompter, question

DEFER = "Defer this finding"
MANUAL = "Manual fix"
DIFFERENT = "Try a different approach"
DISCARD = "Discard R2 changes and revert"
OPTIONS = (MANUAL, DIFFERENT, DEFER, DISCARD)

NOTES = {
    DEFER: "deferred: left as it is",
    MANUAL: "the user will fix it by hand; the staged changes are left as they are",
    DIFFERENT: "the user wants a different approach: run the loop again on this finding with new "
    "context (there is no Round 3 inside a run); the staged changes are left as they are",
}


def escalation_text(record: FindingRecord) -> str:
    finding = record.finding
    attempts = " → ".join(record.attempts()) or "no attempt"
    last = record.rounds[-1] if record.rounds else None
    if record.evidence:
        unresolved = record.evidence
    elif last is not None and not last.verifier_ran:
        unresolved = "no fix reached the verifier (see the attempts)"
    else:
        unresolved = "verifier inconclusive"
    return (
        "**Escalated — finding not resolved after 2 attempts:**\n"
        f"- Finding: {finding.id} — {finding.title}\n"
        f"- Attempted: {attempts}\n"
        f"- Still unresolved: {unresolved}\n"
        f"- Currently staged: {record.staged_summary}"
    )


def ask(prompter: Prompter, record: FindingRecord) -> str:
    """The user's answer, or DEFER when nobody can be asked or the last round changed nothing."""
    last = record.rounds[-1] if record.rounds else None
    discardable = last is not None and bool(last.files_changed) and last.phase != "fixed"
    options = OPTIONS if discardable else (MANUAL, DIFFERENT, DEFER)
    text = f"Finding {record.finding.id} is escalated. What next?"
    return prompter.ask(question(text, options, DEFER)) or DEFER


def staged_summary(steps: StagingSteps, record: FindingRecord, discarded: int = 0) -> str:
    """What is staged for the finding now, e.g. "R2's changes to a.py, +12/-4 lines"."""
    files = record.files
    summary = steps.staged_summary(files) if files else None
    if summary is None or not (summary.added or summary.removed):
        return "nothing staged"
    number = (discarded or record.rounds[-1].number + 1) - 1
    changes = f"R{number}'s changes" if number > 0 else "changes"
    return f"{changes} to {', '.join(files)}, +{summary.added}/-{summary.removed} lines"


def discard_last_round(
    steps: StagingSteps, repo: Path, state: FixFindingsState, record: FindingRecord
) -> None:
    """Per file: the last round's files get back their pre-round index entry and bytes."""
    last = record.rounds[-1]
    files = [f for f in last.files_changed if f in last.snapshot]
    steps.restore_index(files, last.index_before)
    kept = {f: last.snapshot[f] for f in files}
    snapshots.restore(repo, Path(last.snapshot_dir), kept)
    for name in files:
        if last.number > 1 and name in last.index_before:
            state.staged_by_run[name] = last.index_before[name]
        else:
            state.staged_by_run.pop(name, None)
    record.notes.append(
        f"R{last.number}'s changes to {', '.join(files)} discarded: index entries and files "
        f"restored to their state before R{last.number}"
    )
    record.staged_summary = staged_summary(steps, record, discarded=last.number)
