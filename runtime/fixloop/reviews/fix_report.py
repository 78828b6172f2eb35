"""REVIEW-FIX.md: what a review-fix run did with each finding in scope, in GSD's own layout.

Frontmatter `phase, fixed_at, review_path, iteration, findings_in_scope, fixed, skipped, status`;
`phase` is the review's own (`02-cart`, as GSD's tooling reads it); status is `all_fixed` (nothing
skipped), `none_fixed` (nothing fixed though something was in scope) or `partial`. The body:
a title, the summary, a Fixed Issues section (files modified, commit, applied fix; "None — all
findings were skipped." when empty), a Skipped Issues section only when something was skipped
(file, reason, original issue), and the `_Fixed: … _Fixer: … _Iteration: …_` footer. A logic
finding's applied fix starts with "fixed: requires human verification", where GSD's fixer puts
that flag. `tests/reviews/goldens/review-fix-gsd.md` is GSD's template filled in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from fixloop.masking import mask_text
from fixloop.reviews.yamltext import one_line, scalar

REPORT_STATUSES = ("all_fixed", "partial", "none_fixed")
HUMAN_VERIFICATION = "fixed: requires human verification"


@dataclass(frozen=True)
class FixedEntry:
    id: str
    title: str
    files: tuple[str, ...]
    commit: str
    applied_fix: str
    status: str = "fixed"  # or HUMAN_VERIFICATION for logic findings


@dataclass(frozen=True)
class SkippedEntry:
    id: str
    title: str
    file: str
    reason: str  # starts with "skipped: "
    original_issue: str


@dataclass(frozen=True)
class ReviewFixReport:
    phase: str
    fixed_at: str
    review_path: str
    iteration: int
    fixed: tuple[FixedEntry, ...]
    skipped: tuple[SkippedEntry, ...]
    number: str = ""  # the padded phase number for the title (default: `phase`)
    fixer: str = "fixloop (fixer)"

    @property
    def findings_in_scope(self) -> int:
        return len(self.fixed) + len(self.skipped)

    @property
    def status(self) -> str:
        if not self.skipped:
            return "all_fixed"
        return "partial" if self.fixed else "none_fixed"


def _fixed(entry: FixedEntry) -> list[str]:
    files = ", ".join(f"`{one_line(path)}`" for path in entry.files)
    applied = one_line(entry.applied_fix)
    if entry.status != "fixed" and not applied.startswith(entry.status):
        applied = f"{entry.status}: {applied}"  # the flag a person must act on, never lost
    return [
        f"### {entry.id}: {one_line(entry.title)}",
        "",
        f"**Files modified:** {files}",
        f"**Commit:** {entry.commit}",
        f"**Applied fix:** {applied}",
        "",
    ]


def _skipped(entry: SkippedEntry) -> list[str]:
    return [
        f"### {entry.id}: {one_line(entry.title)}",
        "",
        f"**File:** `{one_line(entry.file)}`",
        f"**Reason:** {one_line(entry.reason)}",
        f"**Original issue:** {one_line(entry.original_issue)}",
        "",
    ]


def render_fix_report(report: ReviewFixReport) -> str:
    lines = [
        "---",
        f"phase: {scalar(report.phase)}",
        f"fixed_at: {scalar(report.fixed_at)}",
        f"review_path: {scalar(report.review_path)}",
        f"iteration: {report.iteration}",
        f"findings_in_scope: {report.findings_in_scope}",
        f"fixed: {len(report.fixed)}",
        f"skipped: {len(report.skipped)}",
        f"status: {report.status}",
        "---",
        "",
        f"# Phase {one_line(report.number or report.phase)}: Code Review Fix Report",
        "",
        f"**Fixed at:** {report.fixed_at}",
        f"**Source review:** {report.review_path}",
        f"**Iteration:** {report.iteration}",
        "",
        "**Summary:**",
        f"- Findings in scope: {report.findings_in_scope}",
        f"- Fixed: {len(report.fixed)}",
        f"- Skipped: {len(report.skipped)}",
        "",
        "## Fixed Issues",
        "",
    ]
    fixed = [line for entry in report.fixed for line in _fixed(entry)]
    lines += fixed or ["None — all findings were skipped.", ""]
    if report.skipped:
        lines += ["## Skipped Issues", ""]
        lines += [line for entry in report.skipped for line in _skipped(entry)]
    lines += [
        "---",
        "",
        f"_Fixed: {report.fixed_at}_",
        f"_Fixer: {one_line(report.fixer)}_",
        f"_Iteration: {report.iteration}_",
    ]
    return mask_text("\n".join(lines) + "\n")


def fix_report_path(review_path: str) -> str:
    """`02-REVIEW.md` → `02-REVIEW-FIX.md`, `REVIEW.md` → `REVIEW-FIX.md`, next to the review."""
    head, dot, _ = review_path.rpartition(".")
    return f"{head}-FIX.md" if dot else f"{review_path}-FIX.md"
