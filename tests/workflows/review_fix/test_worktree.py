"""Review-fix's worktree: what changed in it (gitpython reads), commits and per-file rollback."""

from __future__ import annotations

import pytest
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import pack

from fixloop import gitrepo
from fixloop.runs.git_session import git_session
from fixloop.runs.run import Run
from fixloop.workflows.review_fix.worktree import GitChangeFailed, Worktree


def test_changes_commit_and_rollback_in_the_worktree(user_repo: UserRepo) -> None:
    loaded = pack()
    run = Run.start(user_repo.path, "review-fix")
    with git_session(run, protocol=loaded.workflow("git-protocol")) as session:
        worktree = Worktree(session)
        root = worktree.path
        (root / "src" / "app.py").write_text("changed\n")
        (root / "new dir").mkdir()
        (root / "new dir" / "naïve $(x).py").write_text("x = 1\n")
        (root / "old.txt").unlink()
        worktree.artifacts.add("old.txt")
        assert gitrepo.changed_paths(root) == {
            "src/app.py": " M",
            "old.txt": " D",
            "new dir/naïve $(x).py": "??",
        }
        assert worktree.changed_paths() == ["new dir/naïve $(x).py", "src/app.py"]
        commit = worktree.commit(["src/app.py"], "fix(02): CR-01 $(not run)")
        assert len(commit) == 40 and not worktree.head_moved
        with pytest.raises(GitChangeFailed, match="the listed files had"):
            worktree.commit(["src/app.py"], "again")
        worktree.rollback(["new dir/naïve $(x).py", "old.txt"])
        assert gitrepo.changed_paths(root) == {}
        with pytest.raises(GitChangeFailed, match=r"paths inside \.git are refused"):
            worktree.rollback([".git/config"])
    run.finish("finished")
    assert user_repo.git("log", "-1", "--format=%s").strip() == "fix(02): CR-01 $(not run)"


def test_a_commit_made_behind_its_back_is_seen_and_undone(user_repo: UserRepo) -> None:
    loaded = pack()
    run = Run.start(user_repo.path, "review-fix")
    with git_session(run, protocol=loaded.workflow("git-protocol")) as session:
        worktree = Worktree(session)
        root = worktree.path
        (root / "src" / "app.py").write_text("rogue\n")
        git(root, "commit", "-qam", "rogue commit")
        (root / "src" / "util.py").write_text("left over\n")
        changed = worktree.changed_paths()
        assert worktree.head_moved and changed == ["src/util.py"]
        worktree.undo_foreign_commit(changed, "revert(02): undo the commit the fixer made")
        assert gitrepo.changed_paths(root) == {}
        assert (root / "src" / "app.py").read_text() == user_repo.git("show", "HEAD:src/app.py")
    run.finish("finished")
