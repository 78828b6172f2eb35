"""What fix-engine hands its roles, and the message of an item's commit.

The executor gets one checklist item of the section (the mini-PRD is its spec) and, from the
second attempt on, the failure context the seed accumulates: the last verdict (`failures`) and
every earlier attempt (`previous_attempts`: verdict, evidence, executor notes, files). The
verifier gets the item as a finding and answers "is this finding resolved?": `rejected` means the
criterion is met now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.workflows.fix_engine.section import ItemRecord, Section

RESOLVED = "is this finding resolved?"
_SUBJECT_LIMIT = 72


def executor_key(item: ItemRecord, attempt: int) -> str:
    return f"executor/{item.id}/attempt-{attempt}"


def verifier_key(item: ItemRecord, attempt: int) -> str:
    return f"verifier/{item.id}/attempt-{attempt}"


def failures(item: ItemRecord) -> list[dict[str, Any]]:
    """The last failed attempt, as the executor's `failures` input."""
    last = item.last
    if last is None or last.passed:
        return []
    return [
        {
            "check_id": item.id,
            "expected": item.text,
            "actual": last.evidence,
            "verdict": last.verdict or "none (inconclusive)",
            **({"put_back": last.put_back} if last.put_back else {}),
        }
    ]


def executor_brief(
    section: Section, item: ItemRecord, attempt: int, worktree: Path, result_path: Path
) -> tuple[dict[str, Any], str]:
    inputs: dict[str, Any] = {
        "task": {
            "id": item.id,
            "name": item.text,
            "section_id": section.id,
            "section_path": str(Path(section.mini_prd).parent),
        },
        "worktree": str(worktree),
        "result_path": str(result_path),
        "spec_path": str(section.state / "mini-prd.md"),
        "attempt": attempt,
        "failures": failures(item),
        "previous_attempts": [a.model_dump() for a in item.attempts],
    }
    again = (
        f" This is attempt {attempt}: address the failures first and do not repeat an approach "
        "that already failed."
        if attempt > 1
        else ""
    )
    strayed = [
        f"attempt {a.attempt} changed {', '.join(a.put_back)}" for a in item.attempts if a.put_back
    ]
    if strayed:
        again += (
            f" {'; '.join(strayed)}, outside this item (unreported, or CI or git configuration): "
            "put back. Change only what this item needs and report every file in filesModified."
        )
    task = (
        f"Implement checklist item {item.id} of section {section.id} in this worktree: "
        f"{item.text}. The section's mini-PRD is {section.state / 'mini-prd.md'}; implement what "
        f"this item needs and nothing of the other items.{again} Do not stage or commit. "
        f"Answer with one ImplResult JSON object (id {item.id!r})."
    )
    return inputs, task


def verifier_brief(
    section: Section, item: ItemRecord, files: Mapping[str, str], worktree: Path
) -> tuple[dict[str, Any], str]:
    """`files`: each changed path with git's status letters (`M `, `??`, ` D`)."""
    changed = ", ".join(f"{path} ({_status(code)})" for path, code in files.items()) or "none"
    listed = " ".join(files)
    artifact = (
        f"The changes for {item.id} since the last commit, in the worktree {worktree}: {changed}. "
        f"See them with `git diff HEAD -- {listed}`; read new files whole."
        if files
        else f"Nothing changed in the worktree {worktree}: judge the code as it is."
    )
    inputs = {
        "finding": {
            "id": item.id,
            "severity": "P1",
            "title": item.text,
            "body": f"Acceptance criterion {item.id} of section {section.id}: {item.text}",
            "file": next(iter(files), None),
            "line_start": None,
            "line_end": None,
            "confidence": 1.0,
            "criterion": item.text,
            "verdict": None,
            "evidence": None,
        },
        "question": RESOLVED,
        "artifact": artifact,
        "files": list(files),
        "worktree": str(worktree),
        "criteria": item.text,
    }
    task = (
        f"Is checklist item {item.id} met now? {item.text} Judge only this criterion, in this "
        "worktree; change nothing. Answer with one ReviewOutput JSON object whose one finding "
        f"has id {item.id!r}: verdict rejected when the criterion is met, confirmed when not."
    )
    return inputs, task


def commit_message(section: Section, item: ItemRecord, paths: Sequence[str]) -> str:
    """The seed's completion message: `section: summary`, the changes, the signature."""
    text = " ".join(item.text.split())
    subject = f"{section.id}: {item.id} {text}"
    if len(subject) > _SUBJECT_LIMIT:
        subject = subject[: _SUBJECT_LIMIT - 1].rstrip() + "…"
    changes = "\n".join(f"- {path}" for path in paths)
    return f"{subject}\n\n{changes}\n\n🤖 Generated with fixloop\n"


def undo_message(section: Section, item: ItemRecord) -> str:
    return f"{section.id}: undo the commit the executor made for {item.id}"


def _status(code: str) -> str:
    if code == "??" or "A" in code:
        return "new"
    if "D" in code:
        return "deleted"
    return "modified"


__all__ = [
    "RESOLVED",
    "commit_message",
    "executor_brief",
    "executor_key",
    "failures",
    "undo_message",
    "verifier_brief",
    "verifier_key",
]
