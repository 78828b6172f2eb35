"""The docker sandbox: each command in a fresh container of the user's image, on the Docker SDK.

The container:
- is made from `image` (which must exist; fixloop never pulls) and runs as the worktree's owner;
- has its root file system read-only, the worktree bind-mounted read-write at its own path (and
  any `read_only` folders the caller names, read-only at theirs; any `writable` ones, such as a
  test runner's report folder, read-write), and a private tmpfs `/tmp`
  (`HOME` points there);
- sees no host socket: none but the worktree's and the `read_only` folders' are mounted, and a
  host service's socket inside those is covered with /dev/null (`host_services`);
- has no network at all (`network_mode="none"`), no capabilities, no new privileges, a memory
  limit without swap and a limit on the number of processes;
- carries the labels `fixloop.sandbox=docker` and `fixloop.run-id=<run id>`;
- is removed after the command, also when the caller fails (Ctrl-C, an exception); leaving the
  sandbox's `with` block removes any container still there. Only a SIGKILL of fixloop leaves one
  behind, which recovery removes (`daemon.remove_leftovers`).

On timeout the container is killed, and with it every process inside (they share its process
namespace). Output is attached to before the start and read as it is written (no log is
kept), capped like the others.

`start` makes the same container for a command that runs until it is stopped (a dev server),
under the name the caller gives (so recovery can remove it by name); `stop` stops it (SIGTERM,
SIGKILL after the grace period, through Docker) and removes it.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.processes import CappedOutput
from fixloop.sandboxes.background import Background
from fixloop.sandboxes.daemon import (
    LABEL_RUN_ID,
    LABEL_SANDBOX,
    connect,
    daemon_address,
    image_problem,
    one_line,
    streaming_client,
)
from fixloop.sandboxes.host_services import host_sockets
from fixloop.sandboxes.protected import protected_paths
from fixloop.sandboxes.protocol import (
    DEFAULT_TIMEOUT_S,
    EXIT_KILLED,
    EXIT_NOT_FOUND,
    OUTPUT_CAP_BYTES,
    PRIVATE_TMP,
    SandboxBase,
    SandboxChoice,
    SandboxResult,
    checked_argv,
    not_found,
    sandbox_error,
)

NEEDS_IMAGE = "--sandbox docker needs --image IMAGE (the image commands run in)"

KIND = "docker"
DEFAULT_MEMORY = "2g"
DEFAULT_PIDS = 1024
MIN_MEMORY_BYTES = 6 << 20
TMP_SIZE = "512m"
KILL_GRACE_S = 30.0
OUTPUT_GRACE_S = 10.0
_NOT_FOUND_SIGNS = ("executable file not found", "no such file or directory")
# What Docker's init (tini) says when it cannot start the command.
_INIT_EXEC_FAILED = re.compile(
    r"\[FATAL tini \(\d+\)\] exec .* failed: No such file or directory\n"
)


class _Waiter(threading.Thread):
    """Waits for the container to stop; the caller bounds the wait with join(timeout)."""

    def __init__(self, container: Any) -> None:
        super().__init__(daemon=True)
        self.container = container
        self.status: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.status = self.container.wait(timeout=None)  # no HTTP timeout: we bound it
        except Exception as exc:  # the daemon went away; reported by the caller
            self.error = exc


class _Output(threading.Thread):
    """The container's stdout and stderr, attached to and read as they are written, capped."""

    def __init__(self, streams: Any, container_id: str, cap: int) -> None:
        super().__init__(daemon=True)
        self.stdout = CappedOutput(cap)
        self.stderr = CappedOutput(cap)
        self.frames = streams.api.attach(
            container_id, stdout=True, stderr=True, stream=True, logs=False, demux=True
        )

    def run(self) -> None:
        for out, err in self.frames:
            if out:
                self.stdout.feed(out)
            if err:
                self.stderr.feed(err)


