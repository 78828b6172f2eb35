"""A project's dev server for one task: started on a free port, awaited, always stopped.

    with dev_server(task.dev_server_command, worktree, run.dir, run_id=run.id,
                    sandbox=run_sandbox) as server:
        screenshot(server.url + route.lstrip("/"), out)

The command (`devServerCommand` of tasks.json) is the user's own shell text: it runs as
`bash -c COMMAND` — one argv element, never pasted into other shell text — in the worktree, with
`PORT` (a free port), `HOST=127.0.0.1` and `BROWSER=none` (so that dev servers which open a
browser do not) in its environment. `dev_server` waits (bounded) until the port answers HTTP,
and stops the server at the end and on any failure. Its output goes to a pipe fixloop reads,
never to disk (it may print secrets): the last lines, masked, explain a server that exits or
never answers.

Where it runs. The worktree is the agent's work: the command reads files the agent wrote
(package.json scripts, a bundler's config, a script it runs), so under a sandbox that confines
(`sandbox` is the run's, bwrap or docker) it runs in a sandbox of that kind on the worktree,
never on the host: `Sandbox.start`, the same confinement as every command of the run (a
container of its own under docker), with only `PORT`, `HOST`, `BROWSER` and the marker below in
its environment (the host's is not passed through). Such a sandbox has no network but a loopback
of its own, so the server listens there, at the same port number as the host's, and `relay.py`
carries the host browser's connections to it: the host listens on 127.0.0.1:PORT and connects
each connection to a Unix socket in a folder shared with the sandbox, where a relay beside the
server (python3 inside the sandbox) connects it to the server's port. Stopping it stops the
sandbox: bwrap's namespace (and everything in it), or the container. Under local (or with no
sandbox) the command runs on the host in a process group of its own with the host's environment,
as the user's own tools would: local confines nothing (docs/sandboxes.md).

Each server is recorded in `FOLDER/devservers/` (the run's folder) before it starts, with a
marker it and its children carry in their environment (and, under docker, its container's
name; when confined, its relay's folder). When the process that started it dies without stopping
it (a SIGKILL), `stop_leftovers(FOLDER)` — what `fixloop recover` calls for a dead run — finds
its processes by that marker (never by a pid that may have been reused) and stops them, removes
its container and its relay's folder. (Under bwrap the kernel has ended it already: the sandbox
dies with its parent.)
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.extras.browser.relay import host_relay, inside_argv, remove_folder
from fixloop.masking import dumps_masked, mask_text
from fixloop.process_table import (
    ProcessInfo,
    is_running,
    marked_by_environment,
    read_process,
    stop,
)
from fixloop.sandboxes.background import Background, ProcessBackground
from fixloop.sandboxes.daemon import remove_container
from fixloop.sandboxes.launcher import RunSandbox
from fixloop.sandboxes.protocol import Sandbox

RECORDS = "devservers"
MARKER_VARIABLE = "FIXLOOP_DEV_SERVER"
HOST = "127.0.0.1"
_TAIL_LINES = 40
CONFINING = ("bwrap", "docker")  # the sandboxes a dev server is started in


@dataclass(frozen=True)
class DevServer:
    """A started dev server, as recorded in its folder (`record`)."""

    marker: str
    pid: int
    pgid: int
    port: int
    worktree: str
    run_id: str
    started_at: str
    owner_pid: int
    owner_start_ticks: int
    command: str  # masked: a command line may carry a token
    record: str
    sandbox: str = "local"  # where it runs: local (the host), bwrap or docker
    container: str = ""  # its container's name under docker
    relay: str = ""  # the folder of the host's relay to it, when confined

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


def _error(message: str, exit_code: int = 1) -> FixloopError:
    return FixloopError(Diagnostic("devServerCommand", 1, 1, "dev-server", message), exit_code)


_handed_out: deque[int] = deque(maxlen=256)
_handing_out = threading.Lock()


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick), and not one this process
    handed out lately: parallel executors start their servers at the same time, and a port is
    only taken once its server binds it."""
    with _handing_out:
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.bind((HOST, 0))
                port: int = probe.getsockname()[1]
            if port not in _handed_out:
                _handed_out.append(port)
                return port


class _OutputTail:
    """Drains a server's output (a full pipe would block it) and keeps its last lines, in
    memory only."""

    def __init__(self, started: Background) -> None:
        self._lines: deque[str] = deque(maxlen=_TAIL_LINES)
        self._thread = threading.Thread(target=self._read, args=(started,), daemon=True)
        self._thread.start()

    def _read(self, started: Background) -> None:
        pending = b""
        with contextlib.suppress(Exception):  # a stream cut when the server is stopped
            for chunk in started.chunks():
                *lines, pending = (pending + chunk).split(b"\n")
                self._lines.extend(line.decode(errors="replace").rstrip() for line in lines)
                pending = pending[-65536:]  # a line without end is kept only in part
        if pending:
            self._lines.append(pending.decode(errors="replace").rstrip())

    def text(self, lines: int = 5) -> str:
        return mask_text(" | ".join(list(self._lines)[-lines:])) or "no output"

    def join(self, timeout_s: float) -> None:
        self._thread.join(timeout_s)


