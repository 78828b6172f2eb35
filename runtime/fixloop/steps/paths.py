"""Repository paths as data: checked, then handed to bash as a NUL-separated file.

A path that an agent or a finding names is refused when it could reach outside the repository:
absolute, containing `..`, inside `.git`, or passing through a symbolic link on the way (the last
component may itself be a symlink: git stores it as a link, it is never followed). The git-protocol
document repeats the lexical checks in bash, so a step run by hand is just as strict.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from fixloop.diagnostics import Diagnostic, FixloopError


def check_path(root: Path, raw: str, where: str = "paths") -> str:
    """`raw` as a clean repository-relative POSIX path, or a FixloopError saying why not."""

    def refuse(reason: str) -> FixloopError:
        return FixloopError(Diagnostic(where, 1, 1, "unsafe-path", f"{raw!r}: {reason}"))

    if not raw or "\0" in raw or "\n" in raw:
        raise refuse("empty, or holds a NUL or newline character")
    path = PurePosixPath(raw)
    if path.is_absolute():
        raise refuse("absolute paths are refused; name files relative to the repository")
    parts = [part for part in path.parts if part != "."]
    if not parts:
        raise refuse("names the repository itself, not a file")
    if ".." in parts:
        raise refuse("'..' could leave the repository")
    if parts[0] == ".git" or ".git" in parts:
        raise refuse("paths inside .git are refused")
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise refuse(f"passes through the symbolic link {current.relative_to(root)}")
    return "/".join(parts)


def path_problem(repo: Path, raw: str) -> str | None:
    """Why `raw` may not be handed to a fixer as a file of `repo`, or None when it may."""
    try:
        clean = check_path(repo, raw)
    except FixloopError as exc:
        return exc.diagnostics[0].message
    target = repo / clean
    if target.is_symlink():
        resolved = target.resolve()
        root = repo.resolve()
        if resolved != root and root not in resolved.parents:
            return f"{raw!r}: a symbolic link that leads outside the repository"
    return None


def write_paths_file(target: Path, root: Path, paths: Iterable[str]) -> Path:
    """Write checked `paths` NUL-separated to `target` (what a step reads through `PATHS_FILE`)."""
    checked = [check_path(root, raw) for raw in paths]
    target.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(os.fsencode(path) + b"\0" for path in checked)
    target.write_bytes(data)
    return target
