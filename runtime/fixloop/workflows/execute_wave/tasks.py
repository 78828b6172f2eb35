"""tasks.json: the tasks of the waves, checked whole before anything changes, and their statuses.

The file is a JSON list of tasks, or an object `{"tasks": [...], <settings>}` whose settings are
the configuration keys (`maxRetries`, `devServerCommand`, `backpressureCommand`,
`verifyThreshold`, `reviewThreshold`, `dimensionThreshold`, `scoreDropTolerance`,
`maxParallelBrowsers`). A task is an object with at least `id` and `name`; the keys fixloop reads:

    id                an integer, or a name of letters, digits, `_` and `-` (it names branches)
    name              what the task is called
    dependsOn         ids of tasks that must be done first
    status            pending | in_progress | done | failed | skipped (written back by the run)
    filesModified     repository paths the task changes (written back from git after the merge)
    figmaUrl          a Figma design: the task is a design task
    referenceImage    a repository path of a reference picture: the task is a design task too
    route             the page of a design task (`/login`), appended to the dev server's URL
    wave              optional: a wave later than its dependencies put it in

Every other key (description, acceptanceCriteria, techNotes, ...) is handed to the roles as is.
Waves come from the dependencies: a task without any is in wave 1, any other one wave after its
latest dependency. Bad input (a cycle, an unknown dependency, a duplicate id, a path outside the
repository, a wrong type) is ONE line naming the task and the key, exit 2, before anything is
touched. `tasks_file.TaskFile` writes the statuses back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.files import UnreadableFile, load_json, read_text
from fixloop.steps.paths import path_problem
from fixloop.workflows.execute_wave.config_file import read_config

STATUSES = ("pending", "in_progress", "done", "failed", "skipped")
FINISHED = ("done", "failed", "skipped")
DESIGN, LOGIC = "design", "logic"
# What a run writes into a task: not part of what the plan asks for (see `TaskPlan.digest`).
RUN_FIELDS = frozenset(
    {
        "status",
        "lastError",
        "startedAt",
        "completedAt",
        "executorFinishedAt",
        "retryCount",
        "bestScore",
        "bestScoresJSON",
        "scores",
        "verifyPassed",
        "filesModified",
        "commit",
    }
)
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class WaveSettings:
    """The configuration keys, as users write them, with their defaults."""

    maxRetries: int = 5
    devServerCommand: str = ""
    backpressureCommand: str = ""
    verifyThreshold: float = 80.0
    reviewThreshold: float = 80.0
    dimensionThreshold: float = 6.0
    scoreDropTolerance: float = 3.0
    maxParallelBrowsers: int = 3

    def threshold(self, kind: str) -> float:
        return self.verifyThreshold if kind == DESIGN else self.reviewThreshold


_SETTING_LIMITS: dict[str, tuple[float, float]] = {
    "maxRetries": (0, 50),
    "verifyThreshold": (0, 100),
    "reviewThreshold": (0, 100),
    "dimensionThreshold": (0, 10),
    "scoreDropTolerance": (0, 100),
    "maxParallelBrowsers": (1, 64),
}


@dataclass(frozen=True)
class Task:
    id: str  # the id as text: `3` and `"3"` are the same task
    name: str
    depends_on: tuple[str, ...]
    wave: int
    kind: str  # DESIGN or LOGIC
    files: tuple[str, ...]  # filesModified as the plan declares them (checked paths)
    route: str = ""
    figma_url: str = ""
    reference_image: str = ""
    status: str = "pending"
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def is_design(self) -> bool:
        return self.kind == DESIGN

    def brief(self) -> dict[str, Any]:
        """The task as the roles receive it: the plan's own keys, without the run's records."""
        return {key: value for key, value in self.raw.items() if key not in RUN_FIELDS}


@dataclass(frozen=True)
class TaskPlan:
    path: Path
    shown: str
    tasks: tuple[Task, ...]  # in file order
    settings: WaveSettings
    digest: str  # what the plan asks for; resuming needs the same plan

    @property
    def raw_ids(self) -> dict[str, int | str]:
        """Each task's id as tasks.json writes it (3, or "a-1"), by its id as text."""
        return {task.id: task.raw["id"] for task in self.tasks}

    def task(self, task_id: str) -> Task:
        return next(task for task in self.tasks if task.id == task_id)

    def waves(self) -> dict[int, list[Task]]:
        """Wave number → its tasks in ascending id order (numbers before names)."""
        grouped: dict[int, list[Task]] = {}
        for task in self.tasks:
            grouped.setdefault(task.wave, []).append(task)
        return {wave: sorted(grouped[wave], key=id_order) for wave in sorted(grouped)}


