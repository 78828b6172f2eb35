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
into tasks.json) or fix and report the same findings twice. So `input_claim` holds a flock on
the input file itself, from before the input is read (a second run must not be told to resume
the first, live one) to the end of the run. A file that is replaced rather than written in place
(execute-wave's tasks.json) cannot carry the lock: that workflow holds `exclusive_run` with a
lock named after its input, taken once the input has been read and found good.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixloop import gitrepo, locks
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.runs.run import list_runs

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
def input_claim(workflow: str, repo: Path, given: Path | None) -> Iterator[bool]:
    """Hold an exclusive flock on the input file `given` itself (a path as the user typed it)
    while the block runs; yields whether it claimed anything. The lock is taken on the open
    file, so nothing is written, not even for input that turns out bad. No claim (False) for
    no input, or one that is not a regular file: reading it then says what is wrong."""
    try:
        fd = os.open(given, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC) if given else None
    except OSError:
        fd = None
    if fd is None:
        yield False
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            yield False
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            assert given is not None
            problem = (
                f"another {workflow} run ({_live_run(repo, workflow)}) is working on this "
                "input; run again when it is done"
            )
            raise FixloopError(Diagnostic(display_path(given), 1, 1, "busy", problem)) from None
        yield True
    finally:
        os.close(fd)


def _live_run(repo: Path, workflow: str) -> str:
    """The live runs of `workflow` in the repository at `repo`, for the busy line."""
    try:
        state_dir = gitrepo.state_dir_of(gitrepo.toplevel(repo))
    except (FixloopError, OSError):
        return "run unknown"
    live = [
        f"{info['id']}, pid {info.get('pid')}"
        for info in list_runs(state_dir)
        if info.get("live") and info.get("workflow") == workflow
    ]
    return "; ".join(live) or "starting"


def _who(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return f"{data['run']}, pid {data['pid']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "run unknown"


__all__ = ["Claim", "exclusive_run", "holder", "input_claim", "lock_path"]
