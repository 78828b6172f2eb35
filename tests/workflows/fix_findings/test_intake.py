"""Intake: which findings the loop takes, which get a pre-gate, and both input shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.schemas.findings import Finding
from fixloop.steps.paths import path_problem
from fixloop.workflows.fix_findings.intake import (
    in_scope,
    load_findings,
    needs_pre_gate,
)

BASE = Finding(
    id=1,
    severity="P1",
    title="t",
    body="b",
    file="a.py",
    confidence=0.4,
    criterion="no crash on empty input",
    verdict="confirmed",
    evidence="Verifier: real",
)


@pytest.mark.parametrize(
    ("severity", "verdict", "taken"),
    [
        ("P0", "confirmed", True),
        ("P1", "confirmed", True),
        ("P2", "confirmed", False),
        ("P3", "confirmed", False),
        ("P0", "demoted", False),
        ("P0", "rejected", False),
        ("P0", None, False),
    ],
)
def test_the_intake_filter(severity: str, verdict: str | None, taken: bool) -> None:
    assert in_scope(BASE.model_copy(update={"severity": severity, "verdict": verdict})) is taken


@pytest.mark.parametrize(
    ("evidence", "gated"),
    [
        (None, True),
        ("  ", True),
        ("Orchestrator-confirmed (no verifier)", True),
        ("Verifier: real", False),
        ("orchestrator-confirmed", False),
    ],
)
def test_the_pre_gate_trigger_ignores_confidence(evidence: str | None, gated: bool) -> None:
    assert needs_pre_gate(BASE.model_copy(update={"evidence": evidence})) is gated


def test_an_envelope_and_a_list_read_the_same(tmp_path: Path) -> None:
    raw = BASE.model_dump(mode="json")
    envelope, listing = tmp_path / "e.json", tmp_path / "l.json"
    envelope.write_text(json.dumps({"schema_version": "v1", "findings": [raw], "checks_run": []}))
    listing.write_text(json.dumps([raw]))
    assert load_findings(envelope, tmp_path) == load_findings(listing, tmp_path) == [BASE]


def test_a_taken_finding_must_name_its_criterion_one_left_out_need_not(tmp_path: Path) -> None:
    findings = tmp_path / "f.json"
    without = BASE.model_dump(mode="json") | {"criterion": None}
    findings.write_text(json.dumps([without]))
    with pytest.raises(FixloopError) as refused:
        load_findings(findings, tmp_path)
    assert str(refused.value).endswith(
        "f.json:1:1: findings: finding 1: criterion: required for a P1 finding (name the "
        "criterion it violates)"
    )
    left_out = [without | {"severity": "P2"}, without | {"id": 2, "verdict": "rejected"}]
    findings.write_text(json.dumps(left_out))
    assert [f.criterion for f in load_findings(findings, tmp_path)] == [None, None]


def test_a_symlink_that_stays_inside_is_fine(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("x = 1\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    assert path_problem(tmp_path, "alias.py") is None
    assert path_problem(tmp_path, "./sub/new.py") is None
