"""Acceptance: a patch exported through a temporary index, applied to a clean checkout of its
base, the original test files put back, hidden tests copied in, the tests run there."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers.fix_issue import FIXED_LINE, UNITTEST, make_issue_repo, recorder
from tests.helpers.gitrepo import git

from fixloop.documents.pack import Pack
from fixloop.events import Event, EventStream
from fixloop.runs.git_session import git_session
from fixloop.runs.run import Run, list_runs, new_run_id
from fixloop.workflows.fix_issue.acceptance import Acceptance, PatchCheck, verify_patch
from fixloop.workflows.fix_issue.infrastructure import is_test_path
from fixloop.workflows.fix_issue.suite import PresetTest

BINARY = bytes(range(256)) * 4
# Passes only where every kind of change the patch carries arrived.
CHECK_TREE = textwrap.dedent(
    """\
    import os, pathlib, sys
    assert pathlib.Path("docs/new note.txt").read_text() == "new\\n", "new file"
    assert not pathlib.Path("old.txt").exists(), "deleted file"
    assert pathlib.Path("data.bin").read_bytes() == bytes(range(256)) * 4, "binary file"
    assert os.access("tool.sh", os.X_OK), "mode change"
    print("all four kinds arrived")
    """
)


def exported(repo: Path, change: Callable[[Path], None], target: Path) -> Path:
    """A patch of `change` made in a run's worktree and written by git-protocol's export-patch."""
    run = Run.start(repo, "fix-issue")
    with git_session(run) as session:
        change(session.worktree)
        session.export_patch(target)
    run.finish("finished")
    return target


def check(repo: Path, patch: Path, commands: list[list[str]], **more: object) -> PatchCheck:
    return PatchCheck(
        repo=repo,
        base=git(repo, "rev-parse", "HEAD").strip(),
        patch=patch,
        commands=tuple(PresetTest(tuple(c)) for c in commands),
        opener=recorder(),
        **more,  # type: ignore[arg-type]
    )


def verify(
    pack: Pack, options: PatchCheck, events: list[Event] | None = None, run_id: str = ""
) -> Acceptance:
    stream = EventStream((events if events is not None else []).append)
    return verify_patch(
        options,
        document=pack.workflow("fix-issue"),
        protocol=pack.workflow("git-protocol"),
        run_id=run_id or new_run_id(),
        events=stream,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_issue_repo(tmp_path / "repo")
    (path / "old.txt").write_text("old\n")
    (path / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "more files")
    return path


def test_new_deleted_binary_and_mode_changes_all_arrive(
    repo: Path, tmp_path: Path, pack: Pack
) -> None:
    def change(tree: Path) -> None:
        (tree / "docs").mkdir()
        (tree / "docs/new note.txt").write_text("new\n")
        (tree / "old.txt").unlink()
        (tree / "data.bin").write_bytes(BINARY)
        (tree / "tool.sh").chmod(0o755)
        (tree / "check_tree.py").write_text(CHECK_TREE)

    patch = exported(repo, change, tmp_path / "all.patch")
    assert b"GIT binary patch" in patch.read_bytes()
    events: list[Event] = []
    run_id = "20260101T000000Z-1-aaaaaa"
    acceptance = verify(pack, check(repo, patch, [["python3", "check_tree.py"]]), events, run_id)
    assert acceptance.accepted, acceptance.to_json()
    assert "all four kinds arrived" in acceptance.results[0].output
    # The verification run cleaned up after itself, and left its own trace.
    assert git(repo, "worktree", "list").count("\n") == 1
    info = {run["id"]: run for run in list_runs(repo / ".git" / "fixloop")}
    verification = info["20260101T000000Z-1-aaaaaa-verify"]
    assert verification["state"] == "finished"
    trace = repo / ".git/fixloop/runs/20260101T000000Z-1-aaaaaa-verify/events.jsonl"
    steps = [json.loads(line).get("step") for line in trace.read_text().splitlines()]
    assert steps[1:4] == ["setup-verify-worktree", "apply-patch", "recover-run"]
    assert [e.step for e in events if e.step] == steps[1:4]  # forwarded to the caller's stream


def test_a_test_the_patch_weakened_is_put_back_before_the_tests_run(
    repo: Path, tmp_path: Path, pack: Pack
) -> None:
    def cheat(tree: Path) -> None:
        test = tree / "tests/test_stats.py"
        test.write_text(test.read_text().replace("average([2, 4]), 3", "average([2, 4]), 2"))

    patch = exported(repo, cheat, tmp_path / "cheat.patch")
    acceptance = verify(pack, check(repo, patch, [UNITTEST]))
    assert acceptance.applied and not acceptance.accepted
    assert acceptance.restored == ["tests/test_stats.py"]
    assert acceptance.problem == (
        "acceptance tests did not pass: fail-to-pass 0/1, pass-to-pass 1/1: "
        "tests.test_stats.StatsTest.test_average failed"
    )


def test_a_real_fix_with_an_added_test_passes_and_the_added_test_is_left_out(
    repo: Path, tmp_path: Path, pack: Pack
) -> None:
    def fix(tree: Path) -> None:
        stats = tree / "calc/stats.py"
        broken = "    return sum(values) / (len(values) + 1)\n"
        stats.write_text(stats.read_text().replace(broken, FIXED_LINE))
        (tree / "tests/test_one.py").write_text(
            "import unittest\nfrom calc.stats import average\n\n"
            "class One(unittest.TestCase):\n"
            "    def test_one(self):\n        self.assertEqual(average([5]), 5)\n"
        )

    patch = exported(repo, fix, tmp_path / "fix.patch")
    acceptance = verify(pack, check(repo, patch, [[*UNITTEST, "-v"]]))
    assert acceptance.accepted, acceptance.to_json()
    assert acceptance.restored == [] and acceptance.removed == ["tests/test_one.py"]
    assert "test_one" not in acceptance.results[0].output  # the tests are the base's
    assert acceptance.grade is not None
    assert acceptance.grade.reason == "fail-to-pass 1/1, pass-to-pass 1/1"


def test_hidden_tests_are_copied_in_and_run(repo: Path, tmp_path: Path, pack: Pack) -> None:
    hidden = tmp_path / "hidden"
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests/test_hidden.py").write_text(
        "import unittest\nfrom calc.stats import average\n\n"
        "class Hidden(unittest.TestCase):\n"
        "    def test_three(self):\n        self.assertEqual(average([1, 2, 3]), 2)\n"
    )

    def half_fix(tree: Path) -> None:  # passes the public test, not the hidden one
        stats = tree / "calc/stats.py"
        stats.write_text(stats.read_text().replace("(len(values) + 1)", "2"))

    patch = exported(repo, half_fix, tmp_path / "half.patch")
    public = verify(pack, check(repo, patch, [UNITTEST]))
    assert public.accepted
    with_hidden = verify(pack, check(repo, patch, [UNITTEST], hidden_files=hidden))
    assert not with_hidden.accepted
    assert "test_three" in with_hidden.results[0].output


def test_a_patch_that_does_not_apply_is_rejected_and_cleaned_up(
    repo: Path, tmp_path: Path, pack: Pack
) -> None:
    patch = tmp_path / "stale.patch"
    patch.write_text(
        "diff --git a/calc/stats.py b/calc/stats.py\n--- a/calc/stats.py\n+++ b/calc/stats.py\n"
        "@@ -1,1 +1,1 @@\n-not what is there\n+something\n"
    )
    acceptance = verify(pack, check(repo, patch, [UNITTEST]))
    assert not acceptance.applied and not acceptance.accepted
    assert acceptance.problem.startswith("the patch does not apply to ")
    assert acceptance.results == []
    assert git(repo, "worktree", "list").count("\n") == 1
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_a.py", True),
        ("pkg/test_b.py", True),
        ("b_test.go", True),
        ("web/a.test.ts", True),
        ("web/a.spec.js", True),
        ("conftest.py", True),
        ("spec/models/user.rb", True),
        ("src/testing_utils.py", False),
        ("calc/stats.py", False),
        ("contest.py", False),
    ],
)
def test_which_files_count_as_tests(path: str, test: bool) -> None:
    assert is_test_path(path) is test
