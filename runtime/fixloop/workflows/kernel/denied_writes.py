"""What a fixer's refused writes mean for the finding: more scope it wanted, or a forbidden move.

A backend refuses a write outside the call's files and records it (`AgentOutcome.denied`); the
model may then ignore the refusal and report a fix made within its files. The refusal still says
something the report does not: the fix the model wanted touches another file. A workflow sorts the
refused paths here, in the same clean repository form as every other path it handles:

- `outside_scope`: files of the repository (or worktree) the call was not assigned. fix-findings
  turns them into a scope-expansion request; review-fix, which has none, skips the finding.
- `forbidden`: a path outside the repository, into `.git`, or through a symbolic link leading
  out. No approval can grant those, so the attempt fails, with the path and why.

A refusal that names no path (a malformed tool call) or a file the call was assigned is neither:
no write happened and no other file is wanted.

A write nothing refused (a shell command, a backend that does not report) is found in the tree
afterwards (`tree_guard`), put back, and joins the same record through `with_stray`: the files
go to `unasked` (the same request, "changed without asking"), what could not be put back to
`forbidden`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fixloop.agents.backend import DeniedWrite
from fixloop.diagnostics import FixloopError
from fixloop.steps.paths import check_path, path_problem


@dataclass(frozen=True)
class Denials:
    outside_scope: tuple[str, ...] = ()  # clean repository-relative paths, first refusal first
    forbidden: tuple[str, ...] = ()  # "<path as named>: <why it can never be granted>"
    unasked: tuple[str, ...] = ()  # other repository files changed unrefused, then put back

    def __bool__(self) -> bool:
        return bool(self.outside_scope or self.forbidden or self.unasked)

    def with_stray(self, changed: Sequence[str], unrestorable: Sequence[str]) -> Denials:
        """These denials plus what the call changed outside its files without being refused."""
        unasked = tuple(p for p in dict.fromkeys(changed) if p not in self.outside_scope)
        forbidden = tuple(dict.fromkeys([*self.forbidden, *unrestorable]))
        return replace(self, unasked=unasked, forbidden=forbidden)


def sort_denials(root: Path, denied: Iterable[DeniedWrite], scope: Sequence[str]) -> Denials:
    """The refused writes of one call in `root`, whose assigned files were `scope`."""
    assigned = {_clean(root, path) or path for path in scope}
    outside: dict[str, None] = {}
    forbidden: dict[str, None] = {}
    for denial in denied:
        raw = denial.path.strip()
        if not raw:
            continue
        relative = _inside(root, raw)
        if relative is None:
            forbidden[f"{raw}: outside the repository"] = None
            continue
        problem = path_problem(root, relative)
        if problem is not None:
            forbidden[f"{raw}: {problem.removeprefix(repr(relative) + ': ')}"] = None
            continue
        clean = check_path(root, relative)
        if clean not in assigned:
            outside[clean] = None
    return Denials(tuple(outside), tuple(forbidden))


def tried_to_edit(files: Sequence[str], scope: Sequence[str]) -> str:
    """One sentence for a report or a question: which files, and that they were refused."""
    named = ", ".join(files)
    assigned = ", ".join(scope) or "none"
    return (
        f"The fixer tried to edit {named}, outside this finding's files ({assigned}); "
        "the write was refused."
    )


def changed_unasked(files: Sequence[str], scope: Sequence[str]) -> str:
    """One sentence: which files the fixer changed outside its files, unasked and unrefused."""
    assigned = ", ".join(scope) or "none"
    return (
        f"The fixer changed {', '.join(files)} without asking, outside this finding's files "
        f"({assigned}); the changes were put back as they were."
    )


def _inside(root: Path, raw: str) -> str | None:
    """`raw` relative to `root` (an absolute path may name a file inside it), or None."""
    path = Path(raw)
    if not path.is_absolute():
        return raw
    for base in dict.fromkeys((root, root.resolve())):
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            continue
    return None


def _clean(root: Path, path: str) -> str | None:
    try:
        return check_path(root, path)
    except FixloopError:
        return None
