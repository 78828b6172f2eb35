"""Write scope: which files one agent call may change, decided before the tool runs.

A role is *told* to edit only its assigned files; this module *enforces* it. Every file-writing
tool call is checked against the call's worktree and, when the workflow assigned files (a fixer on
one finding), against those files. A denial is recorded as a `DeniedWrite`, so a workflow can turn
an out-of-scope edit into a scope-expansion request instead of losing it.

Paths are resolved the way the tool would resolve them (relative to the worktree, symlinks
followed), so `../x`, an absolute path elsewhere, or a symlink pointing out are all outside; where a
write lands must then pass the safe-path rule (`steps.paths`): the worktree's own git metadata (a
`.git` at any depth) is never writable by a role, and neither is a file with more than one name
(a hard link a shell command made: the other name may be outside the worktree).

Bash is not path-checked here: a shell command can write anywhere, and no honest parser of
arbitrary shell can promise otherwise. Roles that must not write get no Bash (or only
`Bash(git diff:*)`-style patterns), and sandboxes bound the rest.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.agents.backend import DeniedWrite
from fixloop.steps.paths import hard_link_problem, unsafe_reason

# Tool name → the input key holding the path it writes.
WRITE_TOOLS: Mapping[str, str] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


@dataclass(frozen=True)
class WriteScope:
    """The worktree a call runs in and, optionally, the only files (relative to it) it may write."""

    root: Path
    writable: tuple[str, ...] | None = None

    @classmethod
    def create(cls, root: Path, writable: tuple[str, ...] | None = None) -> WriteScope:
        resolved = root.resolve()
        files = None if writable is None else tuple(_normalise(resolved, e) for e in writable)
        return cls(resolved, files)

    def check(self, tool: str, tool_input: Mapping[str, Any]) -> DeniedWrite | None:
        """None when the call may run; otherwise the denial, with a reason the model can act on."""
        key = WRITE_TOOLS.get(tool)
        if key is None:
            return None
        raw = tool_input.get(key)
        if not isinstance(raw, str) or not raw.strip():
            # No path, so no file it wanted: "" rather than "None", which could name one.
            return DeniedWrite(
                tool, raw if isinstance(raw, str) else "", f"{tool} without a {key}: refused"
            )
        target = (self.root / raw).resolve()
        try:
            relative = target.relative_to(self.root)
        except ValueError:
            shown = self._shown(raw)
            return DeniedWrite(
                tool, shown, f"{shown} is outside the worktree {self.root}: writes stay inside it"
            )
        inside = relative.as_posix()
        # Where the write lands (symlinks followed) must pass the one safe-path rule too.
        reason = unsafe_reason(self.root, inside)
        if reason is not None and "inside .git" in reason:
            return DeniedWrite(tool, inside, "the worktree's git metadata is not writable")
        if reason is not None:
            return DeniedWrite(tool, inside, f"{inside} is refused: {reason}")
        linked = hard_link_problem(target, inside)
        if linked is not None:
            return DeniedWrite(tool, inside, linked)
        if self.writable is not None and inside not in self.writable:
            allowed = ", ".join(self.writable) or "none"
            return DeniedWrite(
                tool,
                inside,
                f"{inside} is not among the files assigned to this call ({allowed}); if the fix "
                "needs it, make no edits and return a scope-expansion request naming it",
            )
        return None

    def _shown(self, raw: str) -> str:
        """The path as the role named it, relative to the worktree when it spells a path inside
        it (a symlink that leads out is still reported under its own name)."""
        lexical = Path(os.path.normpath(self.root / raw))
        try:
            return lexical.relative_to(self.root).as_posix()
        except ValueError:
            return raw


def _normalise(root: Path, entry: str) -> str:
    """An assigned file as a worktree-relative POSIX path; one outside the worktree matches none."""
    path = Path(entry)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(root)
        except ValueError:
            return f"<outside the worktree: {entry}>"
    return posixpath.normpath(path.as_posix().replace("\\", "/"))


__all__ = ["WRITE_TOOLS", "WriteScope"]
