"""The run's sandbox: the sandbox chosen for a run, and the launcher its document steps call.

A workflow run holds one `RunSandbox` (the `SandboxChoice` made before the run began, the run's
id for the labels of docker containers). Python code of the run (the scripted model's shell)
runs commands through it directly:

    result = run_sandbox.run(["bash", "-c", line], cwd=worktree, timeout_s=60)

Document steps are bash, so the run also writes, into its folder (`write_launcher`):

    <run dir>/sandbox/config.json   this RunSandbox, as JSON
    <run dir>/sandbox/run           `run CMD ARG…`: runs the argv in the sandbox

The step runner hands `run` to every step of the run as `FIXLOOP_SANDBOX`, and the step
library's `fixloop_sandboxed CMD ARG…` calls it (or runs the argv directly where no runtime
set it). The launcher is the same few lines for every run and holds no value: it finds its
config next to itself and the runtime's interpreter in `FIXLOOP_PYTHON`, and runs
`fixloop sandbox exec --config CONFIG -- CMD ARG…` (`cli/sandbox_command.py`), which opens
the sandbox on the working tree
that holds the current directory, runs the argv there and hands back its output and exit code.

In a docker container the runtime's own interpreter does not exist: a command whose program is
the interpreter the config names (`FIXLOOP_PYTHON`, which runs the step library's Python tools)
runs with the image's `python3` instead, and the folders in `read_only` (the step library) are
mounted read-only at their own paths, so those tools are found.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.sandboxes.choose import KINDS, open_chosen
from fixloop.sandboxes.protocol import DEFAULT_TIMEOUT_S, Sandbox, SandboxChoice, SandboxResult
from fixloop.steps import SANDBOX_LAUNCHER

CONFIG_NAME = "config.json"
CONTAINER_PYTHON = "python3"

# The same text for every run: no path or value is written into it.
LAUNCHER_TEXT = """\
#!/bin/sh
# Runs `run CMD ARG...` in the sandbox this fixloop run chose (config.json next to this file).
# Written by the fixloop runtime; see docs/sandboxes.md.
here=$(dirname -- "$0")
exec "${FIXLOOP_PYTHON:-python3}" -m fixloop sandbox exec --config "$here/config.json" -- "$@"
"""


@dataclass(frozen=True)
class RunSandbox:
    """The sandbox of one run: what was chosen, for which run, and how its commands run."""

    choice: SandboxChoice
    run_id: str = ""
    # The runtime's interpreter; in a container the image's python3 runs in its place.
    python: str = ""
    # Folders a container also sees, read-only at their own paths (the step library).
    read_only: tuple[str, ...] = field(default=())
    timeout_s: float = DEFAULT_TIMEOUT_S
    # Host services one role call is handed on purpose (variable, socket path): the design
    # executor's screenshot service. Live only while the call runs, so never in config.json.
    services: tuple[tuple[str, str], ...] = field(default=())

    def open(self, worktree: Path, *, writable: Sequence[Path] = ()) -> Sandbox:
        """The chosen sandbox on `worktree` (a context manager; close it when done); `writable`:
        folders outside it the commands may also write (`open_chosen`)."""
        return open_chosen(
            self.choice,
            worktree=worktree,
            run_id=self.run_id,
            read_only=[Path(folder) for folder in self.read_only],
            writable=writable,
            services={variable: Path(path) for variable, path in self.services},
        )

    def argv(self, words: Sequence[str]) -> list[str]:
        """`words` as the sandbox runs them (the runtime's interpreter is the image's python3
        in a container)."""
        command = list(words)
        if self.choice.kind == "docker" and command and self.python and command[0] == self.python:
            command[0] = CONTAINER_PYTHON
        return command

    def run(
        self,
        words: Sequence[str],
        *,
        cwd: Path,
        worktree: Path | None = None,
        timeout_s: float | None = None,
    ) -> SandboxResult:
        """Run `words` in `cwd`, confined to `worktree` (default: `cwd`)."""
        with self.open(worktree or cwd) as sandbox:
            return sandbox.run(self.argv(words), cwd=cwd, timeout_s=timeout_s or self.timeout_s)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.choice.kind,
            "reason": self.choice.reason,
            "image": self.choice.image,
            "run_id": self.run_id,
            "python": self.python,
            "read_only": list(self.read_only),
            "timeout_s": self.timeout_s,
        }

    @classmethod
    def from_json(cls, data: Any) -> RunSandbox:
        """A RunSandbox from `to_json`'s shape; ValueError naming the key that does not fit."""
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        kind = data.get("kind")
        if kind not in KINDS or kind == "auto":
            raise ValueError(f"kind: expected one of local, bwrap, docker, got {kind!r}")
        texts = {key: data.get(key, "") for key in ("reason", "run_id", "python")}
        for key, value in texts.items():
            if not isinstance(value, str):
                raise ValueError(f"{key}: expected text")
        image = data.get("image")
        if image is not None and not isinstance(image, str):
            raise ValueError("image: expected text or null")
        read_only = data.get("read_only", [])
        if not isinstance(read_only, list) or not all(isinstance(p, str) for p in read_only):
            raise ValueError("read_only: expected a list of paths")
        timeout = data.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError("timeout_s: expected a number of seconds > 0")
        return cls(
            SandboxChoice(kind, texts["reason"], image=image),
            run_id=texts["run_id"],
            python=texts["python"],
            read_only=tuple(read_only),
            timeout_s=float(timeout),
        )


def write_launcher(run_dir: Path, sandbox: RunSandbox) -> Path:
    """Write the run's `sandbox/config.json` and its launcher `sandbox/run` (the path the step
    runner hands steps as FIXLOOP_SANDBOX); returns the launcher's path."""
    launcher = run_dir / SANDBOX_LAUNCHER
    folder = launcher.parent
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / CONFIG_NAME
    temporary = folder / f".{CONFIG_NAME}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(sandbox.to_json(), indent=2) + "\n", encoding="utf-8")
    temporary.replace(config)
    launcher.write_text(LAUNCHER_TEXT, encoding="utf-8")
    launcher.chmod(0o755)
    return launcher


def read_run_sandbox(config: Path) -> RunSandbox:
    """The RunSandbox a launcher's config holds; a FixloopError (exit 2) naming the file."""
    shown = display_path(config)
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
        return RunSandbox.from_json(data)
    except OSError as exc:
        problem = exc.strerror or str(exc)
    except ValueError as exc:  # json.JSONDecodeError is one
        problem = f"not a sandbox configuration: {exc}"
    raise FixloopError(Diagnostic(shown, 1, 1, "sandbox", problem))


def working_tree_of(cwd: Path) -> Path:
    """The folder a command started in `cwd` may write: the git working tree holding `cwd` (a
    linked worktree's own folder). Found by its `.git` entry, without starting git: this runs
    once per verification command."""
    start = cwd.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    raise FixloopError(
        Diagnostic(
            str(cwd),
            1,
            1,
            "sandbox",
            "not inside a git working tree: a sandboxed command runs in the run's worktree",
        )
    )


__all__ = [
    "LAUNCHER_TEXT",
    "RunSandbox",
    "read_run_sandbox",
    "working_tree_of",
    "write_launcher",
]
