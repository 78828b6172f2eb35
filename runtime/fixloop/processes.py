"""One child in its own process group: capped output, a timer, inherited descriptors, a group kill.

    done = processes.run(["bash", "-c", script], cwd=repo, env=env, timeout_s=300, cap=1 << 20)
    done.returncode, done.stdout, done.stderr, done.timed_out, done.duration_s

A step's bash, a sandbox's command and a headless browser all start this way. The child gets a
session of its own, so on timeout (and again once it has ended) its whole group is killed: a
background child it left behind does not outlive the call. Its output is drained in the
background (a full pipe would stall it) and capped: a test run can print gigabytes, and what a
person or a model needs is how it started and how it ended, so the first and the last `cap // 2`
bytes are kept and the rest is counted. An OSError starting the child goes to the caller, which
knows what the child was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

DRAIN_GRACE_S = 5.0


class CappedOutput:
    """The first and the last `cap // 2` bytes of a stream fed chunk by chunk; the rest counted."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 0)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.half:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= self.half:
                self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.half :] if self.half else b""
        omitted = self.total - len(self.head) - len(tail)
        if omitted <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        middle = f"\n[… {omitted} bytes omitted …]\n"
        return self.head.decode("utf-8", "replace") + middle + tail.decode("utf-8", "replace")


class Drain(threading.Thread):
    """Feeds every chunk of `chunks` into a CappedOutput, in the background."""

    def __init__(self, chunks: Callable[[], Iterable[bytes]], cap: int) -> None:
        super().__init__(daemon=True)
        self.chunks = chunks
        self.output = CappedOutput(cap)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for chunk in self.chunks():
                self.output.feed(chunk)
        except Exception as exc:  # reported by the owner, which knows what the stream was
            self.error = exc


def pipe_chunks(stream: IO[bytes]) -> Callable[[], Iterable[bytes]]:
    def chunks() -> Iterable[bytes]:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            yield chunk

    return chunks


@dataclass(frozen=True)
class Finished:
    """How the child ended: its exit code (negative: the signal that ended it) and its output."""

    returncode: int
    stdout: str
    stderr: str  # "" when stderr was merged into stdout
    timed_out: bool
    duration_s: float


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str],
    timeout_s: float,
    cap: int,
    pass_fds: Sequence[int] = (),
    merge_stderr: bool = False,
) -> Finished:
    """Run `argv` to its end (or its timeout) in a process group of its own; see the module doc."""
    start = time.monotonic()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    streams = [s for s in (process.stdout, process.stderr) if s is not None]
    drains = [Drain(pipe_chunks(stream), cap) for stream in streams]
    for drain in drains:
        drain.start()
    # A timer, not wait(timeout=): Popen.wait with a timeout polls with sleeps of up to 50 ms,
    # which would add that much latency to every step.
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
        # Also on an exception here (Ctrl-C): nothing of the child outlives the call.
        kill_group(process.pid)
    deadline = time.monotonic() + DRAIN_GRACE_S
    for drain, stream in zip(drains, streams, strict=True):
        drain.join(timeout=max(deadline - time.monotonic(), 0.0))
        # A process that left the group (setsid) may hold the pipe open: closing it under the
        # reading thread would block until that process ends, so only a drained pipe is closed.
        if not drain.is_alive():
            stream.close()
    texts = [drain.output.text() for drain in drains] + [""]
    return Finished(
        process.returncode, texts[0], texts[1], expired.is_set(), time.monotonic() - start
    )


def kill_group(pgid: int) -> None:
    """SIGKILL the process group `pgid` (gone already, or not ours: nothing to do)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


__all__ = ["CappedOutput", "Drain", "Finished", "kill_group", "pipe_chunks", "run"]
