"""Temporary git repositories holding a user's work in progress, and a byte-exact snapshot of it.

`make_user_repo(path)` builds a repository on branch `main` with a few committed files (text,
binary, executable, nested) and then the three kinds of uncommitted work a user can have:

- a staged hunk: `notes.txt` has one change staged (as `git add -p` would leave it) and a second
  change on top of it that is not staged;
- an unstaged change: `README.md` edited, not staged;
- an untracked file: `scratch/todo.txt`.

`UserRepo.user_work()` captures exactly that work (index entries, staged blobs, file bytes, modes)
so a test can assert it is byte-identical after a run, a crash or a recovery. Files the fixes
touch are `src/app.py`, `src/util.py`, `assets/logo.bin`, `tools/run.sh`, `old.txt`: disjoint from
the user's work, so a fast-forward is possible.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

USER_FILES = ("notes.txt", "README.md", "scratch/todo.txt")


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


@dataclass(frozen=True)
class UserWork:
    """The user's uncommitted work, byte for byte."""

    index_entries: str  # `git ls-files -s` of the user's files (mode, blob, stage)
    staged_blobs: dict[str, bytes]
    files: dict[str, bytes | None]
    modes: dict[str, int | None]
    status: str  # porcelain status of the user's files


@dataclass(frozen=True)
class UserRepo:
    path: Path

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.path, *args, check=check)

    def head(self, ref: str = "main") -> str:
        return self.git("rev-parse", ref).strip()

    def user_work(self) -> UserWork:
        entries = self.git("ls-files", "-s", "--", *USER_FILES)
        blobs = {
            line.split("\t", 1)[1]: subprocess.run(
                ["git", "cat-file", "blob", line.split()[1]],
                cwd=self.path,
                capture_output=True,
                check=True,
            ).stdout
            for line in entries.splitlines()
        }
        files: dict[str, bytes | None] = {}
        modes: dict[str, int | None] = {}
        for name in USER_FILES:
            path = self.path / name
            files[name] = path.read_bytes() if path.exists() else None
            modes[name] = path.stat().st_mode if path.exists() else None
        status = self.git("status", "--porcelain=v1", "--untracked-files=all", "--", *USER_FILES)
        return UserWork(entries, blobs, files, modes, status)

    def branches(self) -> list[str]:
        return self.git("for-each-ref", "--format=%(refname:short)", "refs/heads/").split()

    def worktrees(self) -> list[str]:
        lines = self.git("worktree", "list", "--porcelain").splitlines()
        return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


def make_user_repo(path: Path) -> UserRepo:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "config", "user.name", "fixloop tests")
    git(path, "config", "user.email", "tests@fixloop.invalid")
    files = {
        "README.md": "# demo\n\nA small project.\n",
        "notes.txt": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n",
        "src/app.py": "def add(a, b):\n    return a - b\n",
        "src/util.py": "def name():\n    return 'util'\n",
        "old.txt": "to be deleted by a fix\n",
        "tools/run.sh": "#!/bin/sh\necho run\n",
    }
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (path / "assets").mkdir()
    (path / "assets" / "logo.bin").write_bytes(bytes(range(256)) * 4)
    git(path, "add", ".")
    git(path, "commit", "--quiet", "-m", "initial")
    # A staged hunk with an unstaged change on top of it in the same file.
    notes = path / "notes.txt"
    notes.write_text("ONE (staged)\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n", encoding="utf-8")
    git(path, "add", "notes.txt")
    notes.write_text(
        "ONE (staged)\ntwo\nthree\nfour\nfive\nsix\nseven\nEIGHT (unstaged)\n", encoding="utf-8"
    )
    (path / "README.md").write_text("# demo\n\nA small project, edited.\n", encoding="utf-8")
    (path / "scratch").mkdir()
    (path / "scratch" / "todo.txt").write_text("untracked notes\n", encoding="utf-8")
    return UserRepo(path)


def copy_repo(template: Path, target: Path) -> UserRepo:
    """A byte copy of a repository made by `make_user_repo` (faster than building it again)."""
    shutil.copytree(template, target, symlinks=True)
    return UserRepo(target)
