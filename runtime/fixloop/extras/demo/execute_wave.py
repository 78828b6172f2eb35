"""The demo's wave: a tiny `calc` package and a plan of three tasks in two waves, by execute-wave.

Wave 1: task 1 (multiply) passes its review at once; task 2 (safe division) scores under the
threshold, and the fix loop's first attempt makes it pass. Wave 2: task 3 (power, after task 1)
keeps failing its review, so after its fix attempts its file is rolled back and it fails, named.
Everything is real but the model: the task worktrees, the merges by id, the recomputed scores,
the checkpoints, the per-file rollback and the one commit a wave.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from fixloop.agents.backend import Backend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.workflows.execute_wave import ExecuteWaveOptions, ExecuteWaveResult, run_execute_wave
from fixloop.workflows.execute_wave.scoring import LOGIC_WEIGHTS
from fixloop.workflows.kernel.workflow import Context

FILES = {
    "README.md": "# calc\n\nThe fixloop demo's wave example: a tiny arithmetic package.\n",
    "calc/__init__.py": '"""calc: arithmetic helpers."""\n',
    "calc/ops.py": '"""Arithmetic."""\n\n\ndef add(a, b):\n    return a + b\n',
}
TASKS: dict[str, Any] = {
    "tasks": [
        {
            "id": 1,
            "name": "multiply",
            "description": "calc/mul.py: mul(a, b)",
            "acceptanceCriteria": ["mul(2, 3) == 6"],
        },
        {
            "id": 2,
            "name": "safe division",
            "description": "calc/div.py: div(a, b)",
            "acceptanceCriteria": ["div(1, 0) returns None instead of raising"],
        },
        {
            "id": 3,
            "name": "power",
            "dependsOn": [1],
            "description": "calc/power.py: power(a, n)",
            "acceptanceCriteria": ["power(2, 10) == 1024 without floats"],
        },
    ],
    "maxRetries": 2,
}


def _impl(task_id: int, path: str, text: str) -> dict[str, Any]:
    result = {"id": task_id, "status": "done", "filesModified": [path], "notes": "implemented"}
    return {
        "edits": [
            {"path": path, "content": text},
            {"path": f".fixloop/context/impl-result-{task_id}.json", "content": json.dumps(result)},
        ],
        "output": result,
    }


def _review(task_id: int, value: float, analysis: str = "", **low: float) -> dict[str, Any]:
    scores = {dimension: low.get(dimension, value) for dimension in LOGIC_WEIGHTS}
    body = {"taskId": task_id, "scores": scores, "analysis": analysis, "findings": []}
    return {
        "edits": [
            {"path": f".fixloop/context/review-result-{task_id}.json", "content": json.dumps(body)}
        ],
        "output": {"schema_version": "v1", "findings": [], "checks_run": ["scored the task"]},
    }


def _fix(path: str, text: str, summary: str) -> dict[str, Any]:
    return {
        "edits": [{"path": path, "content": text}],
        "output": {"files_changed": [path], "summary": summary},
    }


EXECUTE_WAVE_SCRIPT: dict[str, Any] = {
    "executor/1/implement": _impl(1, "calc/mul.py", "def mul(a, b):\n    return a * b\n"),
    "reviewer/1/verify": _review(1, 9),
    "executor/2/implement": _impl(2, "calc/div.py", "def div(a, b):\n    return a / b\n"),
    "reviewer/2/verify": _review(
        2, 8, "error_handling 3: div(1, 0) raises ZeroDivisionError", error_handling=3
    ),
    "fixer/2/attempt-1": _fix(
        "calc/div.py",
        "def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n",
        "fixed: div returns None for a zero divisor",
    ),
    "reviewer/2/attempt-1": _review(2, 9),
    "executor/3/implement": _impl(
        3, "calc/power.py", "def power(a, n):\n    return a ** float(n)\n"
    ),
    "reviewer/3/verify": _review(3, 6, "correctness 3: returns floats", correctness=3),
    "fixer/3/attempt-1": _fix(
        "calc/power.py", "def power(a, n):\n    return float(a) ** n\n", "fixed: still floats"
    ),
    "reviewer/3/attempt-1": _review(3, 6, "correctness 3: still floats", correctness=3),
    "fixer/3/attempt-2": _fix(
        "calc/power.py", "def power(a, n):\n    return pow(a, n, None) * 1.0\n", "fixed: pow"
    ),
    "reviewer/3/attempt-2": _review(3, 5, "correctness 2: floats again", correctness=2),
}


def build_wave_example(repo: Path) -> Path:
    """The example repository, committed, and its plan (outside it); returns tasks.json."""
    repo.mkdir(parents=True)
    for name, text in FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    for argv in (
        ["init", "--quiet", "--initial-branch=main"],
        ["add", "."],
        [
            "-c",
            "user.name=fixloop demo",
            "-c",
            "user.email=demo@fixloop.invalid",
            "commit",
            "--quiet",
            "-m",
            "calc: add",
        ],
    ):
        subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True)
    tasks = repo.parent / "tasks.json"
    tasks.write_text(json.dumps(TASKS, indent=2) + "\n", encoding="utf-8")
    return tasks


def run_wave_demo(
    tasks: Path, repo: Path, pack: Pack, backend: Backend, events: EventStream
) -> ExecuteWaveResult:
    options = ExecuteWaveOptions(tasks=tasks, repo=repo, parallel=2)
    return run_execute_wave(options, Context(pack, backend, events))


def check_wave(result: ExecuteWaveResult, repo: Path) -> list[str]:
    """The wave's promises, checked against the repository: what passed is on main, what
    failed is not, and tasks.json says so."""
    problems: list[str] = []
    tracked = set(
        subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", "main"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    )
    for task in result.tasks:
        present = [path for path in task.files if path in tracked]
        if task.passed and len(present) != len(task.files):
            problems.append(f"task {task.id} passed but its files are not all on main")
        if not task.passed and present:
            problems.append(f"task {task.id} failed but {', '.join(present)} reached main")
    if not result.fast_forwarded:
        problems.append("execute-wave did not fast-forward main")
    return problems


def wave_summary_lines(result: ExecuteWaveResult) -> list[str]:
    passed = [task for task in result.tasks if task.passed]
    lines = [
        f"execute-wave  {len(passed)} of {len(result.tasks)} task(s) committed in "
        f"{len(result.waves)} wave(s)"
    ]
    for task in result.tasks:
        attempts = f", {task.attempts} fix attempt(s)" if task.attempts else ""
        outcome = f"committed {task.commit}" if task.passed else f"{task.status}: {task.reason}"
        lines.append(
            f"                task {task.id} (wave {task.wave}, score {task.total}"
            f"{attempts}): {outcome}"
        )
    return lines


__all__ = [
    "EXECUTE_WAVE_SCRIPT",
    "TASKS",
    "build_wave_example",
    "check_wave",
    "run_wave_demo",
    "wave_summary_lines",
]
