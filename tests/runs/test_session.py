"""The git protocol document, driven through git_session against real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.workflows import write_workflow

from fixloop.diagnostics import FixloopError
from fixloop.runs.git_session import GitSession, git_session, load_protocol
from fixloop.runs.run import Run
from fixloop.steps.result import StepFailed
from fixloop.steps.runner import run_step


def _clean(repo: UserRepo) -> None:
    """No worktree, temp branch, tag or sentinel of ours is left."""
    assert repo.worktrees() == [str(repo.path)]
    assert repo.branches() == ["main"]
    assert repo.git("tag", "--list", "fixloop/*") == ""
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    assert not sentinels.exists() or not any(sentinels.iterdir())


def _changed(repo: Path, commit: str) -> list[str]:
    lines = git(repo, "diff-tree", "--no-commit-id", "-r", "--name-status", commit).splitlines()
    return sorted(lines)


def test_a_run_fast_forwards_and_leaves_the_users_work_alone(user_repo: UserRepo) -> None:
    before, old_tip = user_repo.user_work(), user_repo.head()
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        worktree = session.worktree
        assert worktree.parent == user_repo.path / ".fixloop" / "worktrees"
        assert session.branch == "main" and session.base == old_tip
        assert session.temp_branch == f"fixloop/run/{run.id}"
        assert (user_repo.path / ".git" / "fixloop" / "sentinels" / run.id).is_file()
        (worktree / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
        first = session.commit(["src/app.py"], "fix(01): CR-01 add adds")
        (worktree / "src" / "util.py").write_text("def name():\n    return 'utility'\n")
        second = session.commit(["src/util.py"], "fix(01): WR-02 better name")
    assert session.outcome is not None and session.outcome.fast_forwarded
    assert user_repo.head() == second
    assert user_repo.git("rev-list", f"{old_tip}..main").split() == [second, first]
    assert user_repo.user_work() == before
    assert (user_repo.path / "src" / "app.py").read_text().endswith("a + b\n")
    assert not worktree.exists()
    _clean(user_repo)
    run.finish("finished")


def test_a_detached_head_is_refused_before_anything_is_made(user_repo: UserRepo) -> None:
    user_repo.git("checkout", "--quiet", "--detach")
    run = Run.start(user_repo.path, "demo")
    with pytest.raises(StepFailed) as caught, git_session(run):
        pytest.fail("the session must not start")
    assert "HEAD is detached" in caught.value.result.stderr
    assert caught.value.result.step == "preflight"
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert user_repo.branches() == ["main"]
    assert not (user_repo.path / ".git" / "fixloop" / "sentinels").exists()
    protocol = load_protocol()
    direct = run_step(protocol, "setup-worktree", cwd=user_repo.path, inputs={"RUN_ID": "r1"})
    assert direct.exit_code == 1 and "HEAD is detached" in direct.stderr
    assert direct.commands[-1] == "exit 1"
    assert not any("worktree add" in command for command in direct.commands)
    assert user_repo.worktrees() == [str(user_repo.path)]


def test_commit_takes_exactly_the_listed_paths(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        wt = session.worktree
        (wt / "src" / "util.py").write_text("staged by someone else\n")
        git(wt, "add", "src/util.py")
        (wt / "src" / "app.py").write_text("fixed\n")
        commit = session.commit(["src/app.py"], "fix: only app")
        assert commit is not None
        assert _changed(wt, commit) == ["M\tsrc/app.py"]
        assert git(wt, "diff", "--cached", "--name-only").split() == ["src/util.py"]
        assert git(wt, "status", "--porcelain", "--", "src/app.py") == ""
        session.rollback(["src/util.py"])
    run.finish("finished")


def test_commit_records_new_deleted_binary_and_mode_changes(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        wt = session.worktree
        (wt / "new dir").mkdir()
        (wt / "new dir" / "$(touch pwned) 'q'.txt").write_text("new\n")
        (wt / "old.txt").unlink()
        (wt / "assets" / "logo.bin").write_bytes(bytes(reversed(range(256))))
        (wt / "tools" / "run.sh").chmod(0o755)
        paths = ["new dir/$(touch pwned) 'q'.txt", "old.txt", "assets/logo.bin", "tools/run.sh"]
        message = 'fix: $(touch pwned) `id` "quoted"\n\nbody line'
        commit = session.commit(paths, message)
        assert commit is not None
        assert _changed(wt, commit) == [
            "A\tnew dir/$(touch pwned) 'q'.txt",
            "D\told.txt",
            "M\tassets/logo.bin",
            "M\ttools/run.sh",
        ]
        assert git(wt, "log", "-1", "--format=%B", commit).rstrip("\n") == message
        assert session.commit(paths, "nothing changed since") is None
    assert not list(user_repo.path.rglob("pwned"))
    assert (user_repo.path / "tools" / "run.sh").stat().st_mode & 0o111
    run.finish("finished")


def test_rollback_is_per_file_to_head_or_to_a_tag(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        wt = session.worktree
        (wt / "src" / "app.py").write_text("committed fix\n")
        session.commit(["src/app.py"], "fix: one")
        session.tag("after-one")
        (wt / "src" / "app.py").write_text("bad second attempt\n")
        (wt / "src" / "util.py").write_text("unrelated work in progress\n")
        (wt / "src" / "created.py").write_text("created by the failed attempt\n")
        git(wt, "add", "src/created.py")
        session.rollback(["src/app.py", "src/created.py"])
        assert (wt / "src" / "app.py").read_text() == "committed fix\n"
        assert not (wt / "src" / "created.py").exists()
        assert (wt / "src" / "util.py").read_text() == "unrelated work in progress\n"
        assert git(wt, "status", "--porcelain").splitlines() == [" M src/util.py"]
        session.rollback(["src/app.py"], to="baseline")
        assert (wt / "src" / "app.py").read_text() == "def add(a, b):\n    return a - b\n"
        session.rollback(["src/app.py"], to="after-one")
        assert (wt / "src" / "app.py").read_text() == "committed fix\n"
        session.rollback(["src/util.py"])
    run.finish("finished")


def test_exported_patch_reproduces_the_worktree(user_repo: UserRepo, tmp_path: Path) -> None:
    run = Run.start(user_repo.path, "demo")
    patch = tmp_path / "fix.patch"
    with git_session(run) as session:
        wt = session.worktree
        (wt / "src" / "app.py").write_text("committed\n")
        session.commit(["src/app.py"], "fix: committed part")
        (wt / "old.txt").unlink()
        (wt / "assets" / "logo.bin").write_bytes(b"\0\1\2binary\xff" * 100)
        (wt / "tools" / "run.sh").chmod(0o755)
        (wt / "brand new.txt").write_text("untracked, not staged\n")
        index_before = git(wt, "ls-files", "-s")
        status_before = git(wt, "status", "--porcelain")
        assert session.export_patch(patch) == 5
        assert git(wt, "ls-files", "-s") == index_before
        assert git(wt, "status", "--porcelain") == status_before
        expected = {
            name: (wt / name).read_bytes()
            for name in ["src/app.py", "assets/logo.bin", "tools/run.sh", "brand new.txt"]
        }
        session.rollback(["old.txt", "assets/logo.bin", "tools/run.sh", "brand new.txt"])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(user_repo.path), str(clone)], check=True)
    git(clone, "checkout", "--quiet", session.base)
    git(clone, "apply", "--index", str(patch))
    for name, data in expected.items():
        assert (clone / name).read_bytes() == data, name
    assert not (clone / "old.txt").exists()
    assert (clone / "tools" / "run.sh").stat().st_mode & 0o111
    run.finish("finished")


@pytest.mark.parametrize("bad", ["../outside.txt", "/etc/passwd", ".git/config", "ln/x.txt"])
def test_unsafe_paths_are_refused_by_python_and_by_the_document(
    user_repo: UserRepo, tmp_path: Path, bad: str
) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        (session.worktree / "ln").symlink_to(tmp_path)
        with pytest.raises(FixloopError) as caught:
            session.commit([bad], "fix")
        assert "unsafe-path" in caught.value.diagnostics[0].format()
        raw = tmp_path / "raw-paths"
        raw.write_bytes(b"src/app.py\0" + bad.encode() + b"\0")
        for step in ("commit-paths", "rollback-files"):
            inputs = {
                "RUN_ID": run.id,
                "WORKTREE": str(session.worktree),
                "PATHS_FILE": str(raw),
                "MESSAGE": "m",
            }
            del inputs["RUN_ID" if step == "commit-paths" else "MESSAGE"]  # what each takes
            result = run_step(session.protocol, step, cwd=session.worktree, inputs=inputs)
            assert result.exit_code == 1, step
            assert "fixloop: refusing a path" in result.stderr
        (session.worktree / "ln").unlink()
    assert user_repo.head() == session.base
    run.finish("finished")


def test_a_failed_fast_forward_keeps_the_branch_and_says_so(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        (session.worktree / "src" / "app.py").write_text("fix\n")
        fix = session.commit(["src/app.py"], "fix: diverges")
        (user_repo.path / "src" / "util.py").write_text("the user commits meanwhile\n")
        user_repo.git("commit", "--quiet", "-m", "user work", "--", "src/util.py")
        user_tip = user_repo.head()
    outcome = session.outcome
    assert outcome is not None and not outcome.fast_forwarded
    assert outcome.kept_branch == session.temp_branch and outcome.unmerged == "1"
    assert "kept fixloop/run/" in outcome.describe()
    assert user_repo.head() == user_tip
    assert user_repo.head(session.temp_branch) == fix
    assert user_repo.worktrees() == [str(user_repo.path)]
    assert not (user_repo.path / ".git" / "fixloop" / "sentinels" / run.id).exists()
    run.finish("kept-branch")


def test_the_users_own_changes_block_the_fast_forward(user_repo: UserRepo) -> None:
    before = user_repo.user_work()
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        (session.worktree / "README.md").write_text("# fixed readme\n")
        session.commit(["README.md"], "fix: readme the user is editing")
    assert session.outcome is not None and not session.outcome.fast_forwarded
    assert user_repo.user_work() == before
    assert user_repo.head() == session.base
    run.finish("kept-branch")


def test_cleanup_runs_when_the_workflow_fails(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    captured: list[GitSession] = []
    with pytest.raises(RuntimeError), git_session(run) as session:
        captured.append(session)
        (session.worktree / "src" / "app.py").write_text("fixed before the failure\n")
        session.commit(["src/app.py"], "fix: lands even though a later finding failed")
        raise RuntimeError("a later finding blew up")
    [session] = captured
    assert session.outcome is not None and session.outcome.fast_forwarded
    assert (user_repo.path / "src" / "app.py").read_text() == "fixed before the failure\n"
    _clean(user_repo)
    run.finish("failed")


def test_a_reused_run_id_is_refused_not_reused(user_repo: UserRepo) -> None:
    protocol = load_protocol()
    first = run_step(protocol, "setup-worktree", cwd=user_repo.path, inputs={"RUN_ID": "same"})
    assert first.ok
    marker = Path(first.outputs["WORKTREE"]) / "work-in-progress.txt"
    marker.write_text("the first run's work\n")
    second = run_step(protocol, "setup-worktree", cwd=user_repo.path, inputs={"RUN_ID": "same"})
    assert not second.ok and "already exists" in second.stderr
    assert marker.read_text() == "the first run's work\n"
    sentinel = user_repo.path / ".git" / "fixloop" / "sentinels" / "same"
    assert (
        git(user_repo.path, "config", "--file", str(sentinel), "fixloop.worktree").strip()
        == (first.outputs["WORKTREE"])
    )
    assert run_step(protocol, "cleanup", cwd=user_repo.path, inputs={"RUN_ID": "same"}).ok
    _clean(user_repo)


def test_no_fast_forward_when_the_user_switched_branches(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    with git_session(run) as session:
        (session.worktree / "src" / "app.py").write_text("fix\n")
        session.commit(["src/app.py"], "fix: while the user moved on")
        user_repo.git("checkout", "--quiet", "-b", "elsewhere")
    outcome = session.outcome
    assert outcome is not None and not outcome.fast_forwarded
    assert outcome.kept_branch == session.temp_branch
    assert user_repo.head("main") == session.base
    assert user_repo.head("elsewhere") == session.base
    run.finish("kept-branch")


SILENT_PROTOCOL = """\
---
name: git-protocol
description: A protocol whose steps succeed but do not report what they did.
inputs:
  RUN_ID: {type: string, required: false}
  WORKTREE: {type: string, required: false}
  PATHS_FILE: {type: string, required: false}
  MESSAGE: {type: string, required: false}
  TAG: {type: string, required: false}
  PATCH_FILE: {type: string, required: false}
