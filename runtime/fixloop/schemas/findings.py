"""Finding and ReviewOutput exactly as the fix-findings document defines them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["P0", "P1", "P2", "P3"]
Verdict = Literal["confirmed", "demoted", "rejected"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Finding(Model):
    id: Annotated[int, Field(ge=1)] | str
    severity: Severity
    title: Annotated[str, Field(min_length=1)]
    body: str
    file: str | None
    line_start: Annotated[int, Field(ge=1)] | None = None
    line_end: Annotated[int, Field(ge=1)] | None = None
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]
    criterion: str | None = None
    verdict: Verdict | None = None
    evidence: str | None = None
    # The severity the verifier assigns when its verdict is `demoted`.
    new_severity: Severity | None = None


class ReviewOutput(Model):
    schema_version: Literal["v1"]
    findings: list[Finding]
    checks_run: list[str]
