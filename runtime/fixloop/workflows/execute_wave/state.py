"""What execute-wave keeps on disk and what it reports: the run's state, each wave's result.

`ExecuteWaveState` (the run's `state.json`, see `runs.state`) is saved after every change: each
task's record as soon as it moves, each wave once it is finished, and `waves_commit`, the run's
commit after its last finished wave. A stopped run's state is what `--resume` continues from:
its finished waves are final, the wave it was in is run again.

`context/wave-result-N.json` in the run's folder is each wave's result, one per wave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fixloop.masking import dumps_masked
from fixloop.runs.state import RunState
from fixloop.workflows.execute_wave.tasks import id_order
from fixloop.workflows.kernel.result import Result


class TaskStatus(StrEnum):
    """A task's status through a wave: queued for an executor, running, merged, passed (or
    fixed by the fix loop), then committed; or failed, rolled back, skipped."""

    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    MERGED = "merged"
    PASSED = "passed"
    FIXED = "fixed"
    FAILED = "failed"
    ROLLED_BACK = "rolled-back"
    COMMITTED = "committed"
    DONE = "done"
    SKIPPED = "skipped"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskRecord(_Record):
    """One task in this run: where it is, why, what it changed, how it scored."""

    id: str
    name: str
    wave: int
    kind: str
    status: str = str(TaskStatus.PENDING)  # an TaskStatus value
    reason: str = ""  # why it failed or was skipped, one line
    files: list[str] = Field(default_factory=list)  # the files it changed, from git
    put_back: list[str] = Field(default_factory=list)  # its executor's changes outside them
    total: int | None = None  # the recomputed total of its last verification
    scores: dict[str, float] = Field(default_factory=dict)
    attempts: int = 0  # fix-loop attempts
    warnings: list[str] = Field(default_factory=list)  # score keys mapped, missing, dropped
    commit: str = ""  # the wave commit holding its work

    @property
    def passed(self) -> bool:
        return self.status in (TaskStatus.PASSED, TaskStatus.FIXED, TaskStatus.COMMITTED)


class WaveRecord(_Record):
    wave: int
    finished: bool = False
    passed: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)  # failed tasks' files a passed task also has
    committed: bool = False
    commit: str = ""

    def result(self, raw_ids: dict[str, int | str]) -> dict[str, Any]:
        """The wave result file's content (ids as tasks.json writes them)."""

        def ids(values: list[str]) -> list[int | str]:
            return [raw_ids.get(value, value) for value in sorted(values, key=id_order)]

        return {
            "wave": self.wave,
            "passedIds": ids(self.passed),
            "failedIds": ids(self.failed),
            "skippedIds": ids(self.skipped),
            "committed": self.committed,
            "commitHash": self.commit[:7],
        }


class ExecuteWaveState(RunState):
    workflow: Literal["execute-wave"] = "execute-wave"
    repo: str
    tasks: dict[str, TaskRecord] = Field(default_factory=dict)
    waves: list[WaveRecord] = Field(default_factory=list)
    waves_commit: str = ""  # the run's commit after its last finished wave

    def wave(self, number: int) -> WaveRecord:
        found = next((record for record in self.waves if record.wave == number), None)
        if found is None:
            found = WaveRecord(wave=number)
            self.waves.append(found)
        return found


def write_wave_result(run_dir: Path, record: WaveRecord, raw_ids: dict[str, int | str]) -> Path:
    target = run_dir / "context" / f"wave-result-{record.wave}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.write_text(dumps_masked(record.result(raw_ids), indent=2) + "\n", encoding="utf-8")
    temporary.replace(target)
    return target


@dataclass
class ExecuteWaveResult(Result):
    """Exit 0 when every task this run handled passed; 1 when one failed or was skipped, or the
    waves stayed on a kept branch."""

    tasks_path: str
    run_dir: str = ""
    tasks: list[TaskRecord] = field(default_factory=list)
    waves: list[WaveRecord] = field(default_factory=list)
    resumed_from: str = ""

    def work_items(self) -> list[TaskRecord]:
        return self.tasks

    def short(self, item: TaskRecord) -> bool:
        return not item.passed and item.status != TaskStatus.DONE

    def details(self) -> dict[str, Any]:
        return {
            "tasks_path": self.tasks_path,
            "run_dir": self.run_dir,
            "resumed_from": self.resumed_from,
            "waves": [w.model_dump() for w in self.waves],
            "tasks": [t.model_dump() for t in self.tasks],
        }

    def item_json(self, item: TaskRecord) -> dict[str, Any]:
        keys = ("id", "status", "name", "wave", "total", "scores", "reason", "files", "attempts")
        return {**{key: getattr(item, key) for key in keys}, "commit": item.commit}

    def summary_lines(self) -> list[str]:
        if self.nothing_to_do:  # every task done already
            return [self.nothing_to_do]
        passed = [task for task in self.tasks if task.passed]
        lines = [
            f"execute-wave run {self.run_id}: {len(self.tasks)} task(s), {len(passed)} passed, "
            f"{len(self.tasks) - len(passed)} failed or skipped"
        ]
        for task in self.tasks:
            score = f" score {task.total}" if task.total is not None else ""
            after = f" after {task.attempts} fix attempt(s)" if task.attempts else ""
            head = f"  task {task.id} (wave {task.wave}):{score}{after}"
            if task.passed:
                where = (
                    f"committed in {task.commit}" if task.commit else "passed, nothing to commit"
                )
                lines.append(f"{head}; {where}")
            else:
                lines.append(f"{head}; {task.status}: {task.reason}")
        for wave in self.waves:
            commit = f"commit {wave.commit[:7]}" if wave.committed else "no commit"
            kept = f"; kept (also a passed task's): {', '.join(wave.kept)}" if wave.kept else ""
            lines.append(f"  wave {wave.wave}: {commit}{kept}")
        if self.kept_branch:
            lines.append(
                f"Your branch could not be fast-forwarded: the waves are on {self.kept_branch}"
            )
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return lines


__all__ = [
    "ExecuteWaveResult",
    "ExecuteWaveState",
    "TaskRecord",
    "WaveRecord",
    "write_wave_result",
]
