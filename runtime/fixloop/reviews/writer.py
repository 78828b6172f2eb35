"""Writing a `Review` as a GSD-format REVIEW.md (the reviewer's format; `parse_review` reads it)."""

from __future__ import annotations

from fixloop.masking import mask_text
from fixloop.reviews.model import Review, ReviewFinding, ReviewSeverity
from fixloop.reviews.yamltext import one_line, scalar

_GROUPS = (
    (ReviewSeverity.CRITICAL, "Critical Issues"),
    (ReviewSeverity.WARNING, "Warnings"),
    (ReviewSeverity.INFO, "Info"),
)


def _field(label: str, text: str) -> list[str]:
    if "\n" in text.strip():
        return [f"**{label}:**", text.strip()]
    return [f"**{label}:** {text.strip()}".rstrip()]


def _finding(finding: ReviewFinding) -> list[str]:
    lines = [f"### {finding.id}: {one_line(finding.title)}", f"**File:** {finding.location}"]
    others = [path for path in finding.files if path != finding.file]
    if others:
        lines.append(f"**Files:** {', '.join(others)}")
    lines += _field("Issue", finding.issue)
    lines += _field("Fix", finding.fix)
    return [*lines, ""]


def render_review(review: Review) -> str:
    counts = review.counts()
    front = [
        "---",
        f"phase: {scalar(review.phase)}",
        f"reviewed: {scalar(review.reviewed)}",
        f"depth: {scalar(review.depth)}",
        f"files_reviewed: {len(review.files_reviewed_list)}",
        "files_reviewed_list:",
        *(f"  - {scalar(path)}" for path in review.files_reviewed_list),
        "findings:",
        *(f"  {key}: {counts[key]}" for key in ("critical", "warning", "info", "total")),
        f"status: {review.status}",
        "---",
        "",
        f"# Phase {one_line(review.phase)}: Code Review",
        "",
        f"**Reviewed:** {review.reviewed}",
        f"**Depth:** {review.depth}",
        f"**Files Reviewed:** {len(review.files_reviewed_list)}",
        f"**Status:** {review.status}",
        "",
    ]
    if not review.findings:
        front += ["No issues found.", ""]
    body: list[str] = []
    for severity, heading in _GROUPS:
        group = [f for f in review.findings if f.severity is severity]
        if group:
            body += [f"## {heading}", ""]
            for finding in group:
                body += _finding(finding)
    return mask_text("\n".join(front + body).rstrip("\n") + "\n")
