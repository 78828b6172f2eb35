"""Git's instruction files around an agent turn: as they were after it, or the turn is void.

Under bwrap and docker an agent's shell cannot write `.git` (`sandboxes.protected`), and
fixloop's own git never runs what is planted there (`hostgit`). Under local (no isolation) the
shell can still write it, and what it leaves would stay in the user's repository for *their*
git to run later. So around every agent turn (`agents.dispatch.Dispatcher.call`) the files git
takes instructions from are read before and compared after:

- the repository's `config`, every file under `hooks/`, `info/attributes`;
- for a linked worktree, its own git folder's `config.worktree`, `commondir` and `gitdir`, and the
  worktree's `.git` file.

The folders are found before the turn, from the tree as it was (a run worktree's through the
repository's own record, `hostgit.registered_gitdir`), never after it. A file that differs is put
back byte for byte (with its mode); a file that appeared is removed; the turn's outcome becomes
inconclusive, naming them, so every workflow fails that item closed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from fixloop.hostgit import registered_gitdir

_COMMON_FILES = ("config", "info/attributes")
_WORKTREE_FILES = ("config.worktree", "commondir", "gitdir")


@dataclass(frozen=True)
class _Kept:
    data: bytes
    mode: int


def _top(cwd: Path) -> Path | None:
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _read(path: Path) -> _Kept | None:
    try:
        if path.is_symlink() or not path.is_file():
            return _Kept(os.fsencode(path.readlink()), -1) if path.is_symlink() else None
        return _Kept(path.read_bytes(), path.stat().st_mode & 0o7777)
    except OSError:
        return None


class GitFiles:
    """The instruction files of the repository holding `cwd`, as they were when taken."""

    def __init__(self, top: Path, common: Path, own: Path | None) -> None:
        self.top, self.common, self.own = top, common, own
        self.kept = {path: _read(path) for path in self._paths()}

    @classmethod
    def of(cls, cwd: Path) -> GitFiles | None:
        """None when `cwd` is in no repository (nothing to guard)."""
        top = _top(cwd.resolve())
        if top is None:
            return None
        entry = top / ".git"
        if entry.is_dir() and not entry.is_symlink():
            return cls(top, entry, None)
        own = registered_gitdir(top) or _pointed(entry)
        if own is None:
            return None
        try:
            common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            common = own
        return cls(top, common, own)

    def _paths(self) -> list[Path]:
        paths = [self.common / name for name in _COMMON_FILES]
        hooks = self.common / "hooks"
        if hooks.is_dir():
            paths += sorted(p for p in hooks.rglob("*") if not p.is_dir() or p.is_symlink())
        if self.own is not None:
            paths += [self.own / name for name in _WORKTREE_FILES]
            paths.append(self.top / ".git")
        return paths

    def put_back(self) -> list[str]:
        """Every file that differs from when it was taken, back as it was (a new one removed);
        their names, as `.git/…` or the worktree git folder's."""
        changed = []
        for path in dict.fromkeys([*self.kept, *self._paths()]):
            was = self.kept.get(path)
            if _same(_read(path), was):
                continue
            changed.append(self._shown(path))
            _restore(path, was)
        return changed

    def _shown(self, path: Path) -> str:
        for base, name in ((self.own, "worktree git folder"), (self.common, ".git")):
            if base is not None and path.is_relative_to(base):
                inner = path.relative_to(base).as_posix()
                return f".git/{inner}" if name == ".git" else f"{name} {base.name}/{inner}"
        return path.relative_to(self.top).as_posix()


def _same(now: _Kept | None, was: _Kept | None) -> bool:
    """An empty file says no more than a missing one (Claude Code's CLI leaves an empty
    `config.worktree` behind): only content counts, and a mode or link change."""
    if now is None or was is None:
        other = now if was is None else was
        return other is None or (other.data == b"" and other.mode >= 0)
    return now == was


def _pointed(entry: Path) -> Path | None:
    try:
        text = entry.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    target = Path(text.removeprefix("gitdir: "))
    return (entry.parent / target).resolve() if not target.is_absolute() else target


def _restore(path: Path, was: _Kept | None) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            return  # a folder where a file was: left for the user; the turn still fails
        if path.is_symlink() or path.exists():
            path.unlink()
        if was is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        if was.mode < 0:
            path.symlink_to(os.fsdecode(was.data))
            return
        path.write_bytes(was.data)
        path.chmod(was.mode)
    except OSError:
        pass  # named all the same: the turn fails, and what could not be put back is said


__all__ = ["GitFiles"]
