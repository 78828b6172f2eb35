"""Capped output: keep the first and the last `cap // 2` bytes of a stream, count the rest.

A test run can print gigabytes; what a person (or a model) needs is how it started and how it
ended. Fed chunk by chunk from a pipe (local, bwrap) or from the Docker log stream alike.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import IO


class CappedOutput:
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
