"""The bwrap sandbox: bubblewrap namespaces around each command.

What the command gets:
- the host's root file system, read-only; the worktree bound read-write at its own path;
- a private, empty `/tmp` (a tmpfs; `HOME` points there) and a minimal `/dev`, `/proc` of its own
  (what under the host's /tmp it must still see is bound read-only on top: the step library, the
  run's folder, the interpreter environment fixloop runs from);
- new namespaces for everything bubblewrap can unshare: no network but a loopback of its own
  (`--unshare-net`, which also scopes abstract Unix sockets), its own process ids, IPC and host
  name;
- no host service: `/run` and `$XDG_RUNTIME_DIR`, where services keep their sockets, are an empty
  read-only tmpfs, and every other host socket still in view is covered with /dev/null
  (`host_services`);
- `--die-with-parent` and a process group of its own: on timeout the group is killed, and when
  fixloop dies, even by SIGKILL, the kernel kills the sandbox and everything inside it.

What it does not do: hide files (but /run, /tmp and $XDG_RUNTIME_DIR). The command can READ
whatever the user running fixloop can (that is how it finds the same python, compilers and
libraries as the host). It sets no memory or process limit. Use docker for a file system of
its own and resource limits.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from fixloop.sandboxes.background import Background
from fixloop.sandboxes.host_services import hidden_folders, host_sockets
from fixloop.sandboxes.process import find_program, run_process_group, start_process_group
from fixloop.sandboxes.protected import protected_paths
from fixloop.sandboxes.protocol import (
    DEFAULT_TIMEOUT_S,
    OUTPUT_CAP_BYTES,
    PRIVATE_TMP,
    SandboxBase,
    SandboxChoice,
    SandboxResult,
    checked_argv,
    not_found,
    sandbox_error,
)

KIND = "bwrap"
PROBE_TIMEOUT_S = 30.0


def confinement(
    worktree: Path,
    cwd: Path,
    read_only: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    services: Sequence[Path] = (),
) -> list[str]:
    """bubblewrap's options, in order: later mounts go on top of earlier ones (so a worktree,
    or a `read_only` folder, under /tmp or /run is bound on top of the private /tmp or the
    hidden /run; the worktree comes after the read-only folders, so one holding it cannot hide
    it, and the `writable` folders (a test runner's report folder) after it; the host's sockets
    still in view are covered last, but the `services` handed in on purpose, bound at their
    own paths; the hidden folders are made read-only
    once everything inside them is mounted; the worktree's git entries go back on top of
    it, read-only)."""
    shown = [word for folder in read_only for word in ("--ro-bind", str(folder), str(folder))]
    hidden = hidden_folders()
    sockets = host_sockets(
        [Path("/"), *read_only, worktree], [Path(PRIVATE_TMP).resolve(), *hidden], shared=services
    )
    return [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        PRIVATE_TMP,
        *(word for folder in hidden for word in ("--tmpfs", str(folder))),
        *shown,
        "--bind",
        str(worktree),
        str(worktree),
        *(word for folder in writable for word in ("--bind", str(folder), str(folder))),
        *(
            word
            for path in protected_paths(worktree)
            for word in ("--ro-bind", str(path), str(path))
        ),
        *(word for socket in sockets for word in ("--ro-bind", "/dev/null", str(socket))),
        *(word for socket in services for word in ("--ro-bind", str(socket), str(socket))),
        *(word for folder in hidden for word in ("--remount-ro", str(folder))),
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--chdir",
        str(cwd),
    ]


def _runtime_environment() -> list[Path]:
    """This interpreter's environment (a virtualenv and the Python it was made from) and
    fixloop's own code when they live under /tmp, where the private /tmp would hide them:
    commands run them by their paths (`python -m fixloop`, the step library's scripts). In a
    checkout (an editable install) the code is the folder holding the `fixloop` package and
    the pack's step library beside it, outside the virtualenv."""
    tmp = Path(PRIVATE_TMP).resolve()
    code = Path(__file__).resolve().parents[2]  # the folder the fixloop package is in
    folders = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        code,
        code.parent / "workflows" / "lib",
    }
    return sorted(f for f in folders if f.is_relative_to(tmp) and f.is_dir())


@functools.cache
def _probe(bwrap: str) -> str | None:
    """None when bubblewrap can start the namespaces this sandbox uses here, else why not."""
    with tempfile.TemporaryDirectory(prefix="fixloop-bwrap-probe-") as scratch:
        argv = [bwrap, *confinement(Path(scratch), Path(scratch)), "--", "true"]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def unavailable() -> str | None:
    """None when the bwrap sandbox works here, else one line saying why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (no `bwrap` on PATH; apt-get install bubblewrap)"
    problem = _probe(bwrap)
    return None if problem is None else f"bubblewrap cannot start a namespace here: {problem}"


class BubblewrapSandbox(SandboxBase):
    def __init__(
        self,
        worktree: Path,
        *,
        reason: str = "requested",
        output_cap: int = OUTPUT_CAP_BYTES,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        services: Mapping[str, Path] | None = None,
    ) -> None:
        problem = unavailable()
        if problem is not None:
            raise sandbox_error(f"--sandbox bwrap: {problem}")
        super().__init__(SandboxChoice(KIND, reason), worktree, output_cap, services)
        self.bwrap = shutil.which("bwrap") or "bwrap"
        # Folders under the private /tmp the commands must still see (the step library, the
        # run's folder, this interpreter's environment, which runs the step library's tools):
        # everything else of the host is visible read-only anyway.
        wanted = [*read_only, *_runtime_environment()]
        self.read_only = tuple(dict.fromkeys(f.resolve() for f in wanted if f.is_dir()))
        self.writable = tuple(dict.fromkeys(f.resolve() for f in writable if f.is_dir()))

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
        # Checked on the host, whose file system the sandbox sees (bwrap's own "execvp" failure
        # would look like the command exiting 1).
        if not find_program(words[0], where, environment.get("PATH")):
            return not_found(words[0], KIND)
        command = self._command(words, where)
        return run_process_group(
            command,
            cwd=where,
            env=environment,
            timeout_s=timeout_s,
            cap=self.output_cap,
            kind=KIND,
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
        command = self._command(words, where)
        # `--new-session`: the command is in a session of its own, beyond its bwrap's group.
        return start_process_group(
            words, command, cwd=where, env=environment, kind=KIND, session_inside=True
        )

    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        base = {"PATH": os.environ.get("PATH", os.defpath), "HOME": PRIVATE_TMP}
        return self.environment(base, env)

    def _command(self, words: list[str], where: Path) -> list[str]:
        services = list(self.services.values())
        options = confinement(self.worktree, where, self.read_only, self.writable, services)
        return [self.bwrap, *options, "--", *words]
