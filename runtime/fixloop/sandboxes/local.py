"""The local sandbox: a plain subprocess in a process group of its own. It is NOT isolation.

The command sees and may change everything the user running fixloop may: files outside the
worktree, the network, other processes. What it does give: an argv (no shell), a clean
environment, a timeout that kills the whole process group, and capped output. A process that
starts a session of its own (`setsid`) leaves the group and escapes the kill, and a SIGKILL of
fixloop itself leaves a running command behind. Use bwrap or docker where that matters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from fixloop.sandboxes.background import Background
from fixloop.sandboxes.process import find_program, run_process_group, start_process_group
from fixloop.sandboxes.protocol import (
    DEFAULT_TIMEOUT_S,
    OUTPUT_CAP_BYTES,
    SandboxBase,
    SandboxChoice,
    SandboxResult,
    checked_argv,
    not_found,
)

KIND = "local"
NOT_ISOLATED = "not isolation: commands can write outside the worktree and use the network"


class LocalSandbox(SandboxBase):
    def __init__(
        self,
        worktree: Path,
        *,
        reason: str = NOT_ISOLATED,
        output_cap: int = OUTPUT_CAP_BYTES,
        services: Mapping[str, Path] | None = None,
    ) -> None:
        super().__init__(SandboxChoice(KIND, reason), worktree, output_cap, services)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> SandboxResult:
        words = checked_argv(argv)
        where = self.checked_cwd(cwd)
        environment = self._environment(env)
        if not find_program(words[0], where, environment.get("PATH")):
            return not_found(words[0], KIND)
        return run_process_group(
            words, cwd=where, env=environment, timeout_s=timeout_s, cap=self.output_cap, kind=KIND
        )

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        name: str = "",
    ) -> Background:
        words = checked_argv(argv)
        where = self.checked_cwd(cwd)
        environment = self._environment(env)
        return start_process_group(words, words, cwd=where, env=environment, kind=KIND)

    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        base = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(Path.home())}
        return self.environment(base, env)
