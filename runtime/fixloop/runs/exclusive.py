"""One run of a workflow at a time: in a repository (work in the user's own tree), or on one input.

review-fix works in a worktree of its own, so two runs of it never meet. fix-findings edits and
stages in the user's working tree and index: two runs at once would take each other's edits for a
fixer's stray writes and put them back, or stage each other's half-made fixes. So a run holds
`<state dir>/locks/<workflow>.lock` (an flock: a killed holder lets go) for as long as it works,
and writes who it is into the file; a second run waits up to its `wait_s`, then refuses with one
line naming the run and process that hold it. Nothing of the second run exists before it has the
lock: no run folder, no change.

The workflows with a worktree of their own never meet in git, but two runs of one on the same
input would: they share its state (fix-engine's section folder, the statuses execute-wave writes
into tasks.json) or fix and report the same findings twice. So `input_claim` holds a lock named
after the workflow and the input's resolved path, from before the input is read (a second run
must not be told to resume the first, live one) to the end of the run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo, locks
from fixloop.diagnostics import Diagnostic, FixloopError, display_path

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
    state_dir: Path,
    workflow: str,
    *,
    where: str,
    wait_s: float = 0.0,
    lock: str | None = None,
    on: str = "in this repository",
    then: str = "run again when it is done, or with --wait SECONDS",
) -> Iterator[Claim]:
    """Hold the workflow's lock (`lock`, default the workflow's name) for this repository;
    FixloopError (exit 2) when another run keeps it for longer than `wait_s` seconds."""
    path = lock_path(state_dir, lock or workflow)

    def refused() -> FixloopError:
        waited = f" (waited {wait_s:g}s)" if wait_s else ""
        problem = f"another {workflow} run ({_who(path)}) is working {on}{waited}; {then}"
        return FixloopError(Diagnostic(where, 1, 1, "busy", problem))

    with locks.hold(path, wait_s=wait_s, refused=refused, poll_s=POLL_S) as fd:
        claim = Claim(fd)
        claim.record("starting")
        yield claim


@contextmanager
def input_claim(workflow: str, repo: Path, given: Path | None) -> Iterator[Claim | None]:
    """Hold `workflow`'s lock on the input `given` (a path as the user typed it) in the
    repository at `repo`. Yields None, claiming nothing, when there is no input or no
    repository to claim it in: reading the input then says what is wrong, in its own words."""
    try:
        state_dir = gitrepo.state_dir_of(gitrepo.toplevel(repo))
        resolved = given.resolve() if given is not None else None
        (state_dir / "locks").mkdir(parents=True, exist_ok=True)  # a read-only one: not here
    except (FixloopError, OSError, RuntimeError):
        resolved = None
    if resolved is None:
        yield None
        return
    key = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    with exclusive_run(
        state_dir,
        workflow,
        where=display_path(resolved),
        lock=f"{workflow}-{key}",
        on="on this input",
        then="run again when it is done",
    ) as claim:
        yield claim


def _who(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return f"{data['run']}, pid {data['pid']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "run unknown"


__all__ = ["Claim", "exclusive_run", "holder", "input_claim", "lock_path"]
