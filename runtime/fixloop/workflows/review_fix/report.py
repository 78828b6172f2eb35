"""REVIEW-FIX.md for one pass of review-fix, and where it goes when it cannot be committed."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from fixloop.reviews.fix_report import (
    FixedEntry,
    ReviewFixReport,
    SkippedEntry,
    render_fix_report,
)
from fixloop.workflows.review_fix.outcome import FindingOutcome

REPORT_MESSAGE = "docs({phase}): add code review fix report"


def fix_report(
    outcomes: Sequence[FindingOutcome],
    *,
    phase: str,
    number: str,
    review_rel: str,
    iteration: int,
) -> ReviewFixReport:
    """`phase` as the review names it (`02-cart`), `number` its padded number (`02`)."""
    fixed = tuple(
        FixedEntry(o.finding.id, o.finding.title, o.files, o.commit, o.summary, o.label)
        for o in outcomes
        if o.fixed
    )
    skipped = tuple(
        SkippedEntry(
            o.finding.id,
            o.finding.title,
            o.finding.location,
            f"{o.label} ({o.detail})" if o.detail else o.label,
            o.finding.issue,
        )
        for o in outcomes
        if not o.fixed
    )
    return ReviewFixReport(
        phase=phase,
        number=number,
        fixed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        review_path=review_rel,
        iteration=iteration,
        fixed=fixed,
        skipped=skipped,
    )


def write_fix_report(target: Path, report: ReviewFixReport) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_fix_report(report), encoding="utf-8")


def keep_copies(worktree: Path, relatives: Sequence[str], folder: Path) -> Path:
    """Copy the run's report files out of the worktree (which is about to go) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for relative in relatives:
        source = worktree / relative
        if source.is_file():
            shutil.copyfile(source, folder / source.name)
    return folder


__all__ = ["REPORT_MESSAGE", "fix_report", "keep_copies", "write_fix_report"]
