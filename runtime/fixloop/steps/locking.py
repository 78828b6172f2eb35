"""The repository lock: one step at a time may change git metadata that all worktrees share.

Two runs on one repository each work in their own worktree, but branch creation and deletion,
`packed-refs`, tags and the user's own index are shared, and git answers contention on its lock
files by failing, not by waiting. A step that touches them says so in its fence info string,

    ```bash lock=repository

and the runtime then holds `<state dir>/locks/repository.lock` (an flock, so a killed holder
releases it) for the duration of the step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fixloop import locks
from fixloop.diagnostics import Diagnostic, FixloopError

LOCK_MARKER = "lock=repository"


@contextmanager
def repository_lock(state_dir: Path, timeout_s: float) -> Iterator[int]:
    """Hold the lock; yields its file descriptor (a child that inherits it holds it too)."""
    path = state_dir / "locks" / "repository.lock"

    def refused() -> FixloopError:
        problem = f"another run held the repository lock for more than {timeout_s:g}s"
        return FixloopError(Diagnostic(str(path), 1, 1, "lock", problem), exit_code=1)

    with locks.hold(path, wait_s=timeout_s, refused=refused) as fd:
        yield fd
