"""What a fixer did with git in the user's tree, told from the repository before and after it.

fix-findings works in the user's own tree, so under the local sandbox a fixer's shell can run
git there: switch branch, commit, reset, stash. `GitState` is what the undo needs (HEAD's
commit and branch, the top stash entry) and the words for what changed; the undo itself is the
document step `undo-fixer-commit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo
from fixloop.diagnostics import FixloopError


@dataclass(frozen=True)
class GitState:
    commit: str  # HEAD's commit ("" with no commit)
    ref: str  # the branch HEAD names, refs/heads/NAME ("" when detached)
    stash: str  # the top stash entry ("" for none)
    branches: frozenset[str]

    @classmethod
    def capture(cls, repo: Path) -> GitState:
        try:
            handle = gitrepo.git_repo(repo).head
            commit = str(handle.commit.hexsha)
            ref = "" if handle.is_detached else str(handle.ref.path)
        except (FixloopError, ValueError, TypeError):
            commit, ref = "", ""
        branches = frozenset(gitrepo.refs(repo, "refs/heads/"))
        return cls(commit, ref, gitrepo.ref_value(repo, "refs/stash"), branches)

    def changes(self, repo: Path, after: GitState) -> list[str]:
        """What happened between this state and `after`, in words (empty: nothing)."""
        if not self.commit:
            return []
        did: list[str] = []
        name = self.ref.removeprefix("refs/heads/") or "the detached HEAD"
        if after.ref != self.ref:
            elsewhere = after.ref.removeprefix("refs/heads/") or "a detached HEAD"
            did.append(f"switched to {elsewhere}")
            if after.commit != self.commit:
                did.append(f"committed {after.commit[:12]} there")
        branch_now = gitrepo.ref_value(repo, self.ref) if self.ref else after.commit
        if branch_now != self.commit:
            verb = "committed on" if gitrepo.is_ancestor(repo, self.commit, branch_now) else "reset"
            did.append(f"{verb} {name} (to {branch_now[:12] or 'nothing'})")
        for created in sorted(after.branches - self.branches):
            did.append(f"created branch {created.removeprefix('refs/heads/')} (left in place)")
        if after.stash != self.stash:
            did.append("stashed (the stash was put back and dropped)")
        return did


__all__ = ["GitState"]
