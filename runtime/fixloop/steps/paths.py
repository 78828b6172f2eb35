"""Repository paths as data: THE safe-path rule, then handed to bash as a NUL-separated file.

A path that an agent, a finding or a review names is refused when it could reach outside the
repository or confuse a command:

- empty, or holding a NUL or newline character;
- absolute;
- with a `..` component;
- with a `.git` component at any depth, in any letter case (`sub/.git/config` too);
- passing through a directory that is a symbolic link;
- ending in a symbolic link whose target, judged the same way (at most 40 links deep), is
  refused or leads outside the repository. A link to a fine repository path is data: git stores
  the link itself and nothing here follows it.

A leading `-` is allowed: a user's `-notes.txt` is a repository file fixloop must be able to fix
and put back; every step passes paths after `--`, as `./path` or through `--pathspec-from-file`,
so no command reads one as an option (docs/step-library.md).

The model's file tools add one rule of their own (`hard_link_problem`): a regular file with more
than one name is refused. A hard link the model's shell made to a file outside the repository is
a path inside it that passes every rule above, and a write through it changes the other file too;
git and the steps see an ordinary file, so the rule belongs to the tools, not to the paths a step
is handed. It holds at the moment a tool opens the file, not against a process racing the tool
(the run owns its worktree).

This module is the rule's only Python definition; the shared step library
(`workflows/lib/fixloop.sh`, `fixloop_refuse_unsafe_path`) is its only bash one, and
`tests/steps/safe_path_cases.yaml` holds the cases on which both must agree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from fixloop.diagnostics import Diagnostic, FixloopError

MAX_LINKS = 40
_LINK_OUT = "a symbolic link that leads outside the repository"
_LINK_TO_ROOT = "a symbolic link to the repository itself"


def lexical_problem(raw: str) -> str | None:
    """The part of the rule that needs no file system: why `raw` is refused, or None."""
    if not raw:
        return "empty"
    if "\0" in raw or "\n" in raw:
        return "holds a NUL or newline character"
    if raw.startswith("/"):
        return "absolute paths are refused; name files relative to the repository"
    parts = _parts(raw)
    for part in parts:  # the first offending component names the reason, as in bash
        if part == "..":
            return "'..' could leave the repository"
        if part.lower() == ".git":
            return "paths inside .git are refused"
    if not parts:
        return "names the repository itself, not a file"
    return None


def _parts(raw: str) -> list[str]:
    return [part for part in raw.split("/") if part not in ("", ".")]


def _link_target_parts(root: Path, parts: list[str], target: str) -> list[str] | str:
    """A link's target as components from the repository root, or why it leaves it."""
    if not target.startswith("/"):
        return [*parts[:-1], *target.split("/")]
    for base in dict.fromkeys((str(root.absolute()), str(root.resolve()))):
        if target == base:
            return _LINK_TO_ROOT
        if target.startswith(base + "/"):
            return target[len(base) + 1 :].split("/")
    return _LINK_OUT


def _normalise(root: Path, joined: list[str]) -> list[str] | str:
    """`..` resolved against the components before it; stepping back over a symbolic link (whose
    `..` is its target's parent, not this folder) or above the root is refused."""
    stack: list[str] = []
    for part in joined:
        if part in ("", "."):
            continue
        if part != "..":
            stack.append(part)
        elif not stack:
            return _LINK_OUT
        elif root.joinpath(*stack).is_symlink():
            return f"passes through the symbolic link {'/'.join(stack)}"
        else:
            stack.pop()
    return stack or _LINK_TO_ROOT


def unsafe_reason(root: Path, raw: str) -> str | None:
    """Why `raw` may not name a file of the repository at `root`, or None when it may."""
    path, depth, followed = raw, 0, False
    reason: str | None = None
    while reason is None:
        reason = lexical_problem(path)
        if reason is not None:
            break
        parts = _parts(path)
        for index in range(1, len(parts)):
            if root.joinpath(*parts[:index]).is_symlink():
                reason = f"passes through the symbolic link {'/'.join(parts[:index])}"
                break
        if reason is not None or not root.joinpath(*parts).is_symlink():
            break
        # The last component is a symbolic link: judge its target as a path of its own.
        followed = True
        if depth >= MAX_LINKS:
            reason = "too many levels of symbolic links"
            break
        depth += 1
        target = str(root.joinpath(*parts).readlink())
        if "\n" in target:
            reason = "holds a NUL or newline character"
            break
        joined = _link_target_parts(root, parts, target)
        resolved = joined if isinstance(joined, str) else _normalise(root, joined)
        if isinstance(resolved, str):
            reason = resolved
            break
        path = "/".join(resolved)
    if reason is None:
        return None
    if followed and not reason.startswith("a symbolic link"):
        reason = f"a symbolic link to a refused path ({reason})"
    return reason


def hard_link_problem(target: Path, shown: str) -> str | None:
    """Why the file tools refuse the existing file `target` (named `shown`) for its links: it is a
    regular file with more than one name. None for one name, a folder or no file at all."""
    try:
        info = target.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink <= 1:
        return None
    return (
        f"{shown!r}: a hard link (the file has {info.st_nlink} names, one may be outside the "
        "repository); the tools read and write only files with one name"
    )


def path_problem(root: Path, raw: str) -> str | None:
    """`unsafe_reason` naming the path (`'raw': reason`), or None."""
    reason = unsafe_reason(root, raw)
    return None if reason is None else f"{raw!r}: {reason}"


def check_path(root: Path, raw: str, where: str = "paths") -> str:
    """`raw` as a clean repository-relative POSIX path, or a FixloopError saying why not."""
    problem = path_problem(root, raw)
    if problem is not None:
        raise FixloopError(Diagnostic(where, 1, 1, "unsafe-path", problem))
    return "/".join(_parts(raw))


def write_paths_file(target: Path, root: Path, paths: Iterable[str]) -> Path:
    """Write checked `paths` NUL-separated to `target` (what a step reads through `PATHS_FILE`)."""
    checked = [check_path(root, raw) for raw in paths]
    target.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(os.fsencode(path) + b"\0" for path in checked)
    target.write_bytes(data)
    return target
