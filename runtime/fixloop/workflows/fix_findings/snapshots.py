"""Per-file snapshots of working-tree files, kept in the run folder, for per-file rollback.

Taken before each fixer call, over exactly the files that call may write. Restoring puts each
file back to its snapshot bytes (or removes a file that did not exist), one file at a time and
only where it differs: never a tree-wide command, never a file outside the list. The snapshot is
on disk, so a later decision ("Discard R2 changes and revert") can still use it after a resume.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

Manifest = dict[str, str | None]  # path → snapshot file name, or None when the file was absent


def _readable(target: Path) -> bytes | None:
    # A symbolic link is left alone: git stores it as a link, and following it could leave the repo.
    return target.read_bytes() if target.is_file() and not target.is_symlink() else None


def take(repo: Path, files: Iterable[str], folder: Path) -> Manifest:
    folder.mkdir(parents=True, exist_ok=True)
    manifest: Manifest = {}
    for name in files:
        content = _readable(repo / name)
        if content is None:
            manifest[name] = None
            continue
        blob = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        (folder / blob).write_bytes(content)
        manifest[name] = blob
    return manifest


def restore(repo: Path, folder: Path, manifest: Mapping[str, str | None]) -> list[str]:
    """Put each file back as it was; returns the files that had to change."""
    changed: list[str] = []
    for name, blob in manifest.items():
        target = repo / name
        wanted = (folder / blob).read_bytes() if blob is not None else None
        if target.is_symlink() or _readable(target) == wanted:
            continue
        if wanted is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(wanted)
        changed.append(name)
    return changed
