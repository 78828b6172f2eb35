"""Reading the verifier's verdict fail-closed, and seed 002's table as data."""

from __future__ import annotations

import pytest

from fixloop.agents.backend import AgentOutcome, OutcomeStatus, StopReason
from fixloop.schemas.findings import Finding, ReviewOutput
from fixloop.workflows.fix_findings.verdicts import Judgement, Next, decide, decide_pre_gate, judge

FINDING = Finding(id=3, severity="P0", title="t", body="b", file="a.py", confidence=0.9)


def outcome(*findings: Finding) -> AgentOutcome:
    output = ReviewOutput(schema_version="v1", findings=list(findings), checks_run=[])
    return AgentOutcome(OutcomeStatus.OK, output)


def judged(**changes: object) -> Finding:
    return FINDING.model_copy(update=changes)


def test_a_verdict_on_the_same_finding_is_read() -> None:
    result = judge(outcome(judged(verdict="demoted", severity="P2", evidence="e")), FINDING)
    assert result == Judgement("demoted", "P2", "e")


def test_new_severity_wins_over_severity() -> None:
    result = judge(outcome(judged(verdict="demoted", new_severity="P3")), FINDING)
    assert result.severity == "P3"


@pytest.mark.parametrize(
    "bad",
    [
        AgentOutcome.inconclusive(StopReason.CRASH, "boom"),
        outcome(),
        outcome(judged(id=4, verdict="rejected")),
        outcome(judged(verdict=None)),
        outcome(judged(verdict="rejected"), judged(verdict="confirmed")),
    ],
    ids=["crash", "no findings", "other id", "no verdict", "two verdicts"],
)
def test_anything_else_is_inconclusive(bad: AgentOutcome) -> None:
    result = judge(bad, FINDING)
    assert result.verdict == "inconclusive"
    assert not result.conclusive


@pytest.mark.parametrize(
    ("verdict", "severity", "last", "expected"),
    [
        ("rejected", None, False, Next.RESOLVED),
        ("rejected", None, True, Next.RESOLVED),
        ("confirmed", "P0", False, Next.NEXT_ROUND),
        ("confirmed", "P1", True, Next.ESCALATED),
        ("demoted", "P0", False, Next.NEXT_ROUND),
        ("demoted", "P1", False, Next.NEXT_ROUND),
        ("demoted", "P1", True, Next.ESCALATED),
        ("demoted", "P2", False, Next.DEMOTED),
        ("demoted", "P3", True, Next.DEMOTED),
        ("inconclusive", None, False, Next.NEXT_ROUND),
        ("inconclusive", None, True, Next.ESCALATED),
    ],
)
def test_the_round_table(verdict: str, severity: str | None, last: bool, expected: Next) -> None:
    judgement = Judgement(verdict, severity)  # type: ignore[arg-type]
    assert decide(judgement, last_round=last) is expected


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        ("rejected", Next.DROPPED),
        ("confirmed", Next.FIX),
        ("demoted", Next.FIX),
        ("inconclusive", Next.FIX),
    ],
)
def test_the_pre_gate_table(verdict: str, expected: Next) -> None:
    assert decide_pre_gate(Judgement(verdict)) is expected  # type: ignore[arg-type]
