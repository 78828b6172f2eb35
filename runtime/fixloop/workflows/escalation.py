"""Escalation: seed 002's summary of an unresolved finding, and the question that follows it.

What each answer does (the loop never runs a Round 3):
- "Defer this finding" (recommended; also the answer when nobody can be asked): nothing changes;
  the finding is reported in the escalated bucket with what is staged for it.
- "Manual fix" / "Try a different approach": nothing changes either; the note says what the user
  chose, so whoever reads the report knows the next step is theirs.
- "Discard R2 changes and revert": the last round's files get back the index entries and the
  working-tree bytes they had before that round, per file (the fix-findings loop does this).
"""

from __future__ import annotations

from fixloop.workflows.choices import Prompter, question
from fixloop.workflows.fix_findings_state import FindingRecord

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
    options = OPTIONS if last is not None and last.files_changed and last.phase != "fixed" else (
        MANUAL, DIFFERENT, DEFER,
    )  # fmt: skip
    text = f"Finding {record.finding.id} is escalated. What next?"
    return prompter.ask(question(text, options, DEFER)) or DEFER
