"""The one Sandbox protocol: run an argv in a worktree, bounded in time and output.

    with open_sandbox("auto", worktree=wt, image=image, run_id=run.id) as sandbox:
        result = sandbox.run(["python3", "-m", "pytest", "-q"], cwd=wt, timeout_s=600)
        if result.ok: ...

Every sandbox takes the same inputs and answers the same way:
- `argv` is a list of words, never shell text: nothing is parsed, nothing is spliced.
- `cwd` must be the worktree or a folder inside it (default: the worktree).
- The command's environment is a small base (`PATH`, `HOME`, `TMPDIR`, `LANG`) plus `env`; the
  runtime's own environment is not passed through, so keys and tokens stay out unless a caller
  hands them in on purpose; variables naming host services (`SSH_AUTH_SOCK`, `DOCKER_HOST`,
  `DISPLAY`, D-Bus addresses) are dropped even then.
- stdin is empty; stdout and stderr are captured, each capped (head and tail kept).
- On timeout the whole process tree is killed and `timed_out` is set.
- A command killed by a signal exits 128 + the signal (137 for SIGKILL), as shells and Docker
  report it; a command that cannot be found exits 127.
- The sandbox is a context manager: leaving the block releases what it holds (for docker, any
  container still there), also when the block ends by an exception.

`start` confines a command that runs until it is stopped (a dev server) the same way, and hands
back a `Background` (`background.py`) instead of a result; the caller stops it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.sandboxes.background import Background
from fixloop.sandboxes.host_services import checked_services, without_host_services

DEFAULT_TIMEOUT_S = 300.0
OUTPUT_CAP_BYTES = 1 << 20  # per stream
EXIT_NOT_FOUND = 127
EXIT_KILLED = 128 + 9
PRIVATE_TMP = "/tmp"  # noqa: S108  (inside bwrap and docker a tmpfs of the sandbox's own)


@dataclass(frozen=True)
class SandboxResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class SandboxChoice:
    """Which sandbox runs the commands and why, in one line a user can read (and, for docker,
    the image the commands run in)."""

    kind: str
    reason: str
    image: str | None = None

    def __str__(self) -> str:
        return f"sandbox: {self.kind} ({self.reason})"


class Sandbox(Protocol):
    """Runs commands confined to one worktree (see the module docstring for the contract)."""

    @property
    def choice(self) -> SandboxChoice: ...

    @property
    def worktree(self) -> Path: ...

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> SandboxResult: ...

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        name: str = "",
    ) -> Background:
        """`argv` running in the background until the caller stops it; `name` names its
        container under docker (for recovery to find it). FixloopError when it cannot start."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


def sandbox_error(message: str, where: str = "--sandbox") -> FixloopError:
    """Bad sandbox input or an unusable sandbox: one line, exit 2."""
    return FixloopError(Diagnostic(where, 1, 1, "sandbox", message))


def checked_worktree(worktree: Path) -> Path:
    resolved = worktree.resolve()
    if not resolved.is_dir():
        raise sandbox_error(f"the worktree {worktree} is not a directory", "worktree")
    if resolved == Path("/"):
        raise sandbox_error("the worktree may not be the root directory", "worktree")
    return resolved


class SandboxBase:
    """What every sandbox shares: input checks, the base environment, the context manager."""

    def __init__(
        self,
        choice: SandboxChoice,
        worktree: Path,
        output_cap: int,
        services: Mapping[str, Path] | None = None,
    ) -> None:
        self._choice = choice
        self._worktree = checked_worktree(worktree)
        self.output_cap = output_cap
        try:
            # Host services handed in on purpose: bound at their paths, named by their variables.
            self.services = checked_services(services)
        except ValueError as exc:
            raise sandbox_error(str(exc), "services") from None

    @property
    def choice(self) -> SandboxChoice:
        return self._choice

    @property
    def worktree(self) -> Path:
        return self._worktree

    def checked_cwd(self, cwd: Path | None) -> Path:
        """`cwd` resolved; it must be the worktree or inside it (nothing else is writable)."""
        resolved = self._worktree if cwd is None else cwd.resolve()
        if not resolved.is_relative_to(self._worktree):
            raise sandbox_error(f"{cwd} is outside the sandbox's worktree {self._worktree}", "cwd")
        if not resolved.is_dir():
            raise sandbox_error(f"{cwd} is not a directory", "cwd")
        return resolved

    def environment(self, base: Mapping[str, str], env: Mapping[str, str] | None) -> dict[str, str]:
        # Variables naming a host service (DOCKER_HOST, SSH_AUTH_SOCK, DISPLAY, …) are dropped
        # even when a caller passes them: the sandbox hides those services, and a command
        # should not be told where they are.
        merged = without_host_services(
            {"TMPDIR": PRIVATE_TMP, "LANG": "C.UTF-8", **base, **(env or {})}
        ) | {variable: str(path) for variable, path in self.services.items()}
        for key, value in merged.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise sandbox_error(
                    f"environment variable {key!r}: not a valid name or value", "env"
                )
        return merged

    def close(self) -> None:
        """Nothing to release by default."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def checked_argv(argv: Sequence[str]) -> list[str]:
    if isinstance(argv, str):
        raise sandbox_error("a command is a list of words, never shell text", "argv")
    words = list(argv)
    if not words or not words[0]:
        raise sandbox_error("the command is empty", "argv")
    for word in words:
        if not isinstance(word, str) or "\0" in word:
            raise sandbox_error(f"{word!r}: every word must be text without NUL bytes", "argv")
    return words


def not_found(argv0: str, kind: str, duration_s: float = 0.0) -> SandboxResult:
    message = f"{argv0}: command not found (in the {kind} sandbox)\n"
    return SandboxResult(EXIT_NOT_FOUND, "", message, False, duration_s)