def id_order(task: Task | str) -> tuple[int, int, str]:
    """Ascending task id: integers numerically first, then names."""
    text = task.id if isinstance(task, Task) else task
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


class _Refuse:
    """Builds the one-line error for a problem at a task's key."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def __call__(self, where: str, key: str, message: str) -> FixloopError:
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        return FixloopError(Diagnostic(self.shown, 1, 1, "tasks", text))


def load_plan(path: Path, repo: Path) -> TaskPlan:
    """Read and check tasks.json completely; FixloopError (exit 2) naming task and key if bad."""
    shown = display_path(path)
    refuse = _Refuse(shown)
    try:
        text = read_text(path)
    except UnreadableFile as exc:
        raise refuse("tasks.json", "", str(exc)) from None
    except OSError as exc:
        raise refuse("tasks.json", "", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise refuse("tasks.json", "", "not UTF-8 text") from None
    try:
        data = load_json(text)
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON: {exc.msg}"
        raise FixloopError(Diagnostic(shown, exc.lineno, exc.colno, "tasks", problem)) from None
    raw_tasks, settings = _split(data, refuse, *read_config(path))
    tasks = _check_tasks(raw_tasks, repo.resolve(), refuse)
    waves = _waves(tasks, refuse)
    plan_tasks = tuple(
        Task(
            id=task_id,
            name=raw["name"],
            depends_on=tuple(_ids(raw.get("dependsOn"))),
            wave=waves[task_id],
            kind=DESIGN if _design(raw) else LOGIC,
            files=tuple(raw.get("filesModified") or ()),
            route=raw.get("route") or "",
            figma_url=raw.get("figmaUrl") or "",
            reference_image=raw.get("referenceImage") or "",
            status=raw.get("status") or "pending",
            raw=raw,
        )
        for task_id, raw in tasks.items()
    )
    return TaskPlan(path.resolve(), shown, plan_tasks, settings, plan_digest(raw_tasks, settings))


def plan_digest(raw_tasks: Iterable[Mapping[str, Any]], settings: WaveSettings) -> str:
    """sha256 of what the plan asks for: the tasks without what runs write into them."""
    asked = [{k: v for k, v in raw.items() if k not in RUN_FIELDS} for raw in raw_tasks]
    text = json.dumps({"tasks": asked, "settings": settings.__dict__}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _split(
    data: Any, refuse: _Refuse, config_shown: str = "", config: Mapping[str, Any] | None = None
) -> tuple[list[Any], WaveSettings]:
    """The tasks, and the settings: `config.jsonc`'s (`config_file.py`), then tasks.json's."""
    known = {f.name: f for f in fields(WaveSettings)}
    values: dict[str, Any] = {}
    for key, value in (config or {}).items():
        if key in known:  # the file's other keys are fe-harness's own
            values[key] = _setting(key, value, str(known[key].type), _Refuse(config_shown))
    if isinstance(data, list):
        return data, WaveSettings(**values)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise refuse("tasks.json", "", 'expected a list of tasks or {"tasks": [...]}')
    for key, value in data.items():
        if key == "tasks":
            continue
        if key not in known:
            raise refuse("tasks.json", key, "not a setting (" + ", ".join(known) + ")")
        values[key] = _setting(key, value, str(known[key].type), refuse)
    return data["tasks"], WaveSettings(**values)


def _setting(key: str, value: Any, wanted: str, refuse: _Refuse) -> Any:
    if wanted == "str":
        if not isinstance(value, str):
            raise refuse("settings", key, f"expected a string, got {_kind(value)}")
        return value
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or (wanted == "int" and not isinstance(value, int)):
        expected = "an integer" if wanted == "int" else "a number"
        raise refuse("settings", key, f"expected {expected}, got {_kind(value)}")
    low, high = _SETTING_LIMITS[key]
    if not low <= value <= high:
        raise refuse("settings", key, f"{value} is out of range ({low:g} to {high:g})")
    return value


def _check_tasks(raw_tasks: list[Any], repo: Path, refuse: _Refuse) -> dict[str, dict[str, Any]]:
    tasks: dict[str, dict[str, Any]] = {}
    for index, raw in enumerate(raw_tasks, start=1):
        where = f"task #{index}"
        if not isinstance(raw, dict):
            raise refuse(where, "", f"expected an object, got {_kind(raw)}")
        task_id = _task_id(raw.get("id"), where, refuse)
        where = f"task {task_id}"
        if task_id in tasks:
            raise refuse(where, "id", "used by an earlier task too")
        for check in _CHECKS:
            check(raw, where, repo, refuse)
        tasks[task_id] = raw
    for task_id, raw in tasks.items():
        for dependency in _ids(raw.get("dependsOn")):
            if dependency not in tasks:
                raise refuse(f"task {task_id}", "dependsOn", f"no task has the id {dependency}")
    return tasks


def _task_id(value: Any, where: str, refuse: _Refuse) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    if isinstance(value, str) and _TASK_ID.match(value):
        return value
    if value is None:
        raise refuse(where, "id", "missing")
    raise refuse(
        where, "id", f"{value!r}: expected a number or a name of letters, digits, '_' and '-'"
    )


def _ids(value: Any) -> list[str]:
    return [str(item) for item in value or []]


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _check_name(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise refuse(where, "name", f"expected a non-empty string, got {_kind(name)}")


def _check_depends_on(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    value = raw.get("dependsOn")
    if value is None:
        return
    if not isinstance(value, list):
        raise refuse(where, "dependsOn", f"expected a list of task ids, got {_kind(value)}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise refuse(where, "dependsOn", f"{item!r} is not a task id")


def _check_status(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    value = raw.get("status")
    if value is not None and value not in STATUSES:
        raise refuse(where, "status", f"{value!r} is not one of {', '.join(STATUSES)}")


def _check_files(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    value = raw.get("filesModified")
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise refuse(where, "filesModified", f"expected a list of paths, got {_kind(value)}")
    for item in value:
        problem = path_problem(repo, item)
        if problem is not None:
            raise refuse(where, "filesModified", problem)


def _check_strings(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    for key in ("figmaUrl", "route", "figmaFileKey", "figmaNodeId"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise refuse(where, key, f"expected a string, got {_kind(value)}")
    for key in ("description", "acceptanceCriteria", "techNotes"):
        value = raw.get(key)
        if value is None or isinstance(value, str):
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise refuse(where, key, f"expected a string or a list of strings, got {_kind(value)}")


def _check_reference(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    value = raw.get("referenceImage")
    if value is None:
        return
    if not isinstance(value, str):
        raise refuse(where, "referenceImage", f"expected a path, got {_kind(value)}")
    problem = path_problem(repo, value)
    if problem is None and not (repo / value).is_file():
        problem = f"{value!r}: no such file in the repository"
    if problem is not None:
        raise refuse(where, "referenceImage", problem)


def _check_wave(raw: dict[str, Any], where: str, repo: Path, refuse: _Refuse) -> None:
    value = raw.get("wave")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise refuse(where, "wave", f"expected a wave number (1 or more), got {value!r}")


_CHECKS: tuple[Callable[[dict[str, Any], str, Path, _Refuse], None], ...] = (
    _check_name,
    _check_depends_on,
    _check_status,
    _check_files,
    _check_strings,
    _check_reference,
    _check_wave,
)


def _design(raw: Mapping[str, Any]) -> bool:
    return bool(raw.get("figmaUrl") or raw.get("referenceImage"))


def _waves(tasks: dict[str, dict[str, Any]], refuse: _Refuse) -> dict[str, int]:
    """Each task's wave: one after its latest dependency (or its own later `wave`)."""
    waves: dict[str, int] = {}

    def visit(task_id: str, path: list[str]) -> int:
        if task_id in waves:
            return waves[task_id]
        if task_id in path:
            cycle = " -> ".join([*path[path.index(task_id) :], task_id])
            raise refuse(f"task {path[-1]}", "dependsOn", f"a cycle: {cycle}")
        raw = tasks[task_id]
        after = [visit(dependency, [*path, task_id]) for dependency in _ids(raw.get("dependsOn"))]
        earliest = 1 + max(after, default=0)
        asked = raw.get("wave")
        if asked is not None and asked < earliest:
            raise refuse(
                f"task {task_id}",
                "wave",
                f"{asked} is not after its dependencies (wave {earliest})",
            )
        waves[task_id] = max(earliest, asked or 1)
        return waves[task_id]

    for task_id in tasks:
        visit(task_id, [])
    return waves


__all__ = [
    "DESIGN",
    "FINISHED",
    "LOGIC",
    "RUN_FIELDS",
    "STATUSES",
    "Task",
    "TaskPlan",
    "WaveSettings",
    "id_order",
    "load_plan",
    "plan_digest",
]
