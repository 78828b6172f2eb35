"""execute-wave end to end: real git, real worktrees, real document steps, a scripted model."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import fix, implement, score, scores

from fixloop.agents.backend import AgentRequest
from fixloop.events import EventKind

MUL = "def mul(a, b):\n    return a * b\n"
DIV = "def div(a, b):\n    return a / b\n"
SAFE_DIV = "def div(a, b):\n    return a / b if b else 0\n"
TASKS = [
    {
        "id": 1,
        "name": "add mul",
        "description": "multiply",
        "acceptanceCriteria": ["mul(2, 3) is 6"],
    },
    {"id": 2, "name": "add div", "dependsOn": []},
    {"id": 3, "name": "use both", "dependsOn": [1, 2]},
]


def test_two_waves_merge_verify_fix_and_commit_exactly_the_passed_files(wave: Wave) -> None:
    before = wave.repo.user_work()
    old_tip = wave.repo.head()
    wave.write_tasks(TASKS)
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": MUL}),
        "executor/2/implement": implement(2, {"src/div.py": DIV}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
        "reviewer/2/verify": score(2, scores("logic", 5), analysis="division by zero"),
        "fixer/2/attempt-1": fix({"src/div.py": SAFE_DIV}),
        "reviewer/2/attempt-1": score(2, scores("logic", 8)),
        "executor/3/implement": implement(3, {"src/both.py": "from src.mul import mul\n"}),
        "reviewer/3/verify": score(3, scores("logic", 3)),
    }
    result = wave.run(script, parallel=2)

    assert wave.backend is not None and wave.backend.unplayed() == []
    assert {t.id: t.status for t in result.tasks} == {
        "1": "committed",
        "2": "committed",
        "3": "rolled-back",
    }
    assert result.exit_code == 1 and result.fast_forwarded
    # The user's branch fast-forwarded; their staged, unstaged and untracked work is untouched.
    assert wave.repo.git("merge-base", "--is-ancestor", old_tip, "main", check=False) == ""
    assert wave.repo.user_work() == before
    assert wave.file("src/mul.py") == MUL
    assert wave.file("src/div.py") == SAFE_DIV  # the fix loop's version was committed
    assert wave.file("src/both.py") is None  # the failed task was rolled back
    subjects = wave.repo.git("log", "--format=%s", f"{old_tip}..main").splitlines()
    assert subjects[0] == "feat: implement wave 2 tasks (no task passed)"
    assert "feat: implement wave 1 tasks (add mul, add div)" in subjects
    assert subjects.count("merge: task #1 implementation") == 1
    wave_one = next(
        line
        for line in wave.repo.git("log", "--format=%H %s").splitlines()
        if line.endswith("(add mul, add div)")
    ).split()[0]
    assert wave.repo.git("show", "--name-only", "--format=", wave_one).split() == ["src/div.py"]
    # tasks.json on disk holds every status and the scores recomputed from the dimensions.
    on_disk = wave.tasks()
    assert [on_disk[i]["status"] for i in ("1", "2", "3")] == ["done", "done", "failed"]
    assert on_disk["2"]["bestScore"] == 80 and on_disk["2"]["retryCount"] == 1
    assert on_disk["3"]["lastError"] == "Exceeded max retries (5)"
    assert on_disk["1"]["filesModified"] == ["src/mul.py"]
    # When each executor returned, before its merge (and after the task started).
    for task_id in ("1", "2", "3"):
        assert on_disk[task_id]["startedAt"] <= on_disk[task_id]["executorFinishedAt"]
    assert wave.leftovers() == []
    results = Path(result.run_dir) / "context"
    first = json.loads((results / "wave-result-1.json").read_text())
    assert first == {
        "wave": 1,
        "passedIds": [1, 2],
        "failedIds": [],
        "skippedIds": [],
        "committed": True,
        "commitHash": first["commitHash"],
    }
    second = json.loads((results / "wave-result-2.json").read_text())
    assert (second["failedIds"], second["committed"]) == ([3], True)


def test_result_files_fail_closed_and_dependents_are_skipped_with_the_reason(wave: Wave) -> None:
    tasks = [
        {"id": 1, "name": "missing result"},
        {"id": 2, "name": "unparsable result"},
        {"id": 3, "name": "schema-invalid result"},
        {"id": 4, "name": "result about another task"},
        {"id": 5, "name": "reports failed"},
        {"id": 6, "name": "after 1", "dependsOn": [1]},
        {"id": 7, "name": "after 6", "dependsOn": [6]},
    ]
    wave.write_tasks(tasks)
    missing = implement(1, {"src/a.py": "a = 1\n"})
    missing["edits"].pop()  # the executor answers, but never writes its result file
    script = {
        "executor/1/implement": missing,
        "executor/2/implement": implement(2, {"src/b.py": "b\n"}, raw="{not json"),
        "executor/3/implement": implement(3, {"src/c.py": "c\n"}, raw='{"id": 3, "status": "ok"}'),
        "executor/4/implement": implement(
            4, {"src/d.py": "d\n"}, raw='{"id": 9, "status": "done"}'
        ),
        "executor/5/implement": implement(5, {"src/e.py": "e\n"}, status="failed"),
    }
    result = wave.run(script, parallel=3)

    reasons = {t.id: t.reason for t in result.tasks}
    assert reasons["1"].startswith("implementation result missing")
    assert reasons["2"].startswith("implementation result invalid")
    assert reasons["3"].startswith("implementation result invalid: status")
    assert reasons["4"] == "implementation result invalid: it is about task 9"
    assert reasons["5"].startswith("executor reported failed")
    assert reasons["6"] == "dependency 1 is failed"
    assert wave.statuses() == {
        "1": "failed",
        "2": "failed",
        "3": "failed",
        "4": "failed",
        "5": "failed",
        "6": "skipped",
        "7": "skipped",
    }
    assert wave.tasks()["7"]["lastError"] == "dependency 6 is skipped"
    assert all(wave.file(f"src/{name}.py") is None for name in "abcde")
    assert wave.leftovers() == []


def test_a_merge_conflict_fails_only_that_task_and_siblings_stay_merged(wave: Wave) -> None:
    app = ["src/app.py"]  # both tasks declare the file they change
    wave.write_tasks([{"id": n, "name": f"task {n}", "filesModified": app} for n in (1, 2, 3)])
    script = {
        "executor/1/implement": implement(1, {"src/app.py": "def add(a, b):\n    return a + b\n"}),
        "executor/2/implement": implement(2, {"src/app.py": "def add(a, b):\n    return b + a\n"}),
        "executor/3/implement": implement(3, {"src/extra.py": "x = 3\n"}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
        "reviewer/3/verify": score(3, scores("logic", 9)),
    }
    result = wave.run(script)

    statuses = {t.id: (t.status, t.reason) for t in result.tasks}
    assert statuses["1"] == ("committed", "")
    assert statuses["2"][0] == "rolled-back" and statuses["2"][1].startswith("merge conflict")
    assert statuses["3"] == ("committed", "")
    assert wave.file("src/app.py") == "def add(a, b):\n    return a + b\n"
    assert wave.file("src/extra.py") == "x = 3\n"
    assert wave.leftovers() == []


def test_scores_are_recomputed_never_trusted_and_a_missing_review_fails(wave: Wave) -> None:
    tasks: list[dict[str, object]] = [{"id": n, "name": f"task {n}"} for n in (1, 2, 3)]
    tasks.append({"id": 4, "name": "aliased keys", "filesModified": ["src/d.py"]})
    wave.write_tasks({"tasks": tasks, "maxRetries": 1})
    lying = {"taskId": 1, "scores": scores("logic", 5), "total": 99, "passed": True}
    aliased = {
        "Correctness": 9,
        "completeness": 9,
        "error-handling": 9,
        "codeQuality": 9,
        "types": 9,
        "integration": 9,
    }
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a\n"}),
        "executor/2/implement": implement(2, {"src/b.py": "b\n"}),
        "executor/3/implement": implement(3, {"src/c.py": "c\n"}),
        "executor/4/implement": implement(4, {"src/d.py": "d\n"}),
        "reviewer/1/verify": score(1, None, raw=json.dumps(lying)),
        "reviewer/2/verify": {"output": {"schema_version": "v1", "findings": [], "checks_run": []}},
        "reviewer/3/verify": score(3, scores("logic", 9, type_safety=5)),  # one dimension < 6
        "reviewer/4/verify": score(4, aliased),
    }
    result = wave.run(script, parallel=4)

    by_id = {t.id: t for t in result.tasks}
    assert (by_id["1"].total, by_id["1"].status) == (50, "rolled-back")
    assert (by_id["2"].total, by_id["2"].status) == (0, "rolled-back")
    assert any(
        "verification result file missing or invalid (MISSING_RESULT)" in w for w in result.warnings
    )
    assert (by_id["3"].total, by_id["3"].status) == (86, "rolled-back")  # 86 >= 80, still fails
    assert (by_id["4"].total, by_id["4"].status) == (90, "committed")
    assert 'key "types" mapped to "type_safety"' in by_id["4"].warnings
    assert [
        path for path in ("src/a.py", "src/b.py", "src/c.py", "src/d.py") if wave.file(path)
    ] == ["src/d.py"]


def test_a_task_is_in_progress_with_its_start_time_before_its_executor_runs(wave: Wave) -> None:
    wave.write_tasks([{"id": 1, "name": "first"}, {"id": 2, "name": "second", "dependsOn": [1]}])
    seen: dict[str, dict[str, dict[str, Any]]] = {}

    def watch(request: AgentRequest) -> None:
        if request.role == "executor":
            seen[request.key] = wave.tasks()  # tasks.json as the executor starts

    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a\n"}),
        "reviewer/1/verify": score(1, scores("logic", 10)),
        "executor/2/implement": implement(2, {"src/b.py": "b\n"}),
        "reviewer/2/verify": score(2, scores("logic", 10)),
    }
    result = wave.run(script, watch=watch)
    assert result.exit_code == 0, result.to_json()
    first, second = seen["executor/1/implement"], seen["executor/2/implement"]
    assert first["1"]["status"] == "in_progress" and "startedAt" in first["1"]
    assert first["2"].get("status", "pending") == "pending" and "startedAt" not in first["2"]
    assert second["2"]["status"] == "in_progress"
    assert second["2"]["startedAt"] >= first["1"]["startedAt"]  # ISO times sort as text
    datetime.fromisoformat(first["1"]["startedAt"])
    after = wave.tasks()
    assert after["1"]["startedAt"] == first["1"]["startedAt"] and after["1"]["status"] == "done"


def test_a_result_file_left_from_before_is_never_read_as_this_round_s(wave: Wave) -> None:
    """The attacks: the executor plants a passing review result for its own task; later a
    round's reviewer writes nothing, leaving the previous round's file in place."""
    planted = implement(1, {"src/a.py": "a\n"})
    perfect = score(1, scores("logic", 10))["edits"][0]
    planted["edits"].append(perfect)
    assert perfect["path"] == ".fixloop/context/review-result-1.json"
    silent = {"output": {"schema_version": "v1", "findings": [], "checks_run": []}}
    script = {
        "executor/1/implement": planted,
        "reviewer/1/verify": silent,
        "fixer/1/attempt-1": fix({"src/a.py": "a = 1\n"}),
        "reviewer/1/attempt-1": silent,
        "executor/2/implement": implement(2, {"src/b.py": "b\n"}),
        "reviewer/2/verify": score(2, scores("logic", 7, correctness=5)),  # 65: fails
        "fixer/2/attempt-1": fix({"src/b.py": "b = 1\n"}),
        "reviewer/2/attempt-1": silent,  # the verify round's file must not count again
    }
    wave.write_tasks(
        {"tasks": [{"id": 1, "name": "planted"}, {"id": 2, "name": "stale"}], "maxRetries": 1}
    )
    result = wave.run(script)
    by_id = {t.id: t for t in result.tasks}
    assert (by_id["1"].total, by_id["1"].status) == (0, "rolled-back")
    assert (by_id["2"].total, by_id["2"].status) == (65, "rolled-back")
    missing = [w for w in result.warnings if "missing or invalid (MISSING_RESULT)" in w]
    # task 2's is its second round's: had the first round's file been read again, no warning
    assert [w.split(":")[0] for w in missing] == ["task 1", "task 2"], missing
    assert wave.file("src/a.py") is None and wave.file("src/b.py") is None


def test_the_fix_loop_rolls_back_a_regression_to_its_checkpoint(wave: Wave) -> None:
    wave.write_tasks({"tasks": [{"id": 1, "name": "parser"}], "maxRetries": 3})
    # The third fix replaces `'second'` exactly once: it only applies to attempt 1's file, so it
    # proves that attempt 2's regression was rolled back to the checkpoint attempt 1 moved.
    third = {
        "edits": [{"path": "src/p.py", "old": "'second'", "new": "'second, better'"}],
        "output": {"files_changed": ["src/p.py"], "summary": "fixed: better"},
    }
    script = {
        "executor/1/implement": implement(1, {"src/p.py": "v = 'first'\n"}),
        "reviewer/1/verify": score(1, scores("logic", 7, correctness=5)),  # 65
        "fixer/1/attempt-1": fix({"src/p.py": "v = 'second'\n"}),
        "reviewer/1/attempt-1": score(1, scores("logic", 7, correctness=6)),  # 68: kept
        "fixer/1/attempt-2": fix({"src/p.py": "v = 'broken'\n"}),
        "reviewer/1/attempt-2": score(1, scores("logic", 8, integration=2)),  # regressed
        "fixer/1/attempt-3": third,
        "reviewer/1/attempt-3": score(1, scores("logic", 8)),  # 80: passes
    }
    result = wave.run(script)

    (task,) = result.tasks
    assert (task.status, task.attempts, task.total) == ("committed", 3, 80)
    assert wave.file("src/p.py") == "v = 'second, better'\n"
    notes = [e.message for e in wave.events if e.kind is EventKind.NOTE]
    assert any('attempt 2: dimension "integration" fell from 7 to 2' in n for n in notes)
    assert wave.leftovers() == []


def test_a_score_drop_beyond_the_tolerance_is_rolled_back_and_retries_are_bounded(
    wave: Wave,
) -> None:
    wave.write_tasks({"tasks": [{"id": 1, "name": "slider"}], "maxRetries": 2})
    script = {
        "executor/1/implement": implement(1, {"src/s.py": "s = 1\n"}),
        "reviewer/1/verify": score(1, scores("logic", 7, correctness=5)),  # 65
        "fixer/1/attempt-1": fix({"src/s.py": "s = 2\n"}),
        "reviewer/1/attempt-1": score(1, scores("logic", 6, correctness=5)),  # 58: -7 > 3
        "fixer/1/attempt-2": fix({"src/s.py": "s = 3\n"}),
        "reviewer/1/attempt-2": score(1, scores("logic", 7, correctness=3)),  # 60: -5 > 3
    }
    result = wave.run(script)

    (task,) = result.tasks
    assert (task.status, task.attempts, task.total) == ("rolled-back", 2, 65)
    assert task.reason == "Exceeded max retries (2)"
    assert wave.file("src/s.py") is None
    assert wave.tasks()["1"]["retryCount"] == 2
    assert wave.leftovers() == []


def test_user_work_and_a_tracked_tasks_json_survive_the_fast_forward(wave: Wave) -> None:
    before = wave.repo.user_work()
    wave.write_tasks([{"id": "a-1", "name": "named id", "filesModified": ["src/app.py"]}])
    script = {
        "executor/a-1/implement": implement(
            "a-1", {"src/app.py": "def add(a, b):\n    return a + b\n"}
        ),
        "reviewer/a-1/verify": score("a-1", scores("logic", 10)),
    }
    result = wave.run(script)
    assert result.exit_code == 0, result.to_json()
    assert wave.repo.user_work() == before
    assert wave.statuses() == {"a-1": "done"}
    assert "?? plan/" in wave.repo.git("status", "--porcelain")


def test_backpressure_gets_at_most_three_fixer_rounds(wave: Wave) -> None:
    wave.write_tasks(
        {
            "tasks": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],
            "backpressureCommand": "grep -q built src/a.py && grep -q built src/b.py",
        }
    )
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        "executor/2/implement": implement(2, {"src/b.py": "b = 1\n"}),
        "fixer/wave-1/backpressure-1": fix({"src/a.py": "a = 1  # built\n"}),
        "fixer/wave-1/backpressure-2": fix({"src/b.py": "b = 1  # built\n"}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
        "reviewer/2/verify": score(2, scores("logic", 9)),
    }
    result = wave.run(script)
    assert result.exit_code == 0, result.to_json()
    assert wave.file("src/b.py") == "b = 1  # built\n"
    notes = [e.message for e in wave.events if e.kind is EventKind.NOTE]
    assert "wave 1: the build passes after 2 fixer round(s)" in notes


def test_a_build_still_failing_after_three_rounds_fails_every_merged_task(wave: Wave) -> None:
    wave.write_tasks({"tasks": [{"id": 1, "name": "a"}], "backpressureCommand": "exit 1"})
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        **{f"fixer/wave-1/backpressure-{n}": fix({"src/a.py": f"a = {n}\n"}) for n in (1, 2, 3)},
    }
    result = wave.run(script)
    (task,) = result.tasks
    assert (task.status, task.reason) == ("rolled-back", "backpressure failed")
    assert wave.backend is not None and wave.backend.unplayed() == []
    assert wave.file("src/a.py") is None
    log = Path(result.run_dir) / "context" / "backpressure-1.log"
    assert log.is_file()


def test_a_file_a_passed_task_shares_is_kept_when_the_other_fails(wave: Wave) -> None:
    lines = [f"line {n}\n" for n in range(1, 21)]
    base = "".join(lines)
    wave.repo.path.joinpath("src/shared.py").write_text(base)
    wave.repo.git("add", "src/shared.py")
    wave.repo.git("commit", "--quiet", "-m", "shared", "--", "src/shared.py")
    top = "".join(["line 1 by task 1\n", *lines[1:]])
    bottom = "".join([*lines[:-1], "line 20 by task 2\n"])
    wave.write_tasks(
        {
            "tasks": [
                {"id": 1, "name": "top", "filesModified": ["src/shared.py"]},
                {"id": 2, "name": "bottom", "filesModified": ["src/shared.py"]},
            ],
            "maxRetries": 0,
        }
    )
    script = {
        "executor/1/implement": implement(1, {"src/shared.py": top}),
        "executor/2/implement": implement(2, {"src/shared.py": bottom, "src/two.py": "t = 2\n"}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
        "reviewer/2/verify": score(2, scores("logic", 2)),
    }
    result = wave.run(script)
    assert {t.id: t.status for t in result.tasks} == {"1": "committed", "2": "rolled-back"}
    (record,) = result.waves
    assert record.kept == ["src/shared.py"]
    assert "src/shared.py belongs to a failed and a passed task: not rolled back" in result.warnings
    assert wave.file("src/two.py") is None  # task 2's own file went back
    assert wave.file("src/shared.py") == "".join(
        ["line 1 by task 1\n", *lines[1:-1], "line 20 by task 2\n"]
    )


def test_one_wave_only_and_a_dependency_that_never_ran(wave: Wave) -> None:
    wave.write_tasks(
        [
            {"id": 1, "name": "done before", "status": "done"},
            {"id": 4, "name": "never ran"},
            {"id": 2, "name": "after 1", "dependsOn": [1]},
            {"id": 3, "name": "after 4", "dependsOn": [4]},
        ]
    )
    script = {
        "executor/2/implement": implement(2, {"src/two.py": "t = 2\n"}),
        "reviewer/2/verify": score(2, scores("logic", 9)),
    }
    result = wave.run(script, wave=2)
    assert {t.id: (t.status, t.reason) for t in result.tasks} == {
        "2": ("committed", ""),
        "3": ("skipped", "dependency 4 is pending"),
    }
    assert wave.statuses() == {"1": "done", "4": "pending", "2": "done", "3": "skipped"}


def test_what_the_run_writes_is_masked(wave: Wave) -> None:
    secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    wave.write_tasks(
        {
            "tasks": [{"id": 1, "name": "a"}],
            "backpressureCommand": f"echo 'token {secret}'; exit 1",
            "maxRetries": 0,
        }
    )
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        **{f"fixer/wave-1/backpressure-{n}": fix({"src/a.py": f"a = {n}\n"}) for n in (1, 2, 3)},
    }
    result = wave.run(script)
    run_dir = Path(result.run_dir)
    written = [p for p in run_dir.rglob("*") if p.is_file() and p.name != "lock"]
    assert any(p.name == "backpressure-1.log" for p in written)
    assert [p for p in written if secret in p.read_text(errors="replace")] == []
    assert wave.backend is not None
    fixer = next(c for c in wave.backend.calls if c.key == "fixer/wave-1/backpressure-1")
    assert "token «masked:github-token»" in fixer.system_prompt  # the log the fixer reads
