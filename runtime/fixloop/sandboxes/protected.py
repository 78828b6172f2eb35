"""The paths inside a writable worktree that a sandboxed command sees read-only: git's own.

A command may edit any file of the worktree, but not what git on the host later reads as
instructions: the `.git` folder of a repository (its config, hooks, info/attributes) or a linked
worktree's `.git` file (the pointer to its git folder). bwrap binds each of them read-only on top
of the writable worktree; docker mounts them read-only inside the worktree's mount. A bind mount
cannot be removed or renamed from inside, so the pointer cannot be replaced either.

A linked worktree's own git folder lives in the main repository's `.git/worktrees/`, outside the
worktree: under bwrap the read-only root covers it, under docker it is not mounted at all.
"""

from __future__ import annotations

from pathlib import Path


def protected_paths(worktree: Path) -> list[Path]:
    """The entries of `worktree` a sandboxed command must not write (those that exist)."""
    entry = worktree / ".git"
    return [entry] if entry.exists() or entry.is_symlink() else []


__all__ = ["protected_paths"]
