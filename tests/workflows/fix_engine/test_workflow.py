"""Fix-engine end to end on real repositories: items, attempts, verdicts, commits, reports.

Only the model is scripted; git, the worktree, the document steps and bash are real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.gitrepo import UserRepo, git
from tests.workflows.fix_engine.scenario import (
    ADD_RIGHT,
    implemented,
    make_section_repo,
    run,
    script,
    state_dir,
    subjects,
    verdict,
)

from fixloop.events import Event, EventKind

GREET = "def hello():\n    return 'hello'\n"


def passing() -> dict[str, Any]:
    """The scenario with check-2 right on its first attempt."""
    replies = script()
    replies["executor/check-2/attempt-1"] = implemented(
        "check-2", ["src/greet.py"], "hello()", edits=[{"path": "src/greet.py", "content": GREET}]
    )
    replies["verifier/check-2/attempt-1"] = verdict("check-2", "rejected", "hello() == 'hello'")
    return replies


@pytest.fixture
def section(tmp_path: Path) -> UserRepo:
    return make_section_repo(tmp_path / "repo")


def _meta(repo: Path) -> dict[str, Any]:
    loaded = yaml.safe_load((state_dir(repo) / "meta.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _clean(repo: UserRepo) -> None:
    assert repo.worktrees() == [str(repo.path)]
    assert repo.branches() == ["main"]
    assert repo.git("tag", "--list", "fixloop/*") == ""
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    assert not sentinels.exists() or not any(sentinels.iterdir())


def test_one_item_passes_on_its_second_attempt_the_other_fails_after_three(
    section: UserRepo,
) -> None:
    repo = section.path
    before, tip = section.user_work(), section.head()
    events: list[Event] = []
    result, backend = run(repo, script(), events=events)

    assert [call.key for call in backend.calls] == [
        "executor/AC-1/attempt-1",
        "verifier/AC-1/attempt-1",
        "executor/AC-1/attempt-2",
        "verifier/AC-1/attempt-2",
        *[f"{role}/check-2/attempt-{n}" for n in (1, 2, 3) for role in ("executor", "verifier")],
    ]
    assert result.status == "escalated" and result.exit_code == 1
    assert (len(result.done), len(result.failed), result.attempts) == (1, 1, 5)
    # One commit: exactly the executor's file, on the user's branch by fast-forward.
    assert subjects(repo, tip) == ["calc: AC-1 `add(a, b)` returns the sum of a and b"]
    assert git(repo, "show", "--format=", "--name-only", "main") == "src/app.py\n"
    message = git(repo, "log", "-1", "--format=%B", "main")
    assert "- src/app.py" in message and "Generated with fixloop" in message
    assert (repo / "src/app.py").read_text() == ADD_RIGHT
    assert not (repo / "src/greet.py").exists(), "the failed item's new file was rolled back"
    assert result.fast_forwarded
    assert section.user_work() == before
    _clean(section)

    state = state_dir(repo)
    meta = _meta(repo)
    assert (meta["status"], meta["progress"]) == ("escalated", "1/2")
    assert meta["items"]["AC-1"]["commit"] == section.head()
    assert [a["passed"] for a in meta["items"]["AC-1"]["attempts"]] == [False, True]
    assert meta["items"]["check-2"]["status"] == "failed"
    checklist = (state / "checklist.md").read_text(encoding="utf-8")
    assert "- [x] AC-1: `add(a, b)` returns the sum of a and b\n" in checklist
    assert '- [ ] check-2: `src/greet.py` defines `hello()` returning "hello"' in checklist
    assert checklist.rstrip().endswith("**Progress: 1/2**")
    report = yaml.safe_load((state / "error_report.yaml").read_text(encoding="utf-8"))
    [failure] = report["error_report"]["final_failures"]
    assert failure == {
        "check_id": "check-2",
        "expected": '`src/greet.py` defines `hello()` returning "hello" (exactly that text)',
        "actual": "hello() returns 'hi 3' (src/greet.py:2)",
        "last_verdict": "confirmed",
        "attempts": 3,
    }
    assert [h["executor_notes"] for h in report["error_report"]["history"]] == [
        "try 1",
        "try 2",
        "try 3",
    ]
    assert result.error_report == str(state / "error_report.yaml")
    assert not (state / "COMPLETE").exists()

    items = [(e.item, e.status) for e in events if e.kind is EventKind.ITEM]
    assert items == [
        ("AC-1", "running"),
        ("AC-1", "done"),
        ("check-2", "running"),
        ("check-2", "failed"),
    ]
    notes = [e.message for e in events if e.kind is EventKind.NOTE]
    assert "AC-1 attempt 1: not passed (confirmed): add(2, 1) is 1 (src/app.py:2)" in notes
    assert "check-2: rolled back src/greet.py" in notes


def test_complete_is_written_last_after_every_commit(section: UserRepo) -> None:
    repo, tip = section.path, section.head()
    result, _ = run(repo, passing())
    assert result.status == "completed" and result.exit_code == 0
    assert len(subjects(repo, tip)) == 2
    state = state_dir(repo)
    marker = yaml.safe_load((state / "COMPLETE").read_text(encoding="utf-8"))
    assert marker == {"section_id": "calc", "commits": result.commits}
    for commit in result.commits:
        assert git(repo, "merge-base", "--is-ancestor", commit, "main", check=False) == ""
    assert _meta(repo)["status"] == "completed"
    assert (state / "COMPLETE").stat().st_mtime_ns >= (state / "meta.yaml").stat().st_mtime_ns
    _clean(section)

    again, backend = run(repo, {})
    assert again.status == "already-complete" and again.exit_code == 0
    assert backend.calls == []
    assert len(subjects(repo, tip)) == 2


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ({"fail": "malformed", "raw": "looks fine to me"}, "verifier result inconclusive"),
        (None, "verifier result inconclusive (missing_output)"),
        (verdict("AC-9", "rejected", "about another item"), "not 'AC-1'"),
        (verdict("AC-1", "rejected", ""), "no valid verdict"),
    ],
    ids=["malformed", "missing", "another-item", "no-evidence"],
)
def test_a_missing_or_invalid_verdict_is_a_failed_attempt(
    section: UserRepo, reply: dict[str, Any] | None, why: str
) -> None:
    replies = passing()
    replies["executor/AC-1/attempt-1"] = replies.pop("executor/AC-1/attempt-2")
    replies["executor/AC-1/attempt-2"] = implemented("AC-1", ["src/app.py"], "kept")
    if reply is None:
        del replies["verifier/AC-1/attempt-1"]
    else:
        replies["verifier/AC-1/attempt-1"] = reply
    result, _ = run(section.path, replies)
    first = result.items[0].attempts[0]
    assert (first.passed, first.verdict) == (False, None)
    assert why in first.evidence
    assert result.items[0].attempts[1].passed and result.status == "completed"


def test_an_inconclusive_executor_fails_the_attempt_without_asking_the_verifier(
    section: UserRepo,
) -> None:
    replies = passing()
    replies["executor/AC-1/attempt-1"] = {"fail": "crash"}
    result, backend = run(section.path, replies)
    assert "verifier/AC-1/attempt-1" not in [call.key for call in backend.calls]
    first = result.items[0].attempts[0]
    assert not first.passed and first.evidence.startswith("executor result inconclusive (crash)")
    assert first.executor_status == "missing"
    assert result.status == "completed"


def test_a_changed_file_the_executor_did_not_report_is_put_back(section: UserRepo) -> None:
    replies = passing()
    util = "def name():\n    return 'changed behind our back'\n"
    replies["executor/AC-1/attempt-2"]["edits"].append({"path": "src/util.py", "content": util})
    before = (section.path / "src/util.py").read_text()
    result, _ = run(section.path, replies)
    assert result.status == "completed"
    assert (section.path / "src/util.py").read_text() == before
    assert any("put back src/util.py" in warning for warning in result.warnings)
    for commit in result.commits:
        assert "src/util.py" not in git(section.path, "show", "--name-only", "--format=", commit)


@pytest.mark.parametrize("path", ["../outside.py", "sub/.git/config", "/etc/passwd"])
def test_a_reported_path_outside_the_repository_fails_the_attempt(
    section: UserRepo, path: str
) -> None:
    replies = passing()
    replies["executor/AC-1/attempt-2"]["output"]["filesModified"] = ["src/app.py", path]
    replies["executor/AC-1/attempt-3"] = implemented("AC-1", ["src/app.py"], "again")
    replies["verifier/AC-1/attempt-3"] = verdict("AC-1", "rejected", "add adds")
    result, backend = run(section.path, replies)
    second = result.items[0].attempts[1]
    assert not second.passed
    assert "the executor reported a path outside the repository" in second.evidence
    assert "verifier/AC-1/attempt-2" not in [call.key for call in backend.calls]
    assert result.items[0].status == "done"


def test_a_commit_the_executor_made_is_undone_and_the_attempt_fails(section: UserRepo) -> None:
    repo, tip = section.path, section.head()
    replies = passing()
    replies["executor/AC-1/attempt-1"]["bash"] = [
        "git add src/app.py && git commit --quiet -m 'executor commits on its own'"
    ]
    result, _ = run(repo, replies)
    made = subjects(repo, tip)
    assert made[:3] == [
        "executor commits on its own",
        "calc: undo the commit the executor made for AC-1",
        "calc: AC-1 `add(a, b)` returns the sum of a and b",
    ]
    assert made[3].startswith("calc: check-2 `src/greet.py` defines") and len(made[3]) == 72
    first = result.items[0].attempts[0]
    assert not first.passed and "committed on its own" in first.evidence
    assert (repo / "src/app.py").read_text() == ADD_RIGHT
    assert result.status == "completed"
