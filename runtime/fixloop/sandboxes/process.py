"""One command as a process group of its own: captured, timed, and killed as a whole.

The local and bubblewrap sandboxes both start their command this way (bubblewrap's command is
`bwrap … -- argv`). The group is killed on timeout, and again once the command has ended, so a
background child it left behind does not outlive it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from contextlib import suppress
from pathlib import Path

from fixloop.sandboxes.capture import Drain, pipe_chunks
from fixloop.sandboxes.protocol import SandboxResult, not_found

EXIT_CANNOT_RUN = 126
DRAIN_GRACE_S = 5.0


def find_program(argv0: str, cwd: Path, path: str | None) -> bool:
    """Whether `argv0` names a program the command could start (as execvp would find it)."""
    if "/" in argv0:
        candidate = cwd / argv0
        return candidate.is_file() and os.access(candidate, os.X_OK)
    return shutil.which(argv0, path=path) is not None


def run_process_group(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    cap: int,
    kind: str,
) -> SandboxResult:
    start = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        return not_found(argv[0], kind, time.monotonic() - start)
    except OSError as exc:
        message = f"{argv[0]}: cannot run: {exc.strerror or exc} (in the {kind} sandbox)\n"
        return SandboxResult(EXIT_CANNOT_RUN, "", message, False, time.monotonic() - start)
    assert process.stdout is not None and process.stderr is not None
    drains = [Drain(pipe_chunks(process.stdout), cap), Drain(pipe_chunks(process.stderr), cap)]
    for drain in drains:
        drain.start()
    # A timer, not wait(timeout=): Popen.wait with a timeout polls with sleeps of up to 50 ms.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        kill_group(process.pid)

    timer = threading.Timer(timeout_s, expire)
    timer.start()
    try:
        process.wait()
    finally:
        timer.cancel()
        # Also on an exception here (Ctrl-C): nothing of the command outlives the call.
        kill_group(process.pid)
    deadline = time.monotonic() + DRAIN_GRACE_S
    for drain, stream in zip(drains, (process.stdout, process.stderr), strict=True):
        drain.join(timeout=max(deadline - time.monotonic(), 0.0))
        # A process that left the group (setsid) may hold the pipe open: closing it under the
        # reading thread would block until that process ends, so only a drained pipe is closed.
        if not drain.is_alive():
            stream.close()
    code = process.returncode
    stdout, stderr = (drain.output.text() for drain in drains)
    return SandboxResult(
        128 - code if code < 0 else code,
        stdout,
        stderr,
        expired.is_set(),
        time.monotonic() - start,
    )


def kill_group(pgid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
