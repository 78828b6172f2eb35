"""One command as a process group of its own (`fixloop.processes`), as a sandbox's result, or
started in the background (`background.ProcessBackground`).

The local and bubblewrap sandboxes both start their command this way (bubblewrap's command is
`bwrap … -- argv`).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from fixloop import processes
from fixloop.sandboxes.background import Background, ProcessBackground
from fixloop.sandboxes.protocol import SandboxResult, not_found, sandbox_error

EXIT_CANNOT_RUN = 126


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
        done = processes.run(argv, cwd=cwd, env=env, timeout_s=timeout_s, cap=cap)
    except FileNotFoundError:
        return not_found(argv[0], kind, time.monotonic() - start)
    except OSError as exc:
        message = f"{argv[0]}: cannot run: {exc.strerror or exc} (in the {kind} sandbox)\n"
        return SandboxResult(EXIT_CANNOT_RUN, "", message, False, time.monotonic() - start)
    code = done.returncode
    return SandboxResult(
        128 - code if code < 0 else code, done.stdout, done.stderr, done.timed_out, done.duration_s
    )


def start_process_group(
    words: list[str],
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    kind: str,
    session_inside: bool = False,
) -> Background:
    """`argv` (which runs `words`: the same list, or bwrap's around it) in the background;
    FixloopError when `words[0]` cannot be found or started. `session_inside`: `argv` starts
    `words` in a session of its own (bwrap's `--new-session`), which `stop` signals first."""
    if not find_program(words[0], cwd, env.get("PATH")):
        raise sandbox_error(f"{words[0]}: command not found (in the {kind} sandbox)", "argv")
    try:
        return ProcessBackground(argv, cwd=cwd, env=env, session_inside=session_inside)
    except OSError as exc:
        message = f"{argv[0]}: cannot run: {exc.strerror or exc} (in the {kind} sandbox)"
        raise sandbox_error(message, "argv") from None
