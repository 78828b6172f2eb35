"""Verify one task: dispatch its scorer, read its result file failing closed, recompute the score.

A logic task is scored by the reviewer (`scores` mode, its files against the wave's baseline); a
design task by the verifier, from screenshots of the merged page (the dev server serving the run's
worktree, the real browser) beside the reference. Either writes its scores to a result file in the
run's worktree (`.fixloop/context/review-result-ID.json` or `verify-result-ID.json`); a stale one
is removed first, so an old pass can never be read again. A missing or invalid file, or a call
that ended without a valid answer, scores 0 on every dimension: a failed verification.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop.diagnostics import FixloopError
from fixloop.workflows.execute_wave import design, scoring
from fixloop.workflows.execute_wave.scoring import Score, Thresholds
from fixloop.workflows.execute_wave.tasks import DESIGN, Task, WaveSettings
from fixloop.workflows.execute_wave.work import CONTEXT, TaskWork

if TYPE_CHECKING:
    from fixloop.workflows.execute_wave.wave import WaveRun

DESIGN_QUESTION = "does the page match the design?"
_ANALYSIS_LIMIT = 4000


def thresholds(settings: WaveSettings, kind: str) -> Thresholds:
    return Thresholds(
        settings.threshold(kind), settings.dimensionThreshold, settings.scoreDropTolerance
    )


def result_name(task: Task) -> str:
    return f"{'verify' if task.is_design else 'review'}-result-{task.id}.json"


def criteria(task: Task) -> str:
    value = task.raw.get("acceptanceCriteria") or ""
    return "\n".join(value) if isinstance(value, list) else str(value)


def design_finding(task: Task) -> dict[str, Any]:
    """The one question a design verification answers, as the verifier's Finding input."""
    body = task.raw.get("description") or task.name
    return {
        "id": f"task-{task.id}",
        "severity": "P1",
        "title": f"Task {task.id} must match its design",
        "body": "\n".join(body) if isinstance(body, list) else str(body),
        "file": None,
        "line_start": None,
        "line_end": None,
        "confidence": 1.0,
        "criterion": criteria(task) or None,
        "verdict": None,
        "evidence": None,
    }


