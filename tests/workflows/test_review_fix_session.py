"""Review-fix's session: worktree changes via inspect-changes, commits and per-file rollback."""

from __future__ import annotations

from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import pack

from fixloop.agents.dispatch import Dispatcher
from fixloop.agents.scripted import ScriptedBackend
from fixloop.runs.session import git_session
from fixloop.steps.run import Run
from fixloop.workflows.review_fix_session import Session


def test_changes_commit_and_rollback_in_the_worktree(user_repo: UserRepo) -> None:
    loaded = pack()
    run = Run.start(user_repo.path, "review-fix")
    inputs = {"REVIEW_PATH": "R.md", "PADDED_PHASE": "02"}
    with git_session(run, protocol=loaded.workflow("git-protocol")) as git:
        session = Session(
            loaded.workflow("review-fix"),
            git,
            Dispatcher(loaded, ScriptedBackend({})),
            inputs,
            "02",
        )
        worktree = session.worktree
        (worktree / "src" / "app.py").write_text("changed\n")
        (worktree / "new dir").mkdir()
        (worktree / "new dir" / "naïve $(x).py").write_text("x = 1\n")
        (worktree / "old.txt").unlink()
        session.artifacts.add("old.txt")
        assert session.changes() == {
            "src/app.py": " M",
            "old.txt": " D",
            "new dir/naïve $(x).py": "??",
        }
        assert session.changed_paths() == ["new dir/naïve $(x).py", "src/app.py"]
        commit = session.commit(["src/app.py"], "fix(02): CR-01 $(not run)")
        assert commit.error == "" and len(commit.short) == 7
        assert session.commit(["src/app.py"], "again").error.startswith("the listed files had")
        assert session.rollback(["new dir/naïve $(x).py", "old.txt"]) == ""
        assert session.changes() == {}
        assert "paths inside .git are refused" in session.rollback([".git/config"])
    run.finish("finished")
    assert user_repo.git("log", "-1", "--format=%s").strip() == "fix(02): CR-01 $(not run)"
