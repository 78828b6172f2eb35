"""One flock helper: hold a lock file, try it, wait for it with a deadline, ask who holds it.

fixloop's locks are `fcntl.flock`s on descriptors of its own: a killed holder lets go at once,
and a child that inherits the descriptor (a step's bash) holds the lock with it, so a runtime
that dies alone keeps its run live until its bash is done. (filelock would hide the descriptor.)

Threads of one process (a wave's tasks) take a `hold` lock in turn through a `threading.Lock` of
the path first, then the flock: a thread waiting for another of its process wakes the moment
that one lets go instead of polling the flock, and only other processes are polled for.

    with locks.hold(path, wait_s=120, refused=lambda: FixloopError(...)) as fd: ...
    fd = locks.open_held(path)            # held until os.close(fd); None when another holds it
    locks.is_held(path)                   # someone holds it now; changes nothing
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

POLL_S = 0.02
# One lock per lock file (by absolute path) for this process's threads; made once, kept.
_IN_PROCESS: dict[str, threading.Lock] = {}
_REGISTRY = threading.Lock()


def _in_process(path: Path) -> threading.Lock:
    with _REGISTRY:
        return _IN_PROCESS.setdefault(str(path.absolute()), threading.Lock())


def open_held(path: Path, *, wait_s: float = 0.0, poll_s: float = POLL_S) -> int | None:
    """An open descriptor of `path` (created when missing) holding its exclusive lock, taken
    within `wait_s` seconds; None (nothing left open) when another holder kept it that long."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(poll_s)
        except BaseException:
            os.close(fd)
            raise


@contextmanager
def hold(
    path: Path,
    *,
    wait_s: float,
    refused: Callable[[], Exception],
    poll_s: float = POLL_S,
) -> Iterator[int]:
    """Hold `path`'s lock for the `with` block (its folder made); yields the descriptor. Raises
    `refused()` when another holder keeps it for more than `wait_s` seconds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    turn = _in_process(path)
    taken = turn.acquire(timeout=wait_s) if wait_s > 0 else turn.acquire(blocking=False)
    if not taken:
        raise refused()
    try:
        fd = open_held(path, wait_s=max(0.0, deadline - time.monotonic()), poll_s=poll_s)
        if fd is None:
            raise refused()
        try:
            yield fd
        finally:
            os.close(fd)
    finally:
        turn.release()


def is_held(path: Path, *, shared: bool = False) -> bool:
    """Whether some process holds `path`'s lock now (a missing file: no); changes nothing.
    `shared`: probe with a shared lock, which needs only read access to the file."""
    try:
        fd = os.open(path, os.O_RDONLY if shared else os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


__all__ = ["POLL_S", "hold", "is_held", "open_held"]
