"""bash itself as the judge of syntax: which blocks `bash -n` refuses, in few processes.

tree-sitter-bash recovers from errors, and its recovery can swallow what bash refuses: an
unclosed quote turns every later command of the block into text, so a contract that forbids one
of them passes. So every block tree-sitter parsed cleanly is also read by `bash -n` (read, never
run). One process per block would dominate a check of a large pack, so the blocks go to bash
together, each as the body of a function of its own, and only a batch that bash refuses is split
in two and read again, down to the single block, which bash then reads alone for its own message
and line. A block that is broken only inside a batch (a `}` that closes its wrapper early) is
caught by tree-sitter, which reports any unbalanced brace or unclosed quote by itself.
"""

from __future__ import annotations

import os
import re
import select
import time
from collections.abc import Iterator, Sequence
from contextlib import suppress
from functools import cache
from pathlib import Path

from fixloop.records import record

_PIECE = 16384  # characters encoded at a time: at most 64 KiB, what a pipe takes at once
_TIMEOUT = 30  # seconds for one batch; bash reads megabytes of script in well under one


# Compiled on first need: only a block bash refuses is worded with it.
@cache
def _complaint_line() -> re.Pattern[str]:
    return re.compile(r"^bash: (?:line (\d+): )?")


@record(frozen=True)
class Refusal:
    line: int | None  # 1-based line in the block when bash names one
    message: str  # bash's first line of complaint, without its `bash: line N:` prefix


def _environment() -> dict[str, str]:
    # No BASH_ENV or ENV: a non-interactive bash would read the file they name.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


# Blocks tree-sitter cannot parse are asked about one by one (bash may accept what tree-sitter
# refuses: then it is only a warning). A pack of thousands of broken blocks would take a process
# each; past this many in one check, they stay errors without asking (failing closed).
MAX_SINGLE_QUESTIONS = 256
_asked = [0]


def start_check() -> None:
    """A new check: the budget of single questions is full again."""
    _asked[0] = 0


def accepts(script: str) -> bool:
    """`bash -n` ran and accepts `script`; False too once the check's budget is spent."""
    if _asked[0] >= MAX_SINGLE_QUESTIONS:
        return False
    _asked[0] += 1
    return _run(script) == (True, None)


def _bash_n(script: str | Sequence[str]) -> str | None:
    """bash's complaint about `script` (or about `blocks`, each wrapped in a function of its
    own), or None when it accepts it (or cannot be run: then tree-sitter's reading stands)."""
    return _run(script)[1]


def _run(script: str | Sequence[str]) -> tuple[bool, str | None]:
    """(bash ran, its first line of complaint or None)."""
    try:
        code, errors = _bash(_pieces(script))
    except (OSError, TimeoutError):
        return False, None
    if code == 0:
        return True, None
    text = errors.decode("utf-8", "replace")
    return True, next((line for line in text.splitlines() if line.strip()), "syntax error")


def _write_some(stdin: int, piece: memoryview, script: Iterator[bytes]) -> memoryview:
    """What is left to write after one write of what the pipe takes: the rest of `piece`, or
    the next piece of `script`; empty once all is written (or bash ended without reading it)."""
    try:
        piece = piece[os.write(stdin, piece) :]
    except BrokenPipeError:
        return memoryview(b"")
    while not piece and (following := next(script, None)) is not None:
        piece = memoryview(following)
    return piece


def _pieces(script: str | Sequence[str]) -> Iterator[bytes]:
    """What bash reads, encoded a piece at a time: a large block (megabytes) is never held a
    second and a third time, wrapped and then encoded whole, while its tree is alive."""
    if isinstance(script, str):
        yield from _encoded(script)
        return
    for index, text in enumerate(script):
        yield f"__fixloop_block_{index}() {{\n".encode()
        yield from _encoded(text)
        yield b"\n}\n"


def _encoded(text: str) -> Iterator[bytes]:
    # By characters, so no piece splits one; surrogateescape gives back the bytes read.
    for start in range(0, len(text), _PIECE):
        yield text[start : start + _PIECE].encode("utf-8", "surrogateescape")


def _bash(script: Iterator[bytes]) -> tuple[int, bytes]:
    """`bash -n` reading `script` on its stdin: its exit code and what it wrote on stderr.

    Started with `os.posix_spawn`, not `subprocess`: that module and what it imports (`locale`,
    `signal`, `selectors`) were 3 ms of a one-document `fixloop check` (bench/startup.py), for
    one child that needs only two pipes and a deadline. Every other descriptor of this process
    is non-inheritable (PEP 446) and stays out of the child.
    """
    environment = _environment()
    candidates = (Path(folder, "bash") for folder in os.get_exec_path(environment))
    program = next((p for p in candidates if p.is_file() and os.access(p, os.X_OK)), None)
    if program is None:
        raise FileNotFoundError("bash")
    stdin_read, stdin_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    try:
        pid = os.posix_spawn(
            program,
            ["bash", "-n"],
            environment,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, stdin_read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, stderr_write, 2),
            ],
        )
    except BaseException:
        for fd in (stdin_write, stderr_read):
            os.close(fd)
        raise
    finally:
        os.close(stdin_read)
        os.close(stderr_write)
    try:
        errors = _exchange(stdin_write, stderr_read, script, time.monotonic() + _TIMEOUT)
    except BaseException:
        with suppress(ProcessLookupError):
            os.kill(pid, 9)  # SIGKILL: a deadline passed, or the check was interrupted
        os.waitpid(pid, 0)
        raise
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), errors


def _exchange(stdin: int, stderr: int, script: Iterator[bytes], deadline: float) -> bytes:
    """Writes `script` to `stdin` while reading `stderr` (a full pipe either way would stall
    both sides), until the child closes stderr; then closes both. TimeoutError past `deadline`."""
    chunks: list[bytes] = []
    piece = memoryview(next(script, b""))
    poller = select.poll()
    poller.register(stderr, select.POLLIN)
    open_fds = {stderr}
    if piece:
        os.set_blocking(stdin, False)
        poller.register(stdin, select.POLLOUT)
        open_fds.add(stdin)
    else:
        os.close(stdin)
    try:
        while stderr in open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("bash -n")
            for fd, _ in poller.poll(left * 1000):
                if fd == stdin:
                    piece = _write_some(stdin, piece, script)
                    if not piece:
                        poller.unregister(stdin)
                        open_fds.discard(stdin)
                        os.close(stdin)
                elif chunk := os.read(stderr, 65536):
                    chunks.append(chunk)
                else:
                    poller.unregister(stderr)
                    open_fds.discard(stderr)
    finally:
        for fd in open_fds | {stderr}:
            os.close(fd)
    return b"".join(chunks)


def refusals(blocks: Sequence[str]) -> dict[int, Refusal]:
    """Index → what bash says, for each block `bash -n` refuses on its own."""
    found: dict[int, Refusal] = {}
    pending = [list(range(len(blocks)))] if blocks else []
    while pending:
        group = pending.pop()
        if len(group) == 1:
            complaint = _bash_n(blocks[group[0]])
            if complaint is not None:
                match = _complaint_line().match(complaint)
                line = int(match[1]) if match and match[1] else None
                found[group[0]] = Refusal(line, complaint[match.end() :] if match else complaint)
            continue
        if _bash_n([blocks[i] for i in group]) is not None:
            half = len(group) // 2
            pending += [group[:half], group[half:]]
    return found
