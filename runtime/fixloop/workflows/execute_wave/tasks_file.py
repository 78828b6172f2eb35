"""tasks.json on disk: the run writes each task's status and records back as they change.

Every loop variable a person or the next wave reads lives in this file, written whole and
atomically (a temporary file, then a rename), from any thread.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class TaskFile:
    """tasks.json on disk: statuses and records written back whole (temp file, then rename).

    Each update reads the file fresh and changes only the named task's keys, so the file always
    holds every task's latest state; a lock keeps parallel executors' updates whole."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> dict[str, dict[str, Any]]:
        """Task id → the task as it is on disk now."""
        data = json.loads(self.path.read_text(encoding="utf-8"))
        tasks = data if isinstance(data, list) else data["tasks"]
        return {str(task["id"]): task for task in tasks}

    def update(self, task_id: str, **values: Any) -> None:
        """Set keys of one task (a value of None removes the key)."""
        self.update_many({task_id: values})

    def update_many(self, changes: Mapping[str, Mapping[str, Any]]) -> None:
        with self._lock:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            tasks = data if isinstance(data, list) else data["tasks"]
            for task in tasks:
                for key, value in changes.get(str(task["id"]), {}).items():
                    if value is None:
                        task.pop(key, None)
                    else:
                        task[key] = value
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
            temporary.replace(self.path)


__all__ = ["TaskFile"]
