"""A command that runs in a sandbox until it is stopped (a dev server), not to its end.

    started = sandbox.start(["bash", "-c", line], cwd=worktree, env={"PORT": "5173"})
    try:
        for chunk in started.chunks(): ...   # its stdout and stderr, merged, as written
        started.poll()                        # None while it runs, else its exit code
    finally:
        started.stop(grace_s=5)               # SIGTERM, SIGKILL after the grace period

`Sandbox.run` waits for a command's end; a server never ends on its own. `start` confines a
command the same way `run` does (the same argv rules, cwd, environment and mounts), and hands
back a handle instead of a result. The caller must stop it; nothing here keeps its output (the
caller reads `chunks()` and decides what to keep, since a server may print secrets).

Local and bwrap start their command (for bwrap: `bwrap … -- argv`) as a process group of its own
(`ProcessBackground`); under bwrap `--die-with-parent` ends the sandbox with fixloop, even on a
SIGKILL. Docker starts a container (`container.py`), which only `stop` or recovery removes.

Under bwrap the command runs in a session of its own (`--new-session`, so that it cannot push
input into the terminal), outside its bwrap's group, and a bwrap that ends takes its sandbox down
with SIGKILL. So `stop` sends SIGTERM to bwrap's descendants first and lets them end within the
grace period (a server saves its state, removes its lock), and only then stops the group.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Protocol

from fixloop import process_table
from fixloop.processes import pipe_chunks


class Background(Protocol):
    """A command started in a sandbox, running until `stop`."""

    @property
    def pid(self) -> int:
        """The host process holding it (the command, or bwrap), 0 for a container."""
        ...

    @property
    def container(self) -> str:
        """The container's name under docker, else ""."""
        ...

    def chunks(self) -> Iterator[bytes]:
        """Its output (stdout and stderr merged) as it is written, until it ends."""
        ...

    def poll(self) -> int | None:
        """None while it runs, else its exit code (128 + N for a signal N)."""
        ...

    def stop(self, grace_s: float) -> None:
        """SIGTERM, then SIGKILL after `grace_s`; it is gone when this returns."""
        ...


class ProcessBackground:
    """A command as a host process group of its own (local; bwrap's `bwrap … -- argv`)."""

    container = ""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        session_inside: bool = False,
    ) -> None:
        self.session_inside = session_inside  # bwrap's command: see the module's docstring
        # OSError (no such program) goes to the caller, which knows what the command was.
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def chunks(self) -> Iterator[bytes]:
        assert self.process.stdout is not None
        yield from pipe_chunks(self.process.stdout)()

    def poll(self) -> int | None:
        code = self.process.poll()
        return None if code is None else (128 - code if code < 0 else code)

    def stop(self, grace_s: float) -> None:
        deadline = time.monotonic() + grace_s
        if self.session_inside and self.process.poll() is None:
            # Its leader is not reaped yet (waited for only here), so they are still below it.
            inside = partial(process_table.descendants, self.process.pid)
            process_table.stop(inside, grace_s, settle_s=1.0)
        # The leader is not reaped before it is waited for here, so its group id is still ours.
        process_table.signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(max(deadline - time.monotonic(), 0.5))
        except subprocess.TimeoutExpired:
            process_table.signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait()


__all__ = ["Background", "ProcessBackground"]
