"""One run of a workflow at a time in a repository, for workflows that work in the user's own tree.

review-fix works in a worktree of its own, so two runs of it never meet. fix-findings edits and
stages in the user's working tree and index: two runs at once would take each other's edits for a
fixer's stray writes and put them back, or stage each other's half-made fixes. So a run holds
`<state dir>/locks/<workflow>.lock` (an flock: a killed holder lets go) for as long as it works,
and writes who it is into the file; a second run waits up to its `wait_s`, then refuses with one
line naming the run and process that hold it. Nothing of the second run exists before it has the
lock: no run folder, no change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixloop import locks
from fixloop.diagnostics import Diagnostic, FixloopError

POLL_S = 0.1


@dataclass(frozen=True)
class Claim:
    """The held lock; `record` says which run holds it, for whoever waits."""

    fd: int

    def record(self, run_id: str) -> None:
        data = json.dumps({"run": run_id, "pid": os.getpid()}).encode("utf-8")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)


def lock_path(state_dir: Path, workflow: str) -> Path:
    return state_dir / "locks" / f"{workflow}.lock"


def holder(state_dir: Path, workflow: str) -> str | None:
    """Who holds the workflow's lock right now ("RUN_ID, pid N"), or None; changes nothing."""
    path = lock_path(state_dir, workflow)
    return _who(path) if locks.is_held(path, shared=True) else None


@contextmanager
def exclusive_run(
    state_dir: Path, workflow: str, *, where: str, wait_s: float = 0.0
) -> Iterator[Claim]:
    """Hold the workflow's lock for this repository; FixloopError (exit 2) when another run of
    it keeps the lock for longer than `wait_s` seconds."""
    path = lock_path(state_dir, workflow)

    def refused() -> FixloopError:
        waited = f" (waited {wait_s:g}s)" if wait_s else ""
        problem = (
            f"another {workflow} run ({_who(path)}) is working in this repository"
            f"{waited}; run again when it is done, or with --wait SECONDS"
        )
        return FixloopError(Diagnostic(where, 1, 1, "busy", problem))

    with locks.hold(path, wait_s=wait_s, refused=refused, poll_s=POLL_S) as fd:
        claim = Claim(fd)
        claim.record("starting")
        yield claim


def _who(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return f"{data['run']}, pid {data['pid']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "run unknown"


__all__ = ["Claim", "exclusive_run", "holder", "lock_path"]