class DockerSandbox(SandboxBase):
    def __init__(
        self,
        worktree: Path,
        *,
        image: str | None,
        run_id: str | None = None,
        memory: str = DEFAULT_MEMORY,
        pids: int = DEFAULT_PIDS,
        reason: str = "requested",
        output_cap: int = OUTPUT_CAP_BYTES,
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        services: Mapping[str, Path] | None = None,
    ) -> None:
        import docker

        if not image:
            raise sandbox_error(NEEDS_IMAGE)
        try:
            memory_bytes = int(docker.utils.parse_bytes(memory))
        except docker.errors.DockerException:
            memory_bytes = 0
        if memory_bytes < MIN_MEMORY_BYTES:  # Docker's own minimum; 0 would mean no limit
            raise sandbox_error(f"memory limit {memory!r}: expected a size of at least 6m")
        if pids < 1:
            raise sandbox_error(f"process limit {pids}: expected a number >= 1")
        super().__init__(SandboxChoice(KIND, reason, image=image), worktree, output_cap, services)
        self.client = connect()
        problem = image_problem(self.client, image)
        if problem is not None:
            self.client.close()
            raise sandbox_error(problem, "--image")
        self.streams = streaming_client()
        self.image = image
        self.run_id = run_id or ""
        self.memory = memory
        self.pids = pids
        self.read_only = tuple(
            folder.resolve() for folder in read_only if folder.resolve() != self.worktree
        )
        self.writable = tuple(
            folder.resolve() for folder in writable if folder.resolve() != self.worktree
        )
        owner = self.worktree.stat()
        self.user = f"{owner.st_uid}:{owner.st_gid}"
        self._live: dict[str, Any] = {}
        self._lock = threading.Lock()

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> SandboxResult:
        import docker

        words = checked_argv(argv)
        where = self.checked_cwd(cwd)
        environment = self.environment({"HOME": PRIVATE_TMP}, env)
        start = time.monotonic()
        try:
            container = self._create(words, where, environment)
            try:
                return self._run_created(container, words[0], timeout_s, start)
            finally:
                self._remove(container)
        except (docker.errors.DockerException, OSError) as exc:  # OSError: the transport
            raise sandbox_error(
                f"the Docker daemon at {daemon_address()} failed: {one_line(exc)}"
            ) from None

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        name: str = "",
    ) -> Background:
        import docker

        words = checked_argv(argv)
        where = self.checked_cwd(cwd)
        environment = self.environment({"HOME": PRIVATE_TMP}, env)
        try:
            container = self._create(words, where, environment, name=name or None)
            try:
                return _Started(self, container)
            except BaseException:
                self._remove(container)
                raise
        except docker.errors.APIError as exc:
            raise sandbox_error(f"{words[0]}: cannot start: {one_line(exc)}", "argv") from None
        except (docker.errors.DockerException, OSError) as exc:
            raise sandbox_error(
                f"the Docker daemon at {daemon_address()} failed: {one_line(exc)}"
            ) from None

    def _create(
        self,
        words: list[str],
        where: Path,
        environment: dict[str, str],
        name: str | None = None,
    ) -> Any:
        import docker

        with self._lock:  # registered before anything can interrupt, so close() finds it
            container = self.client.containers.create(
                self.image,
                name=name,
                command=words,
                working_dir=str(where),
                environment=environment,
                user=self.user,
                mounts=[
                    docker.types.Mount(str(self.worktree), str(self.worktree), type="bind"),
                    *(
                        docker.types.Mount(str(path), str(path), type="bind")
                        for path in self.writable
                    ),
                    *(
                        docker.types.Mount(str(path), str(path), type="bind", read_only=True)
                        for path in self.read_only
                    ),
                    # The daemon mounts by depth, so these land on top of the worktree's mount.
                    *(
                        docker.types.Mount(str(path), str(path), type="bind", read_only=True)
                        for path in protected_paths(self.worktree)
                    ),
                    # A host service's socket inside a mounted folder stays out of reach.
                    *(
                        docker.types.Mount(str(socket), "/dev/null", type="bind", read_only=True)
                        for socket in host_sockets(
                            [self.worktree, *self.writable, *self.read_only],
                            [],
                            shared=self.services.values(),
                        )
                    ),
                    # The services handed in on purpose, at their own paths.
                    *(
                        docker.types.Mount(str(path), str(path), type="bind", read_only=True)
                        for path in self.services.values()
                    ),
                ],
                network_mode="none",
                mem_limit=self.memory,
                memswap_limit=self.memory,  # the same value: no swap beyond the limit
                pids_limit=self.pids,
                read_only=True,
                tmpfs={PRIVATE_TMP: f"rw,nosuid,nodev,exec,size={TMP_SIZE},mode=1777"},
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                labels={LABEL_SANDBOX: KIND, LABEL_RUN_ID: self.run_id},
                log_config=docker.types.LogConfig(type="none"),  # output comes by attach
                # An init as process 1: the command then gets default signal handling (process
                # 1 ignores signals it has no handler for) and its orphans are reaped.
                init=True,
                stdin_open=False,
                tty=False,
            )
            self._live[container.id] = container
        return container

    def _run_created(
        self, container: Any, argv0: str, timeout_s: float, start: float
    ) -> SandboxResult:
        import docker

        # Attached before the start, so no output is missed (as `docker run` does).
        output = _Output(self.streams, container.id, self.output_cap)
        output.start()
        try:
            container.start()
        except docker.errors.APIError as exc:
            explanation = str(exc.explanation or exc)
            if any(sign in explanation for sign in _NOT_FOUND_SIGNS):
                return not_found(argv0, KIND, time.monotonic() - start)
            raise
        waiter = _Waiter(container)
        waiter.start()
        waiter.join(timeout_s)
        timed_out = waiter.is_alive()
        if timed_out:
            container.kill()
            waiter.join(KILL_GRACE_S)
        output.join(OUTPUT_GRACE_S)  # the stream ends once the daemon has sent all output
        if waiter.error is not None:
            raise waiter.error
        exit_code = int(waiter.status["StatusCode"]) if waiter.status else EXIT_KILLED
        stderr = output.stderr.text()
        if exit_code == EXIT_NOT_FOUND and _INIT_EXEC_FAILED.fullmatch(stderr):
            return not_found(argv0, KIND, time.monotonic() - start)
        if not timed_out and self._out_of_memory(container):
            stderr += f"\n[the container ran out of memory: its limit is {self.memory}]\n"
        return SandboxResult(
            exit_code, output.stdout.text(), stderr, timed_out, time.monotonic() - start
        )

    @staticmethod
    def _out_of_memory(container: Any) -> bool:
        container.reload()
        return bool(container.attrs.get("State", {}).get("OOMKilled"))

    def _remove(self, container: Any) -> None:
        import docker

        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)
        with self._lock:
            self._live.pop(container.id, None)

    def stop_container(self, container: Any, grace_s: float) -> int:
        """SIGTERM to the container's init, SIGKILL after `grace_s` (Docker's stop), removed;
        its command's exit code, read before the removal."""
        import docker

        code = EXIT_KILLED
        with contextlib.suppress(docker.errors.DockerException, OSError):
            container.stop(timeout=max(math.ceil(grace_s), 1))
            container.reload()
            code = int(container.attrs.get("State", {}).get("ExitCode", EXIT_KILLED))
        self._remove(container)
        return code

    def close(self) -> None:
        """Remove every container still there (a command interrupted in another thread)."""
        import docker

        with self._lock:
            live = list(self._live.values())
        for container in live:
            # If this fails, recovery removes it later: it carries our labels.
            with contextlib.suppress(docker.errors.DockerException):
                self._remove(container)
        self.client.close()
        self.streams.close()


class _Started:
    """A container running a command in the background (`DockerSandbox.start`)."""

    pid = 0

    def __init__(self, sandbox: DockerSandbox, container: Any) -> None:
        self.sandbox = sandbox
        self.handle = container
        self.container = str(container.name)
        # Attached before the start, so no output is missed.
        self.frames = sandbox.streams.api.attach(
            container.id, stdout=True, stderr=True, stream=True, logs=False, demux=True
        )
        container.start()
        self.ended: int | None = None  # its exit code, kept by `stop` before the removal

    def chunks(self) -> Iterator[bytes]:
        for out, err in self.frames:
            if out:
                yield out
            if err:
                yield err

    def poll(self) -> int | None:
        import docker

        if self.ended is not None:
            return self.ended
        try:
            self.handle.reload()
        except docker.errors.NotFound:
            return EXIT_KILLED  # removed under it: gone
        state = self.handle.attrs.get("State", {})
        if state.get("Running") or state.get("Status") == "created":
            return None
        return int(state.get("ExitCode", EXIT_KILLED))

    def stop(self, grace_s: float) -> None:
        self.ended = self.sandbox.stop_container(self.handle, grace_s)
