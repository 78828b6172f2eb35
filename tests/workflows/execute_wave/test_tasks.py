"""tasks.json: waves from dependencies, and bad input as ONE line naming the task and the key."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo

from fixloop.diagnostics import FixloopError
from fixloop.workflows.execute_wave.tasks import load_plan
from fixloop.workflows.execute_wave.tasks_file import TaskFile

OK_TASK = {"id": 1, "name": "one"}

# (case, tasks.json content, the one line's message after `tasks.json:1:1: tasks: `)
BAD = [
    (
        "a cycle",
        [{"id": 1, "name": "a", "dependsOn": [2]}, {"id": 2, "name": "b", "dependsOn": [1]}],
        "task 2: dependsOn: a cycle: 1 -> 2 -> 1",
    ),
    (
        "a task depending on itself",
        [{"id": "x", "name": "x", "dependsOn": ["x"]}],
        "task x: dependsOn: a cycle: x -> x",
    ),
    (
        "an unknown dependency",
        [OK_TASK, {"id": 2, "name": "b", "dependsOn": [7]}],
        "task 2: dependsOn: no task has the id 7",
    ),
    (
        "a duplicate id",
        [OK_TASK, {"id": "1", "name": "again"}],
        "task 1: id: used by an earlier task too",
    ),
    ("a missing id", [{"name": "anonymous"}], "task #1: id: missing"),
    (
        "an id that cannot name a branch",
        [{"id": "a b", "name": "x"}],
        "task #1: id: 'a b': expected a number or a name of letters, digits, '_' and '-'",
    ),
    (
        "a boolean id",
        [{"id": True, "name": "x"}],
        "task #1: id: True: expected a number or a name of letters, digits, '_' and '-'",
    ),
    ("no name", [{"id": 1}], "task 1: name: expected a non-empty string, got null"),
    (
        "dependsOn not a list",
        [{"id": 1, "name": "a", "dependsOn": 2}],
        "task 1: dependsOn: expected a list of task ids, got a number",
    ),
    (
        "an absolute path",
        [{"id": 1, "name": "a", "filesModified": ["/etc/passwd"]}],
        "task 1: filesModified: '/etc/passwd': absolute paths are refused; name files relative to "
        "the repository",
    ),
    (
        "a path with ..",
        [{"id": 1, "name": "a", "filesModified": ["../other/x.py"]}],
        "task 1: filesModified: '../other/x.py': '..' could leave the repository",
    ),
    (
        "a path into .git",
        [{"id": 1, "name": "a", "filesModified": [".git/config"]}],
        "task 1: filesModified: '.git/config': paths inside .git are refused",
    ),
    (
        "filesModified not paths",
        [{"id": 1, "name": "a", "filesModified": "src/a.py"}],
        "task 1: filesModified: expected a list of paths, got a string",
    ),
    (
        "an unknown status",
        [{"id": 1, "name": "a", "status": "halfway"}],
        "task 1: status: 'halfway' is not one of pending, in_progress, done, failed, skipped",
    ),
    (
        "a wave before its dependency",
        [OK_TASK, {"id": 2, "name": "b", "dependsOn": [1], "wave": 1}],
        "task 2: wave: 1 is not after its dependencies (wave 2)",
    ),
    (
        "acceptanceCriteria of the wrong type",
        [{"id": 1, "name": "a", "acceptanceCriteria": 3}],
        "task 1: acceptanceCriteria: expected a string or a list of strings, got a number",
    ),
    (
        "a missing reference image",
        [{"id": 1, "name": "a", "referenceImage": "ref/none.png"}],
        "task 1: referenceImage: 'ref/none.png': no such file in the repository",
    ),
    ("not a list", {"todo": []}, 'tasks.json: expected a list of tasks or {"tasks": [...]}'),
    (
        "an unknown setting",
        {"tasks": [OK_TASK], "maxRetry": 3},
        "tasks.json: maxRetry: not a setting (maxRetries, devServerCommand, backpressureCommand, "
        "verifyThreshold, reviewThreshold, dimensionThreshold, scoreDropTolerance, "
        "maxParallelBrowsers)",
    ),
    (
        "a setting of the wrong type",
        {"tasks": [OK_TASK], "maxRetries": "3"},
        "settings: maxRetries: expected an integer, got a string",
    ),
    (
        "a setting out of range",
        {"tasks": [OK_TASK], "maxParallelBrowsers": 0},
        "settings: maxParallelBrowsers: 0 is out of range (1 to 64)",
    ),
]


@pytest.mark.parametrize(("content", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_is_one_line_naming_the_task_and_key(
    user_repo: UserRepo, content: Any, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(content))
    with pytest.raises(FixloopError) as caught:
        load_plan(path, user_repo.path)
    (diagnostic,) = caught.value.diagnostics
    assert caught.value.exit_code == 2
    assert (diagnostic.rule, diagnostic.message) == ("tasks", message)


def test_a_symlink_out_of_the_repository_is_refused(user_repo: UserRepo, tmp_path: Path) -> None:
    (user_repo.path / "out").symlink_to(tmp_path)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": 1, "name": "a", "filesModified": ["out/x.py"]}]))
    with pytest.raises(FixloopError) as caught:
        load_plan(path, user_repo.path)
    assert "filesModified: 'out/x.py': passes through the symbolic link out" in str(caught.value)


def test_invalid_json_names_its_line(user_repo: UserRepo, tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('[\n  {"id": 1,\n   "name": }\n]')
    with pytest.raises(FixloopError) as caught:
        load_plan(path, user_repo.path)
    assert caught.value.diagnostics[0].line == 3


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _device(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (_fifo, "a FIFO, not a regular file; not read"),
        (_device, "a character device, not a regular file; not read"),
    ],
)
def test_a_fifo_or_a_device_is_refused_unread(
    user_repo: UserRepo, tmp_path: Path, make: Callable[[Path], Path], problem: str
) -> None:
    # A plain open of the FIFO would wait for a writer for ever; /dev/zero would never end.
    path = make(tmp_path / "tasks.json")
    with pytest.raises(FixloopError) as caught:
        load_plan(path, user_repo.path)
    assert caught.value.diagnostics[0].format().endswith(f"tasks: tasks.json: {problem}")


def test_deep_nesting_is_one_located_line_not_an_internal_error(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(FixloopError) as caught:
        load_plan(path, user_repo.path)
    problem = caught.value.diagnostics[0]
    assert (problem.line, problem.col) == (1, 65)
    assert "invalid JSON: nested deeper than 64 levels" in problem.format()


def test_waves_come_from_dependencies_and_design_from_a_reference(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    (user_repo.path / "ref.png").write_bytes(b"\x89PNG")
    tasks = [
        {"id": 10, "name": "later", "dependsOn": [2, "b"]},
        {"id": 2, "name": "base"},
        {"id": "b", "name": "page", "dependsOn": [2], "referenceImage": "ref.png"},
        {"id": 3, "name": "design", "figmaUrl": "https://figma.com/x"},
        {"id": 4, "name": "pushed back", "wave": 3},
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps({"tasks": tasks, "maxRetries": 2}))
    plan = load_plan(path, user_repo.path)
    waves = {n: [t.id for t in tasks] for n, tasks in plan.waves().items()}
    assert waves == {1: ["2", "3"], 2: ["b"], 3: ["4", "10"]}
    kinds = {t.id: t.kind for t in plan.tasks}
    assert kinds == {"10": "logic", "2": "logic", "b": "design", "3": "design", "4": "logic"}
    assert plan.settings.maxRetries == 2


def test_the_plan_digest_ignores_what_a_run_writes(user_repo: UserRepo, tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([OK_TASK]))
    first = load_plan(path, user_repo.path).digest
    TaskFile(path).update("1", status="done", filesModified=["a.py"], bestScore=90)
    assert load_plan(path, user_repo.path).digest == first
    path.write_text(json.dumps([{**OK_TASK, "name": "renamed"}]))
    assert load_plan(path, user_repo.path).digest != first


def test_config_jsonc_beside_tasks_json_gives_its_settings_and_tasks_json_wins(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.jsonc").write_text(
        '{\n  // fe-harness keeps these here\n  "maxRetries": 2,\n  "reviewThreshold": 70,\n'
        '  /* not execute-wave\'s */ "feToolsPath": "/opt/fe/tools.js",\n}\n'
    )
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps({"tasks": [OK_TASK], "reviewThreshold": 90}))
    plan = load_plan(tasks, tmp_path)
    assert (plan.settings.maxRetries, plan.settings.reviewThreshold) == (2, 90)
    # What the run uses is in the plan's digest: a change of the config is a different plan.
    (tmp_path / "config.jsonc").write_text('{"maxRetries": 3}')
    assert load_plan(tasks, tmp_path).digest != plan.digest


def test_a_config_jsonc_that_does_not_parse_is_one_located_line(tmp_path: Path) -> None:
    (tmp_path / "config.jsonc").write_text('{\n  "maxRetries": 2,\n  "x": }\n')
    (tmp_path / "tasks.json").write_text(json.dumps([OK_TASK]))
    with pytest.raises(FixloopError) as raised:
        load_plan(tmp_path / "tasks.json", tmp_path)
    [line] = str(raised.value).splitlines()
    assert line.startswith(f"{tmp_path / 'config.jsonc'}:3:8: config: invalid JSON with comments")


def test_a_bad_setting_in_config_jsonc_names_the_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "config.jsonc").write_text('{"maxRetries": "many"}')
    (tmp_path / "tasks.json").write_text(json.dumps([OK_TASK]))
    with pytest.raises(FixloopError) as raised:
        load_plan(tmp_path / "tasks.json", tmp_path)
    assert str(raised.value) == (
        f"{tmp_path / 'config.jsonc'}:1:1: tasks: settings: maxRetries: expected an integer, "
        "got a string"
    )
