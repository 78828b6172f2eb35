"""The efficacy report as a Markdown table: one row per task, one for the totals."""

from __future__ import annotations

from fixloop.extras.efficacy.outcome import BenchResult, TaskOutcome

HEADER = (
    "| task | kind | status | tests before → after | fail-to-pass | pass-to-pass "
    "| patch acceptance | attempts | turns | tool calls | cost | wall |\n"
    "|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|"
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _accepted(outcome: TaskOutcome) -> str:
    return {None: "no patch", True: "accepted", False: "rejected"}[outcome.accepted]


def _row(outcome: TaskOutcome) -> str:
    tests = f"{outcome.tests_before or '-'} → {outcome.tests_after or '-'}"
    cells = [
        outcome.id,
        outcome.kind,
        outcome.status,
        tests,
        outcome.fail_to_pass or "-",
        outcome.pass_to_pass or "-",
        _accepted(outcome),
        str(outcome.attempts),
        str(outcome.turns),
        str(outcome.tool_calls),
        f"${outcome.cost_usd:.4f}",
        f"{outcome.wall_s:.1f} s",
    ]
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _sum(result: BenchResult, role: str) -> str:
    """`passed/selected` over every task that has the counts."""
    pairs = [getattr(o, role).split("/") for o in result.outcomes if getattr(o, role)]
    if not pairs:
        return "-"
    return f"{sum(int(p[0]) for p in pairs)}/{sum(int(p[1]) for p in pairs)}"


def markdown(result: BenchResult) -> str:
    totals = result.totals()
    lines = [
        f"## Efficacy: {result.corpus} v{result.version}",
        "",
        f"Corpus digest `{result.digest}`; backend `{result.backend}`; {result.sandbox}.",
        "",
        HEADER,
        *(_row(outcome) for outcome in result.outcomes),
        (
            f"| **total** | {totals['tasks']} tasks | **{totals['resolved']}/{totals['tasks']} "
            f"resolved ({100 * result.rate:.0f}%)** | | {_sum(result, 'fail_to_pass')} | "
            f"{_sum(result, 'pass_to_pass')} | {totals['accepted']} accepted | "
            f"{totals['attempts']} | {totals['turns']} | {totals['tool_calls']} | "
            f"${totals['cost_usd']:.4f} | {totals['wall_s']:.1f} s |"
        ),
    ]
    reasons = [f"- {o.id}: {o.reason}" for o in result.outcomes if o.status != "resolved"]
    if reasons:
        lines += ["", "Not resolved:", *reasons]
    return "\n".join(lines) + "\n"


__all__ = ["markdown"]
