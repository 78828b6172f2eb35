"""A task's status, kept in three places at once: the run's state, tasks.json, and an event.

Every change goes through `Records.set`, under one lock (parallel executors call it from their
threads): the task's record in `state.json` (what `--resume` continues from), its keys in
tasks.json (the plan's own state, which the user and the next wave read), then one `item` event for
the trace and the progress display. Result files the roles wrote are copied into the run's
folder (`keep`), where they outlive the worktrees; what fixloop writes is masked
(`fixloop.masking`) first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fixloop.masking import mask_text
from fixloop.runs.state import save_state
from fixloop.workflows.execute_wave.state import ExecuteWaveState, TaskStatus
from fixloop.workflows.execute_wave.tasks_file import TaskFile

# tasks.json's word for each status an item can end in; the others are `in_progress`.
ON_DISK = {
    TaskStatus.DONE: "done",
    TaskStatus.COMMITTED: "done",
    TaskStatus.FAILED: "failed",
    TaskStatus.ROLLED_BACK: "failed",
    TaskStatus.SKIPPED: "skipped",
}
_RECORD_ONLY = ("total", "scores", "warnings")
ItemListener = Callable[[str, TaskStatus, str, str], None]  # id, status, message, title


class Records:
    def __init__(
        self, run_dir: Path, state: ExecuteWaveState, tasks_file: TaskFile, emit: ItemListener
    ) -> None:
        self.run_dir = run_dir
        self.state = state
        self.tasks_file = tasks_file
        self.emit = emit
        self.lock = threading.RLock()

    def set(self, task_id: str, status: TaskStatus, message: str, **values: Any) -> None:
        """`values`: tasks.json keys (a None removes one), and the record's `files`, `total`,
        `scores`, `warnings` and `commit`."""
        with self.lock:
            record = self.state.tasks[task_id]
            record.status = str(status)
            if status in (TaskStatus.FAILED, TaskStatus.ROLLED_BACK, TaskStatus.SKIPPED):
                record.reason = str(values.get("lastError") or record.reason)
            if "files" in values:
                record.files = list(values.pop("files"))
            for name in (*_RECORD_ONLY, "commit"):
                if name in values:
                    setattr(record, name, values[name])
            disk = {key: value for key, value in values.items() if key not in _RECORD_ONLY}
            if isinstance(disk.get("lastError"), str):  # it may quote a command's output
                disk["lastError"] = record.reason = mask_text(disk["lastError"])
            if "scores" in values:
                disk |= {"bestScore": values["total"], "bestScoresJSON": values["scores"]}
            disk["status"] = ON_DISK.get(status, "in_progress")
            self.tasks_file.update(task_id, **disk)
            self.save()
        self.emit(task_id, status, message, record.name)

    def attempt(self, task_id: str, attempts: int, best_total: int) -> None:
        with self.lock:
            self.state.tasks[task_id].attempts = attempts
            self.tasks_file.update(task_id, retryCount=attempts, bestScore=best_total)
            self.save()

    def put_back(self, task_id: str, paths: list[str]) -> None:
        """The files its executor changed outside the task's files, which were put back."""
        with self.lock:
            self.state.tasks[task_id].put_back = list(paths)
            self.save()

    def save(self) -> None:
        with self.lock:
            save_state(self.run_dir, self.state)

    def keep(self, path: Path, name: str) -> None:
        """A copy of a role's result file in the run's `context/` (masked), if it wrote one."""
        if path.is_file():
            target = self.run_dir / "context" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8", errors="replace")
            target.write_text(mask_text(text), encoding="utf-8")

    def scratch(self, name: str) -> Path:
        path = self.run_dir / "scratch" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


__all__ = ["ON_DISK", "Records"]
