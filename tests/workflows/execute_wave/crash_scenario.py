"""The wave run the crash matrix and the resume tests kill: two waves that take every git path.

Wave 1: task 1 passes; task 2 conflicts with task 1 (its merge is aborted); task 3 fails its
verification, its fix attempt regresses (rolled back to its checkpoint) and it is rolled back
from the baseline. Wave 2: task 4, after task 1, passes on its first fix attempt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.workflows.execute_wave.scripts import fix, implement, score, scores

ADD = "def add(a, b):\n    return a + b\n"
TASKS: dict[str, Any] = {
    "tasks": [
        {"id": 1, "name": "fix add", "filesModified": ["src/app.py"]},
        {"id": 2, "name": "fix add too", "filesModified": ["src/app.py"]},
        {"id": 3, "name": "sub"},
        {"id": 4, "name": "use add", "dependsOn": [1]},
    ],
    "maxRetries": 1,
    "backpressureCommand": "true",
}
SCRIPT: dict[str, Any] = {
    "executor/1/implement": implement(1, {"src/app.py": ADD}),
    "executor/2/implement": implement(2, {"src/app.py": "def add(a, b):\n    return b + a\n"}),
    "executor/3/implement": implement(3, {"src/sub.py": "def sub(a, b):\n    return a + b\n"}),
    "reviewer/1/verify": score(1, scores("logic", 9)),
    "reviewer/3/verify": score(3, scores("logic", 7, correctness=5)),
    "fixer/3/attempt-1": fix({"src/sub.py": "broken\n"}),
    "reviewer/3/attempt-1": score(3, scores("logic", 2)),
    "executor/4/implement": implement(4, {"src/use.py": "from src.app import add\n"}),
    "reviewer/4/verify": score(4, scores("logic", 6)),
    "fixer/4/attempt-1": fix({"src/use.py": "from src.app import add\n\nTWO = add(1, 1)\n"}),
    "reviewer/4/attempt-1": score(4, scores("logic", 9)),
}
EXPECTED = {"1": "committed", "2": "rolled-back", "3": "rolled-back", "4": "committed"}


def write(folder: Path) -> tuple[Path, Path]:
    """tasks.json (outside the repository) and the script, into `folder`."""
    tasks, script = folder / "tasks.json", folder / "script.json"
    tasks.write_text(json.dumps(TASKS, indent=2), encoding="utf-8")
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return tasks, script
