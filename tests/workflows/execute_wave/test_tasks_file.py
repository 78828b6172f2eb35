"""tasks.json written back: one task's keys at a time, every other key and task left as it was."""

from __future__ import annotations

import json
from pathlib import Path

from fixloop.workflows.execute_wave.tasks_file import TaskFile


def test_task_file_updates_keep_other_keys_and_remove_on_none(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": [{"id": 1, "name": "a", "custom": [1]}], "maxRetries": 2}))
    tasks = TaskFile(path)
    tasks.update("1", status="failed", lastError="x")
    tasks.update("1", lastError=None, status="pending")
    assert json.loads(path.read_text()) == {
        "tasks": [{"id": 1, "name": "a", "custom": [1], "status": "pending"}],
        "maxRetries": 2,
    }
