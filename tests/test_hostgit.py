"""fixloop's git settings for a tree follow its configuration files as they are now, though a
process asks git for the listing only when a file it was read from has changed.

The agent attacks in between: it plants a program in the repository's config, in a worktree's
`config.worktree`, or in a file the config includes, after fixloop has listed the tree once;
the next settings still take each planted program away.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo

from fixloop import hostgit


def _settings(tree: Path) -> dict[str, str]:
    return dict(hostgit.overrides([tree]))


def _listings(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The trees `git config --list` runs in from now on (the test's own git calls are not
    counted: they go through `tests.helpers.gitrepo`, which runs other commands)."""
    trees: list[Path] = []
    real: Callable[..., Any] = subprocess.run

    def spy(argv: list[str], **options: Any) -> Any:
        if argv[:3] == ["git", "config", "--list"]:
            trees.append(Path(options["cwd"]))
        return real(argv, **options)

    monkeypatch.setattr(subprocess, "run", spy)
    return trees


def test_a_tree_is_listed_again_only_once_a_file_git_read_has_changed(
    user_repo: UserRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = _listings(monkeypatch)
    first = hostgit.overrides([user_repo.path, user_repo.path])  # a step in its own tree
    assert hostgit.overrides([user_repo.path]) == first
    assert listed == [user_repo.path]
    user_repo.git("config", "core.autocrlf", "false")
    hostgit.overrides([user_repo.path])
    assert listed == [user_repo.path, user_repo.path]


def test_a_program_planted_in_the_repository_config_after_a_listing_never_runs(
    user_repo: UserRepo,
) -> None:
    assert "filter.planted.clean" not in _settings(user_repo.path)
    with (user_repo.path / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write('[filter "planted"]\n\tclean = touch /tmp/planted\n')
    settings = _settings(user_repo.path)
    assert (settings["filter.planted.clean"], settings["filter.planted.required"]) == ("", "false")


def test_a_worktree_config_written_after_a_listing_is_taken_away(user_repo: UserRepo) -> None:
    user_repo.git("config", "extensions.worktreeConfig", "true")
    tree = user_repo.path.parent / "linked"
    user_repo.git("worktree", "add", "--quiet", "--detach", str(tree))
    assert "diff.planted.textconv" not in _settings(tree)
    gitdir = Path(user_repo.git("rev-parse", "--absolute-git-dir", check=True).strip())
    (gitdir / "worktrees" / "linked" / "config.worktree").write_text(
        '[diff "planted"]\n\ttextconv = touch /tmp/planted\n', encoding="utf-8"
    )
    assert _settings(tree)["diff.planted.textconv"] == ""


def test_a_tree_whose_config_includes_a_file_is_listed_every_time(
    user_repo: UserRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = user_repo.path / ".git" / "extra"
    extra.write_text("[core]\n\tautocrlf = false\n", encoding="utf-8")
    user_repo.git("config", "include.path", "extra")
    listed = _listings(monkeypatch)
    assert "core.fsmonitor" in _settings(user_repo.path)  # always given
    extra.write_text("[core]\n\tsshCommand = touch /tmp/planted\n", encoding="utf-8")
    assert _settings(user_repo.path)["core.sshcommand"] == ""
    assert listed == [user_repo.path, user_repo.path]


def test_the_users_own_driver_is_read_again_when_their_config_changes(
    user_repo: UserRepo,
) -> None:
    user_repo.git("config", "filter.lfs.clean", "touch /tmp/planted")
    assert _settings(user_repo.path)["filter.lfs.clean"] == ""
    subprocess.run(
        ["git", "config", "--global", "filter.lfs.clean", "git-lfs clean -- %f"],
        cwd=user_repo.path,
        check=True,
    )
    assert (Path.home() / ".gitconfig").is_file()  # the test's own home (tests/conftest.py)
    assert _settings(user_repo.path)["filter.lfs.clean"] == "git-lfs clean -- %f"


def test_a_head_that_moves_is_not_listed_again_but_one_that_breaks_is(
    user_repo: UserRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = user_repo.path.parent / "linked"
    user_repo.git("worktree", "add", "--quiet", "--detach", str(tree))
    listed = _listings(monkeypatch)
    first = _settings(tree)
    subprocess.run(
        ["git", "commit", "--quiet", "--allow-empty", "-m", "moved"], cwd=tree, check=True
    )
    assert _settings(tree) == first
    head = Path(user_repo.git("rev-parse", "--absolute-git-dir").strip()) / "worktrees" / "linked"
    (head / "HEAD").write_text("ref: refs/heads/fixloop/elsewhere\n", encoding="utf-8")
    assert _settings(tree) == first
    assert listed == [tree]  # any ref or commit id is as good a HEAD to git as another
    (head / "HEAD").write_text("not a head\n", encoding="utf-8")
    _settings(tree)
    assert listed == [tree, tree]
