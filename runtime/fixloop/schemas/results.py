"""What the fixer, executor, wave-runner, fix-loop and the fix-verify loop return."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel

from fixloop.schemas.findings import Model

Path = Annotated[str, Field(min_length=1)]


class FixReport(Model):
    files_changed: list[Path]
    summary: str
    concerns: list[str] | None = None


class ScopeExpansionRequest(Model):
    needs_scope_expansion: Literal[True]
    additional_files: Annotated[list[Path], Field(min_length=1)]
    justification: Annotated[str, Field(min_length=1)]


class FixerResult(RootModel[FixReport | ScopeExpansionRequest]):
    """The fixer either reports its edits or, before editing, asks for more files."""


class EscalatedFinding(Model):
    id: int | str
    attempts: list[str]
    evidence: str | None
    staged_summary: str


class DroppedFinding(Model):
    id: int | str
    reason: str


class DemotedFinding(Model):
    id: int | str
    new_severity: Literal["P2", "P3"]
    evidence: str


class FixVerifyLoopOutput(Model):
    resolved: list[int | str] = Field(default_factory=list)
    escalated: list[EscalatedFinding] = Field(default_factory=list)
    dropped: list[DroppedFinding] = Field(default_factory=list)
    demoted: list[DemotedFinding] = Field(default_factory=list)


class ImplResult(Model):
    id: int | str
    status: Literal["done", "failed", "no_task"]
    filesModified: list[Path] = Field(default_factory=list)
    notes: str = ""


class WaveResult(Model):
    wave: int
    passedIds: list[int | str]
    failedIds: list[int | str]
    skippedIds: list[int | str]
    committed: bool
    commitHash: str


class FixLoopResult(Model):
    taskId: int | str
    passed: bool
    attempts: int
    finalScores: dict[str, float] = Field(default_factory=dict)
    totalScore: int | None = None
    rolledBack: bool = False
