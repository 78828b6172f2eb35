"""The fixers of a wave: backpressure after the merges, and the serial fix loop of failed tasks.

Both work in the run's worktree and give the fixer exactly the files it may edit. A change the
fixer makes to any other file (a shell command the write scope did not see) is put back with
git-protocol's `rollback-files`, and the attempt counts as failed.

The fix loop keeps one task's best state behind a checkpoint (the document's `checkpoint-task`:
a commit of the task's files, tagged `checkpoint-ID` among the run's tags). An attempt that makes
the task pass ends the loop; one whose recomputed score regressed (`scoring.regression`), whose
verification is missing or invalid, or whose fixer gave no valid answer is rolled back to the
checkpoint, file by file; any other attempt is kept and becomes the new checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fixloop import gitrepo
from fixloop.masking import mask_text
from fixloop.schemas.results import FixReport, ScopeExpansionRequest
from fixloop.steps.paths import path_problem
from fixloop.workflows.execute_wave import scoring
from fixloop.workflows.execute_wave.verify import Verification, criteria, thresholds
from fixloop.workflows.execute_wave.work import TaskWork, task_files_only
from fixloop.workflows.kernel.scope_policy import protected_reason

if TYPE_CHECKING:
    from fixloop.agents.backend import AgentOutcome
    from fixloop.workflows.execute_wave.wave import WaveRun

MAX_BACKPRESSURE_FIXES = 3
_TAIL_LINES = 30


def tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def synthetic_finding(finding_id: str, title: str, body: str, criterion: str) -> dict[str, Any]:
    return {
        "id": finding_id,
        "severity": "P1",
        "title": title,
        "body": body,
        "file": None,
        "line_start": None,
        "line_end": None,
        "confidence": 1.0,
        "criterion": criterion or None,
        "verdict": "confirmed",
        "evidence": None,
    }


def put_back_strays(flow: WaveRun, allowed: list[str], before: set[str]) -> list[str]:
    """Roll back to HEAD every file a fixer changed outside `allowed`; returns those files."""
    now = set(task_files_only(list(gitrepo.changed_paths(flow.git.worktree))))
    strays = sorted(now - before - set(allowed))
    if strays:
        flow.git.rollback(strays, "HEAD")
    return strays


def backpressure(flow: WaveRun, works: list[TaskWork], wave: int) -> None:
    """The build command after the merges; at most 3 fixer rounds; else the merged tasks fail."""
    command = flow.wave_plan.tasks.settings.backpressureCommand
    merged = [work for work in works if work.merged and not work.failed]
    if not command.strip() or not merged:
        return
    files = sorted({path for work in merged for path in work.files})
    log = flow.active_run.dir / "context" / f"backpressure-{wave}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for round_number in range(MAX_BACKPRESSURE_FIXES + 1):
        result = flow.step(
            "backpressure",
            flow.git.worktree,
            WORKTREE=str(flow.git.worktree),
            BACKPRESSURE_COMMAND=command,
            LOG_FILE=str(log),
        )
        if log.is_file():  # the user's build may print secrets; nothing unmasked stays on disk
            log.write_text(mask_text(log.read_text(errors="replace")), encoding="utf-8")
        if result.outputs.get("BACKPRESSURE") == "pass":
            if round_number:
                flow.note(f"wave {wave}: the build passes after {round_number} fixer round(s)")
            return
        if round_number == MAX_BACKPRESSURE_FIXES:
            break
        errors = tail(log)
        before = set(task_files_only(list(gitrepo.changed_paths(flow.git.worktree))))
        finding = synthetic_finding(
            f"wave-{wave}-backpressure",
            f"The build fails after wave {wave}'s merges",
            errors,
            f"`{command}` succeeds",
        )
        flow.call(
            "fixer",
            {
                "finding": finding,
                "files": files,
                "worktree": str(flow.git.worktree),
                "failure_context": errors,
            },
            f"The build command fails after the merge of wave {wave}; fix the errors in your "
            "files only. Do not stage or commit. Answer with one FixerResult JSON object.",
            flow.git.worktree,
            writable=files,
            key=f"fixer/wave-{wave}/backpressure-{round_number + 1}",
        )
        put_back_strays(flow, files, before)
    for work in merged:
        work.fail("backpressure failed")


class FixLoop:
    """The fix loop of one task that failed verification (serial: one task at a time)."""

    def __init__(self, flow: WaveRun, work: TaskWork, url: str, others: set[str]) -> None:
        self.flow = flow
        self.work = work
        self.url = url
        self.others = others  # files other tasks own: a scope expansion may not take them
        self.files = sorted(set(work.files) | set(work.task.files))
        self.history: list[str] = []
        if work.put_back:  # the implementation's own strays: the fixer learns of them first
            strays = ", ".join(work.put_back)
            self.history.append(
                f"implementation: changed {strays} outside the task's files; put back"
            )

    def __call__(self) -> bool:
        flow, work = self.flow, self.work
        settings = flow.wave_plan.tasks.settings
        best = work.score or scoring.zero(work.task.kind)
        if not self.files:
            work.fail("verification failed and the task changed no file a fixer could work on")
            return False
        self.checkpoint()
        for attempt in range(1, settings.maxRetries + 1):
            work.attempts = attempt
            flow.records.attempt(work.id, work.attempts, best.total)
            if not self.fix(attempt):
                self.rollback(f"attempt {attempt}: the fixer gave no usable result")
                continue
            score, valid = self.verify(attempt)
            if valid and score.passed:
                work.fixed = True
                flow.note(
                    f"task {work.id}: attempt {attempt}: {best.total} -> {score.total}, passes"
                )
                return True
            reason = (
                "verification missing or invalid"
                if not valid
                else scoring.regression(score, best, thresholds(settings, work.task.kind))
            )
            if reason is not None:
                self.rollback(f"attempt {attempt}: {reason}")
                work.score = best
                continue
            self.history.append(f"attempt {attempt}: {best.total} -> {score.total}, kept")
            flow.note(f"task {work.id}: attempt {attempt}: {best.total} -> {score.total}, kept")
            best = score
            self.checkpoint()
        work.score = best
        work.fail(f"Exceeded max retries ({settings.maxRetries})")
        return False

    def fix(self, attempt: int) -> bool:
        flow, work = self.flow, self.work
        before = set(task_files_only(list(gitrepo.changed_paths(flow.git.worktree))))
        outcome = self.dispatch(attempt, "")
        result = getattr(outcome.output, "root", outcome.output) if outcome.ok else None
        if isinstance(result, ScopeExpansionRequest):
            wanted = [str(p) for p in result.additional_files if self.may_take(str(p))]
            if len(wanted) != len(result.additional_files):
                self.history.append(f"attempt {attempt}: asked for files it may not have")
                return False
            self.files = sorted(set(self.files) | set(wanted))
            flow.tasks_file.update(work.id, filesModified=self.files)
            outcome = self.dispatch(attempt, "-expanded")
            result = getattr(outcome.output, "root", outcome.output) if outcome.ok else None
        strays = put_back_strays(flow, self.files, before)
        if strays:
            self.history.append(f"attempt {attempt}: changed {', '.join(strays)}; put back")
            return False
        if not isinstance(result, FixReport) or not result.files_changed:
            self.history.append(f"attempt {attempt}: {_said(outcome, result)}")
            return False
        self.history.append(f"attempt {attempt}: {result.summary}")
        return True

    def may_take(self, path: str) -> bool:
        """A file the fixer may be granted: safe, no other task's, and not protected (CI or git
        configuration, the pack's documents, secrets: a fixer's asking never grants those)."""
        if path_problem(self.flow.git.worktree, path) is not None or path in self.others:
            return False
        return protected_reason(path) is None

    def dispatch(self, attempt: int, suffix: str) -> AgentOutcome:
        work, flow = self.work, self.flow
        failed = ", ".join(work.score.failed_dimensions) if work.score else "all"
        total = work.score.total if work.score else 0
        finding = synthetic_finding(
            f"task-{work.id}-attempt-{attempt}",
            f"Task {work.id} below threshold: {failed}",
            work.analysis,
            criteria(work.task),
        )
        inputs = {
            "finding": finding,
            "files": self.files,
            "worktree": str(flow.git.worktree),
            "criteria": criteria(work.task),
            "failure_context": f"recomputed total {total}; failed dimensions: {failed}\n"
            + work.analysis,
            "previous_attempts": self.history,
        }
        return flow.call_for(
            work,
            "fixer",
            inputs,
            f"Task {work.id} ({work.task.name}) failed verification. Raise its scores: fix it in "
            "its files only. Do not stage or commit. Answer with one FixerResult JSON object.",
            flow.git.worktree,
            writable=self.files,
            key=f"fixer/{work.id}/attempt-{attempt}{suffix}",
        )

    def verify(self, attempt: int) -> tuple[scoring.Score, bool]:
        check = Verification(self.flow, self.work, self.url, f"attempt-{attempt}")
        score = check()
        return score, check.valid

    def checkpoint(self) -> None:
        flow = self.flow
        flow.step(
            "checkpoint-task",
            flow.git.worktree,
            RUN_ID=flow.active_run.id,
            WORKTREE=str(flow.git.worktree),
            TASK_ID=self.work.id,
            PATHS_FILE=str(flow.git.paths_file(self.files)),
        )

    def rollback(self, why: str) -> None:
        self.history.append(why)
        self.flow.note(f"task {self.work.id}: {why}; rolled back to its checkpoint")
        self.flow.git.rollback(self.files, f"checkpoint-{self.work.id}")


def _said(outcome: AgentOutcome, result: object) -> str:
    if isinstance(result, FixReport):
        return f"changed nothing ({result.summary})"
    return f"no valid answer ({outcome.reason}: {outcome.detail})"


__all__ = ["MAX_BACKPRESSURE_FIXES", "FixLoop", "backpressure", "put_back_strays", "tail"]
