"""Content versions of files and revisions of a whole worktree.

A file's *version* is the sha256 of its bytes: `read_file` hands it out, and an edit must name
the version it was based on, so an edit made after the file changed (by another edit, a test, a
person) is refused instead of overwriting what the model never saw.

A worktree's *revision* is one hash over every file git shows there (tracked, and untracked
but not ignored): path, executable bit and content. A test result holds only for the revision it
ran on; any change of any file, by any means, makes a new revision.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from fixloop.gitrepo import visible_files

MAX_FILE_BYTES = 1 << 20  # the largest file read, edited or created through the tools
REVISION_LENGTH = 16  # hex digits shown and compared: ample for one run's revisions


def file_version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def workspace_revision(tree: Path) -> str:
    digest = hashlib.sha256()
    for path in visible_files(tree):
        full = tree / path
        digest.update(os.fsencode(path) + b"\0")
        if full.is_symlink():
            digest.update(b"link\0" + os.fsencode(full.readlink()))
        elif full.is_file():
            executable = b"x" if os.access(full, os.X_OK) else b"-"
            digest.update(executable + hashlib.sha256(full.read_bytes()).digest())
        else:
            digest.update(b"absent")
        digest.update(b"\0")
    return digest.hexdigest()[:REVISION_LENGTH]


__all__ = ["MAX_FILE_BYTES", "file_version", "workspace_revision"]
