"""What the reviewer found, written the way each fixer takes it as it is.

- `as_review_md`: a GSD-format REVIEW.md for review-fix. Severities map P0 → `CR-`, P1 and P2 →
  `WR-`, P3 → `IN-`, numbered from 01 per prefix (the reviewer role's own review-md rule). A
  finding that names no file cannot be a review-fix finding (it has no File line): it is kept as
  a note in the body, never as a `###` heading, and counted.
- `as_findings_json`: the ReviewOutput envelope for fix-findings, each finding `confirmed` with
  evidence starting `Orchestrator-confirmed`: fix-findings processes it (its intake takes only
  confirmed findings) and, because nobody has verified it yet, its verifier pre-gate asks "is this
  finding real?" before any fix.

Both are read back with the reader their fixer uses before they are written (`check_written`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from fixloop.masking import mask_text
from fixloop.reviews.model import Review, ReviewFinding, ReviewSeverity
from fixloop.reviews.parser import parse_review
from fixloop.reviews.writer import render_review
from fixloop.reviews.yamltext import one_line
from fixloop.schemas.findings import Finding, ReviewOutput

UNVERIFIED = (
    "Orchestrator-confirmed: found by `fixloop review`; no verifier has checked it yet "
    "(fix-findings runs its pre-gate first)"
)
_PREFIX = {
    "P0": ("CR", ReviewSeverity.CRITICAL),
    "P1": ("WR", ReviewSeverity.WARNING),
    "P2": ("WR", ReviewSeverity.WARNING),
    "P3": ("IN", ReviewSeverity.INFO),
}


def as_review_md(
    output: ReviewOutput, *, phase: str, files: list[str], depth: str
) -> tuple[str, list[Finding]]:
    """REVIEW.md's text, and the findings kept only as notes (they name no file)."""
    numbers: dict[str, int] = {}
    findings: list[ReviewFinding] = []
    notes: list[Finding] = []
    for finding in sorted(output.findings, key=lambda f: f.severity):
        if not finding.file:
            notes.append(finding)
            continue
        prefix, severity = _PREFIX[finding.severity]
        numbers[prefix] = numbers.get(prefix, 0) + 1
        criterion = (finding.criterion or "").strip()
        fix = f"Satisfy: {criterion}" if criterion else "Address the issue above."
        findings.append(
            ReviewFinding(
                id=f"{prefix}-{numbers[prefix]:02d}",
                severity=severity,
                title=one_line(finding.title),
                file=finding.file,
                line=finding.line_start,
                files=(finding.file,),
                issue=finding.body.strip() or finding.title,
                fix=fix,
                heading_line=0,
            )
        )
    review = Review(
        phase=phase,
        status="issues_found" if findings else "clean",
        reviewed=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        depth=depth,
        files_reviewed_list=tuple(files),
        findings=tuple(findings),
    )
    text = render_review(review)
    if notes:
        lines = ["", "## Notes", "", "Findings that name no file (review-fix fixes files):", ""]
        lines += [f"- {n.severity}: {one_line(n.title)}: {one_line(n.body)}" for n in notes]
        text = text.rstrip("\n") + "\n" + mask_text("\n".join(lines)) + "\n"
    return text, notes


def as_findings_json(output: ReviewOutput) -> str:
    """The envelope fix-findings takes as it is (every finding to be pre-gated)."""
    marked = [
        finding.model_copy(update={"verdict": "confirmed", "evidence": UNVERIFIED})
        for finding in output.findings
    ]
    envelope = ReviewOutput(schema_version="v1", findings=marked, checks_run=output.checks_run)
    return mask_text(json.dumps(envelope.model_dump(mode="json"), indent=2) + "\n")


def check_written(text: str, target: Path, form: str) -> None:
    """Read the text back as its fixer will (a FixloopError naming the file if it would not)."""
    if form == "review-md":
        parse_review(text, target)
    else:
        ReviewOutput.model_validate_json(text)


__all__ = ["UNVERIFIED", "as_findings_json", "as_review_md", "check_written"]