def _write_record(path: Path, data: Mapping[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(dumps_masked(dict(data), indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)


def _answers_http(port: int) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{HOST}:{port}/", timeout=1.0) as response:
            response.read(1)
    except urllib.error.HTTPError:
        return True  # any HTTP answer, even 404, means the server is up
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return True


@contextlib.contextmanager
def dev_server(
    command: str,
    worktree: Path,
    folder: Path,
    *,
    run_id: str = "",
    timeout_s: float = 60.0,
    grace_s: float = 5.0,
    env: Mapping[str, str] | None = None,
    sandbox: RunSandbox | None = None,
) -> Iterator[DevServer]:
    """Run `command` as the worktree's dev server for the `with` block, in `sandbox` when that
    is bwrap or docker (on the host otherwise); see the module doc."""
    if not command.strip():
        raise _error("devServerCommand is empty", exit_code=2)
    if not worktree.is_dir():
        raise _error(f"{worktree}: no such worktree", exit_code=2)
    confined = sandbox is not None and sandbox.choice.kind in CONFINING
    records = folder / RECORDS
    records.mkdir(parents=True, exist_ok=True)
    marker = f"{os.getpid()}-{secrets.token_hex(8)}"
    record = records / f"{marker}.json"
    owner = read_process(os.getpid())
    with contextlib.ExitStack() as stack:
        relay = stack.enter_context(host_relay(free_port)) if confined else None
        data: dict[str, Any] = {
            "marker": marker,
            "pid": 0,
            "pgid": 0,
            "port": relay.port if relay else free_port(),
            "worktree": str(worktree),
            "run_id": run_id,
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "owner_pid": os.getpid(),
            "owner_start_ticks": owner.start_ticks if owner else 0,
            "command": mask_text(command),
            "record": str(record),
            "sandbox": sandbox.choice.kind if sandbox and confined else "local",
            "container": f"fixloop-dev-server-{marker}" if _docker(sandbox) else "",
            "relay": str(relay.folder) if relay else "",
        }
        # Before the start: a kill right after it leaves a findable record.
        _write_record(record, data)
        stack.callback(record.unlink, missing_ok=True)
        variables = {"PORT": str(data["port"]), "HOST": HOST, "BROWSER": "none"}
        variables[MARKER_VARIABLE] = marker
        if relay is not None and sandbox is not None:
            box = stack.enter_context(sandbox.open(worktree, writable=[relay.folder]))
            argv = inside_argv(command, relay)
            started = _start_confined(box, argv, worktree, {**(env or {}), **variables}, data)
        else:
            started = _start_on_host(command, worktree, {**os.environ, **(env or {}), **variables})
        output = _OutputTail(started)
        data.update(pid=started.pid, pgid=started.pid)
        server = DevServer(**data)
        stack.callback(output.join, 1.0)
        stack.callback(_stop_started, server, started, grace_s)
        _write_record(record, data)
        _wait_until_answering(server, started, output, timeout_s)
        yield server


def _docker(sandbox: RunSandbox | None) -> bool:
    return sandbox is not None and sandbox.choice.kind == "docker"


def _start_on_host(command: str, worktree: Path, environment: Mapping[str, str]) -> Background:
    """Under local (or no sandbox): the user's command on the host, as before any sandbox."""
    try:
        return ProcessBackground(
            ["bash", "-c", command, "dev-server"], cwd=worktree, env=environment
        )
    except OSError as exc:
        raise _error(f"cannot start bash: {exc.strerror or exc}") from None


def _start_confined(
    box: Sandbox, argv: list[str], worktree: Path, env: Mapping[str, str], data: Mapping[str, Any]
) -> Background:
    """The command and the relay beside it (`argv`) in the run's sandbox (a container of its
    own under docker, named for recovery); only `env` reaches it, not the host's environment."""
    try:
        return box.start(argv, cwd=worktree, env=env, name=str(data["container"]))
    except FixloopError as exc:
        raise _error(f"cannot start the dev server in its sandbox: {exc}") from None


def _wait_until_answering(
    server: DevServer, started: Background, output: _OutputTail, timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if _answers_http(server.port):
            return
        code = started.poll()
        if code is not None:
            output.join(1.0)  # its last words may still be in the pipe
            raise _error(f"the dev server exited ({code}) before answering: {output.text()}")
        if time.monotonic() >= deadline:
            raise _error(
                f"the dev server did not answer HTTP on {HOST}:{server.port} within "
                f"{timeout_s:g} s (does the command use $PORT and $HOST?): {output.text()}"
            )
        time.sleep(0.1)


def _stop_started(server: DevServer, started: Background, grace_s: float) -> None:
    started.stop(grace_s)  # the group (local), the sandbox's namespace (bwrap), the container
    stop(partial(_members, server.marker), grace_s)  # children that outlived it or left the group


def _members(marker: str) -> list[ProcessInfo]:
    return marked_by_environment(f"{MARKER_VARIABLE}={marker}")


def stop_leftovers(folder: Path, grace_s: float = 5.0) -> list[DevServer]:
    """Stop the recorded dev servers of `folder` whose starting process is dead; forget them.

    A server whose starter still runs is left alone (its run is live). Returns the servers whose
    records were cleared, with or without processes left to stop.
    """
    stopped: list[DevServer] = []
    for record in sorted((folder / RECORDS).glob("*.json")):
        try:
            server = DevServer(**json.loads(record.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue  # not ours to judge; `runs prune` removes the folder with the run
        if is_running(server.owner_pid, server.owner_start_ticks):
            continue
        if server.container:
            remove_container(server.container)
        stop(partial(_members, server.marker), grace_s)
        if server.relay:
            remove_folder(Path(server.relay))
        record.unlink(missing_ok=True)
        stopped.append(server)
    return stopped


def sweep_dev_servers(dead_run_folders: Sequence[Path]) -> list[str]:
    """Recovery's sweeper: stop the dev servers recorded in dead runs' folders; one line each."""
    return [
        f"run {folder.name}: stopped its dev server in {server.worktree}"
        for folder in dead_run_folders
        for server in stop_leftovers(folder)
    ]


__all__ = ["DevServer", "dev_server", "free_port", "stop_leftovers", "sweep_dev_servers"]