outputs:
  COMMITTED: Never written here.
  FILES: A file count that is not a number.
  FAST_FORWARDED: Neither yes nor no.
---

## Commit {#commit-paths}

```bash
true
```

## Export {#export-patch}

```bash
printf 'FILES=several\\n' >> "$FIXLOOP_OUTPUT"
```

## Clean up {#cleanup}

```bash
printf 'FAST_FORWARDED=probably\\n' >> "$FIXLOOP_OUTPUT"
```
"""


def test_a_step_that_does_not_report_its_result_fails_closed(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    silent = write_workflow(tmp_path / "pack", SILENT_PROTOCOL, name="git-protocol")
    run = Run.start(user_repo.path, "demo")
    setup = {
        "BRANCH": "main",
        "BASE": user_repo.head(),
        "WORKTREE": str(user_repo.path),
        "TEMP_BRANCH": "none",
    }
    session = GitSession(silent, run, setup, timeout_s=30)
    with pytest.raises(StepFailed, match="commit-paths: reported nothing for COMMITTED"):
        session.commit(["src/app.py"], "fix")
    with pytest.raises(StepFailed, match="reported 'several' for FILES"):
        session.export_patch(tmp_path / "p.diff")
    with pytest.raises(StepFailed, match=r"reported 'probably' for FAST_FORWARDED \(expected yes"):
        session.cleanup()
    run.finish("failed")


def test_preflight_refuses_what_cannot_run(tmp_path: Path) -> None:
    protocol = load_protocol()
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_step(protocol, "preflight", cwd=plain, inputs={})
    assert result.exit_code == 1 and "not inside a git working tree" in result.stderr
    empty = tmp_path / "empty"
    git(tmp_path, "init", "--quiet", "--initial-branch=main", str(empty))
    result = run_step(protocol, "preflight", cwd=empty, inputs={})
    assert result.exit_code == 1 and "branch main has no commits yet" in result.stderr
