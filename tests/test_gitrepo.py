"""`gitrepo.changed_paths` names every path that differs from HEAD, with git's two letters, in
each state a tree can be in: staged, unstaged, untracked, renamed, intent-to-add, a type change,
a merge in conflict, names git would quote. And it runs nothing the repository's files name."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers.gitrepo import git

from fixloop import gitrepo
from fixloop.diagnostics import FixloopError

FILES = {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d/e.txt": "e\n", "sp ace.txt": "s\n"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    tree = tmp_path / "repo"
    tree.mkdir()
    git(tree, "init", "-q", "-b", "main")
    for name, text in {**FILES, "big.txt": "".join(f"line {i}\n" for i in range(50))}.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    (tree / ".gitignore").write_text("*.log\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "init")
    return tree


def _mixed(tree: Path) -> None:
    (tree / "a.txt").write_text("A\n")
    git(tree, "add", "a.txt")
    (tree / "a.txt").write_text("AA\n")
    (tree / "b.txt").write_text("B\n")
    (tree / "c.txt").unlink()
    git(tree, "rm", "-q", "--cached", "d/e.txt")
    (tree / "x" / "y").mkdir(parents=True)
    (tree / "x" / "y" / "z.txt").write_text("z\n")
    (tree / "ignored.log").write_text("i\n")
    (tree / "new.txt").write_text("n\n")
    git(tree, "add", "new.txt")
    (tree / "new.txt").write_text("n2\n")
    (tree / "sp ace.txt").write_text("S\n")
    (tree / "ünï\nline.txt").write_text("u\n")


def _renamed(tree: Path) -> None:
    git(tree, "mv", "big.txt", "moved.txt")
    (tree / "moved.txt").write_text((tree / "moved.txt").read_text() + "more\n")
    (tree / "ita.txt").write_text("i\n")
    git(tree, "add", "-N", "ita.txt")


def _typechange(tree: Path) -> None:
    (tree / "a.txt").unlink()
    (tree / "a.txt").symlink_to("b.txt")
    (tree / "c.txt").unlink()
    (tree / "c.txt").symlink_to("b.txt")
    git(tree, "add", "c.txt")
    os.utime(tree / "b.txt", (1, 1))  # touched, same bytes: no change


def _conflict(tree: Path) -> None:
    git(tree, "checkout", "-qb", "other")
    (tree / "a.txt").write_text("other\n")
    (tree / "b.txt").unlink()
    (tree / "both.txt").write_text("o\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "other")
    git(tree, "checkout", "-q", "main")
    (tree / "a.txt").write_text("main\n")
    (tree / "b.txt").write_text("main b\n")
    (tree / "both.txt").write_text("m\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "main")
    git(tree, "merge", "other", check=False)
    (tree / "c.txt").write_text("C\n")


CASES: dict[str, tuple[Callable[[Path], None], dict[str, str]]] = {
    "clean": (lambda tree: None, {}),
    "mixed": (
        _mixed,
        {
            "a.txt": "MM",
            "b.txt": " M",
            "c.txt": " D",
            "d/e.txt": "??",  # staged as deleted, still on disk: untracked
            "new.txt": "AM",
            "sp ace.txt": " M",
            "x/y/z.txt": "??",
            "ünï\nline.txt": "??",
        },
    ),
    "renamed": (_renamed, {"big.txt": "D ", "moved.txt": "AM", "ita.txt": " A"}),
    "type change": (_typechange, {"a.txt": " M", "c.txt": "M "}),
    "conflict": (_conflict, {"a.txt": "MM", "b.txt": "MM", "both.txt": "MM", "c.txt": " M"}),
}


@pytest.mark.parametrize("case", CASES)
def test_each_changed_path_with_its_two_letters(repo: Path, case: str) -> None:
    change, expected = CASES[case]
    change(repo)
    assert gitrepo.changed_paths(repo) == expected


def test_a_program_the_repository_names_does_not_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    program = tmp_path / "monitor.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(program))
    (repo / "a.txt").write_text("A\n")
    assert gitrepo.changed_paths(repo) == {"a.txt": " M"}
    assert not marker.exists()


def test_outside_a_repository_it_is_a_fixloop_error(tmp_path: Path) -> None:
    with pytest.raises(FixloopError, match="repository"):
        gitrepo.changed_paths(tmp_path / "nowhere")


def test_head_is_the_commit_checked_out_on_a_branch_detached_or_packed(repo: Path) -> None:
    tip = git(repo, "rev-parse", "HEAD").strip()
    assert gitrepo.head(repo) == tip
    git(repo, "pack-refs", "--all")
    assert gitrepo.head(repo) == tip
    (repo / "a.txt").write_text("A\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert gitrepo.head(repo) == tip


def test_head_of_a_branch_with_no_commit_is_a_fixloop_error(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    with pytest.raises(FixloopError, match="branch main has no commits yet"):
        gitrepo.head(tmp_path)