class Verification:
    """One verification of one task (`round` names it: `verify`, `attempt-2`)."""

    def __init__(self, flow: WaveRun, work: TaskWork, url: str, round_name: str) -> None:
        self.flow = flow
        self.work = work
        self.url = url
        self.round = round_name
        self.valid = False  # True once a result file was read and rescored

    def __call__(self) -> Score:
        flow, work, task = self.flow, self.work, self.work.task
        output_rel = f"{CONTEXT}/{result_name(task)}"
        output = flow.git.worktree / output_rel
        output.unlink(missing_ok=True)
        inputs = self.design_inputs() if task.is_design else self.logic_inputs()
        if inputs is None:
            return self.failed("no screenshot of the merged page")
        role = "verifier" if task.is_design else "reviewer"
        inputs["output_path"] = output_rel
        outcome = flow.call_for(
            work,
            role,
            inputs,
            self.brief(output_rel),
            flow.git.worktree,
            writable=[output_rel],
            key=f"{role}/{task.id}/{self.round}",
            design=task.is_design,
        )
        flow.records.keep(output, f"{self.round}-{result_name(task)}")
        if not outcome.ok:
            return self.failed(f"{role} call inconclusive ({outcome.reason}: {outcome.detail})")
        text = output.read_text(encoding="utf-8") if output.is_file() else None
        check, raw = scoring.check_result(text)
        if check != scoring.OK:
            return self.failed(f"verification result file missing or invalid ({check})")
        kind = task.kind
        score = scoring.recompute(raw, kind, thresholds(flow.wave_plan.tasks.settings, kind))
        work.analysis = analysis_of(json.loads(text or "{}"))
        for warning in score.warnings:
            flow.warn(f"task {task.id}: scores: {warning}", item=task.id)
        work.score = score
        self.valid = True
        return score

    def failed(self, reason: str) -> Score:
        score = scoring.zero(self.work.task.kind)
        self.work.score = score
        self.work.analysis = reason
        self.flow.warn(f"task {self.work.id}: {reason}; it scores 0", item=self.work.id)
        return score

    def logic_inputs(self) -> dict[str, Any]:
        work = self.work
        return {
            "mode": "scores",
            "files": work.files,
            "worktree": str(self.flow.git.worktree),
            "criteria": criteria(work.task),
            "base_ref": self.flow.wave_baseline_ref,
            "task": work.task.brief(),
            "dimensions": list(scoring.LOGIC_WEIGHTS),
        }

    def design_inputs(self) -> dict[str, Any] | None:
        flow, work, task = self.flow, self.work, self.work.task
        shot = flow.active_run.dir / "shots" / f"task-{task.id}-{self.round}.png"
        url = design.page_url(self.url, task.route)
        try:
            design.shoot(
                flow.context.browser,
                url,
                shot,
                flow.options.viewport,
                flow.options.screenshot_timeout_s,
            )
        except FixloopError as exc:
            work.analysis = str(exc)
            return None
        work.shots.append(shot)
        reference = str(flow.wave_plan.repo / task.reference_image) if task.reference_image else ""
        compared = reference or f"the Figma design {task.figma_url}"
        artifact = f"screenshots of {url} beside {compared}" + self.staleness(shot)
        return {
            "finding": design_finding(task),
            "question": DESIGN_QUESTION,
            "artifact": artifact,
            "files": work.files,
            "worktree": str(flow.git.worktree),
            "criteria": criteria(task),
            "screenshots": [str(shot)],
            "reference": reference,
            "dimensions": list(scoring.DESIGN_WEIGHTS),
        }

    def staleness(self, shot: Path) -> str:
        """'' when the picture can be trusted; else why not, for the verifier's artifact line
        (and a warning): the page looked exactly as before although the task's files changed,
        so the dev server serves a build of the old files (`devServerCommand` must reflect
        edits live, or rebuild)."""
        flow, work = self.flow, self.work
        files = hashlib.sha256()
        for relative in sorted(work.files or work.task.files):
            path = flow.git.worktree / relative
            files.update(relative.encode() + b"\0" + (path.read_bytes() if path.is_file() else b""))
        look = (hashlib.sha256(shot.read_bytes()).hexdigest(), files.hexdigest())
        before, work.last_look = work.last_look, look
        if before is None or before[0] != look[0] or before[1] == look[1]:
            return ""
        flow.warn(
            f"task {work.id}: the page looks exactly as before although its files changed: does "
            "devServerCommand serve edits live? (a server that builds once serves the old page)",
            item=work.id,
        )
        return (
            " (WARNING: this picture is identical to the previous one although the task's files "
            "changed since; the dev server may be serving a stale build)"
        )

    def brief(self, output_rel: str) -> str:
        task = self.work.task
        what = "the page against its design" if task.kind == DESIGN else "the task's changes"
        return (
            f"Score {what} for task {task.id} ({task.name}) on each of your dimensions, 0-10. "
            f"Write the scores to {output_rel} as your instructions say, then answer."
        )


def analysis_of(result: Mapping[str, Any]) -> str:
    """What a fixer should read of a verification: its analysis and its findings, bounded."""
    parts = [str(result.get("analysis") or "")]
    findings = result.get("findings")
    if isinstance(findings, list):
        for finding in findings:
            if isinstance(finding, dict):
                where = finding.get("file") or ""
                parts.append(f"- {finding.get('title', '')} {where}".rstrip())
    return "\n".join(part for part in parts if part)[:_ANALYSIS_LIMIT]


__all__ = ["DESIGN_QUESTION", "Verification", "analysis_of", "design_finding", "thresholds"]
