"""A batch's summary as Markdown: one row per job, in the jobs file's order, and the totals."""

from __future__ import annotations

from fixloop.extras.batch.run import BatchResult, JobOutcome
from fixloop.extras.efficacy.outcome import RESOLVED

HEADER = (
    "| job | line | status | tests before | tests after | accepted | attempts | cost | wall |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def _row(outcome: JobOutcome) -> str:
    accepted = {None: "-", True: "yes", False: "no"}[outcome.accepted]
    return (
        f"| {_cell(outcome.id)} | {outcome.line} | {outcome.status} | "
        f"{_cell(outcome.tests_before)} | {_cell(outcome.tests_after)} | {accepted} | "
        f"{outcome.attempts} | ${outcome.cost_usd:.4f} | {outcome.wall_s:.1f} s |"
    )


def markdown(result: BatchResult) -> str:
    resolved = sum(o.status == RESOLVED for o in result.outcomes)
    total = len(result.outcomes)
    cost = sum(o.cost_usd for o in result.outcomes)
    lines = [
        f"## Batch: {result.jobs}",
        "",
        f"Backend `{result.backend}`; each job's clone, patch and verdict under `{result.out}`.",
        "",
        HEADER,
        *(_row(outcome) for outcome in result.outcomes),
        f"| **total** | {total} jobs | **{resolved}/{total} resolved** | | | | | "
        f"${cost:.4f} | {result.wall_s:.1f} s |",
    ]
    reasons = [f"- {o.id}: {o.status}: {o.reason}" for o in result.outcomes if o.status != RESOLVED]
    if reasons:
        lines += ["", "Not resolved:", *reasons]
    return "\n".join(lines) + "\n"


__all__ = ["markdown"]
