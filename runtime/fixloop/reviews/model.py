"""The content of a REVIEW.md: its frontmatter and its findings, independent of the text layout.

Severity comes from the finding id's prefix: `CR-` and `BL-` (blocker) are critical, `WR-` is a
warning, `IN-` is info. Any other prefix is an error, never a guess: severity labels drift between
reviewers, and a silently dropped finding is worse than a loud one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ReviewSeverity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {ReviewSeverity.CRITICAL: 0, ReviewSeverity.WARNING: 1, ReviewSeverity.INFO: 2}

PREFIXES: dict[str, ReviewSeverity] = {
    "CR": ReviewSeverity.CRITICAL,
    "BL": ReviewSeverity.CRITICAL,
    "WR": ReviewSeverity.WARNING,
    "IN": ReviewSeverity.INFO,
}

REVIEW_STATUSES = ("clean", "issues_found", "skipped")


class FixScope(StrEnum):
    CRITICAL_WARNING = "critical_warning"
    ALL = "all"

    def includes(self, severity: ReviewSeverity) -> bool:
        return self is FixScope.ALL or severity is not ReviewSeverity.INFO


@dataclass(frozen=True)
class ReviewFinding:
    id: str  # e.g. "CR-01"
    severity: ReviewSeverity
    title: str
    file: str  # the path of the `**File:**` line
    line: int | None  # the line of `path:42`, or None for a bare path
    files: tuple[str, ...]  # the declared files: `file` first, then the `**Files:**` line's
    issue: str
    fix: str
    heading_line: int  # where `### ID: Title` sits in REVIEW.md
    # Other files the Fix text names: context for the fixer, never its scope (a bare `utils.py`
    # may mean `src/utils.py`); a fix that needs one asks for it (a scope expansion).
    mentioned: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@dataclass(frozen=True)
class Review:
    phase: str
    status: str  # clean | issues_found | skipped, or "unknown" when absent or unrecognised
    reviewed: str = ""
    depth: str = "standard"
    files_reviewed_list: tuple[str, ...] = ()
    findings: tuple[ReviewFinding, ...] = field(default=())
    title: str = ""

    def counts(self) -> dict[str, int]:
        counts = {severity.value: 0 for severity in ReviewSeverity}
        for finding in self.findings:
            counts[finding.severity.value] += 1
        counts["total"] = len(self.findings)
        return counts

    def in_scope(self, scope: FixScope) -> list[ReviewFinding]:
        """Findings to fix, most severe first; equal severities keep their document order."""
        chosen = [f for f in self.findings if scope.includes(f.severity)]
        return sorted(chosen, key=lambda f: f.severity.rank)  # sorted() is stable
