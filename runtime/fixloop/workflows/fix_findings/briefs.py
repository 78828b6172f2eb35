"""What fix-findings tells each role: the inputs their documents declare, and the task message.

The fixer's task always ends with the rules from the document's `fix-brief` step (never stash,
reset or check out the tree; scoped git reads; `git show HEAD:<path>` for the baseline). Finding
text reaches the roles only as data in these inputs; it is never put in a command.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.pack import WorkflowDoc
from fixloop.schemas.findings import Finding
from fixloop.workflows.fix_findings.state import FindingRecord

REAL = "is this finding real?"
RESOLVED = "is this finding resolved?"


def fix_brief(workflow: WorkflowDoc) -> str:
    """The rules every fixer brief carries, read from the document's `fix-brief` step."""
    step = workflow.markdown().step("fix-brief")
    blocks = [b for b in step.blocks if b.lang == "text"] if step else []
    if not blocks:
        problem = Diagnostic(
            workflow.source.display,
            step.line if step else 1,
            1,
            "fix-brief",
            "the fix-brief step needs a ```text block holding the rules for every fixer brief",
        )
        raise FixloopError(problem)
    return blocks[0].content.strip()


def fixer_brief(
    record: FindingRecord, number: int, *, max_rounds: int, repo: Path, rules: str, note: str
) -> tuple[dict[str, Any], str]:
    """The fixer's inputs and task for round `number` of `record`'s finding."""
    finding = record.finding
    previous = [
        {
            "round": r.number,
            "summary": r.summary,
            "files_changed": r.files_changed,
            "verdict": r.verdict,
            "evidence": r.evidence,
        }
        for r in record.rounds
    ]
    inputs: dict[str, Any] = {
        "finding": finding.model_dump(mode="json"),
        "files": list(record.scope),
        "worktree": str(repo),
        "criteria": finding.criterion or "",
        "failure_context": (record.rounds[-1].evidence or "") if record.rounds else "",
        "previous_attempts": previous,
    }
    scope = ", ".join(record.scope) or "none: ask for a scope expansion naming the files"
    lines = [
        f"Fix finding {finding.id} ({finding.severity}). The finding is in your inputs.",
        f"Round {number} of at most {max_rounds}.",
        f"Files you may edit: {scope}.",
    ]
    if previous:
        lines.append(
            "Earlier attempts did not resolve it; see previous_attempts. Try a different approach."
        )
    if note:
        lines.append(note)
    return inputs, "\n".join([*lines, "", rules])


def verifier_brief(
    finding: Finding, asked: str, artifact: str, files: Sequence[str], repo: Path
) -> tuple[dict[str, Any], str]:
    inputs = {
        "finding": finding.model_dump(mode="json"),
        "question": asked,
        "artifact": artifact,
        "files": list(files),
        "worktree": str(repo),
        "criteria": finding.criterion or "",
    }
    if asked == REAL:
        task = f"Pre-gate: is finding {finding.id} real? Return a ReviewOutput with its verdict."
    else:
        task = (
            f"Is finding {finding.id} resolved by the staged diff in `artifact`? Return a "
            "ReviewOutput envelope with a verdict on the single finding."
        )
    return inputs, task


def pre_gate_artifact(repo: Path, finding: Finding, margin: int = 20) -> str:
    """The finding's location and the code around it, as data."""
    if finding.file is None:
        return "(a global finding: no file named)"
    target = repo / finding.file
    if not target.is_file():
        return f"{finding.file}: the file does not exist in the working tree"
    lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    start = max((finding.line_start or 1) - margin, 1)
    end = min((finding.line_end or finding.line_start or len(lines)) + margin, len(lines))
    excerpt = "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(start, end + 1))
    return f"{finding.file}:{start}-{end}\n{excerpt}"
