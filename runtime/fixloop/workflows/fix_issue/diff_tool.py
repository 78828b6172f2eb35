"""`git_diff`: the patch as it stands, shown to the issue-fixer before it says done.

The model gets what the run would hand back if it stopped now: the base commit, the path of the
patch file (exported the same way as `fix.patch`, through a temporary index, from the files its
tools changed) and a bounded preview of it. The patch file goes to the run's folder, outside the
worktree, so showing the diff changes no revision. Files changed some other way are named, not
included: the patch holds what the tools changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from fixloop.agents.toolbox import ToolReply, ToolSpec
from fixloop.gitrepo import changed_paths
from fixloop.workflows.fix_issue.tools import Handler, IssueTools, reply

PREVIEW_CHARS = 20_000
DIFF_NAME = "current.patch"


class DiffArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


SPEC = ToolSpec(
    "git_diff",
    "The patch of your changes so far, against the base commit: its path, and a preview.",
    DiffArgs.model_json_schema(),
)


@dataclass
class DiffTool:
    """`git_diff` for one run's toolbox (`tools`: what the patch is made of)."""

    tools: IssueTools
    base: str
    target: Path  # in the run's folder
    # Writes the patch of these files (base..worktree) to the path; returns how many it holds.
    export: Callable[[Path, Iterable[str]], int]

    def specs(self) -> Sequence[ToolSpec]:
        return [SPEC]

    def handlers(self) -> Mapping[str, Handler]:
        return {"git_diff": (DiffArgs, self.git_diff)}

    def git_diff(self, args: DiffArgs) -> ToolReply:
        del args  # no arguments: the base and the files are the run's, not the model's
        touched = sorted(self.tools.touched)
        outside = sorted(set(changed_paths(self.tools.worktree)) - set(touched))
        if touched:
            files = self.export(self.target, touched)
        else:
            self.target.write_bytes(b"")
            files = 0
        text = self.target.read_bytes().decode("utf-8", errors="replace")
        return reply(
            True,
            base_commit=self.base,
            patch_path=str(self.target),
            files=files,
            bytes=self.target.stat().st_size,
            preview=text[:PREVIEW_CHARS],
            truncated=len(text) > PREVIEW_CHARS,
            left_out=outside,  # changed, but not through the tools: not in the patch
        )


__all__ = ["DIFF_NAME", "SPEC", "DiffTool"]
