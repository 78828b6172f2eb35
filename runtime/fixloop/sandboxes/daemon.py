"""The Docker daemon as fixloop finds it (`DOCKER_HOST`, else the default socket), and the
containers its sandboxes leave behind.

Every container fixloop starts carries the label `fixloop.sandbox=docker` and
`fixloop.run-id=<run id>`. A sandbox removes its containers itself, also when the caller fails;
only a SIGKILL of fixloop skips that, and then `remove_leftovers(run_ids)` (recovery's sweeper,
`sweep.sweep_containers`, for runs that are dead) removes them. Nothing here needs a daemon: without
one there is nothing left over. An image a run's model had built (`build.py`) carries the same
labels and is removed the same way.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixloop.sandboxes.protocol import sandbox_error

LABEL_SANDBOX = "fixloop.sandbox"
LABEL_RUN_ID = "fixloop.run-id"
DEFAULT_SOCKET = Path("/var/run/docker.sock")
PROBE_TIMEOUT_S = 5
API_TIMEOUT_S = 120
_NESTED_OS_ERROR = re.compile(r"\w+Error\(\d+, '([^']+)'\)|\[Errno \d+\] ([^\"')]+)")
LEFTOVERS_TIMEOUT_S = 30


def daemon_address() -> str:
    return os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"


def daemon_configured() -> bool:
    """Cheap: is there any daemon to ask (without importing the Docker SDK)?"""
    return bool(os.environ.get("DOCKER_HOST")) or DEFAULT_SOCKET.exists()


def one_line(exc: BaseException) -> str:
    """An SDK or transport error as one short line."""
    text = " ".join(str(exc).split())
    # The SDK nests the transport's error in prose, e.g. "Error while fetching server API
    # version: ('Connection aborted.', FileNotFoundError(2, 'No such file or directory'))".
    nested = _NESTED_OS_ERROR.search(text)
    if nested:
        return nested.group(1) or nested.group(2)
    return text.rsplit("Error while fetching server API version: ", 1)[-1][:300]


def _attempt(timeout_s: float) -> tuple[Any, str | None]:
    """(a client whose daemon answered a ping, None) or (None, why no daemon answers)."""
    if not daemon_configured():
        return None, f"no Docker daemon: {DEFAULT_SOCKET} does not exist and DOCKER_HOST is not set"
    import docker  # the SDK costs a few hundred ms to import; only docker users pay it

    try:
        client = docker.from_env(timeout=max(int(timeout_s), 1))
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:  # OSError: the transport below
        return None, f"no Docker daemon answers at {daemon_address()}: {one_line(exc)}"
    return client, None


def connect(timeout_s: float = API_TIMEOUT_S) -> Any:
    """A `docker.DockerClient` whose daemon answered a ping, else a FixloopError saying so."""
    client, problem = _attempt(timeout_s)
    if problem is not None:
        raise sandbox_error(problem)
    return client


def streaming_client() -> Any:
    """A client with no read timeout, for a container's output: a command may be silent for as
    long as it runs, and the SDK ends such a stream quietly when the socket times out. Callers
    bound their waits themselves."""
    import docker

    return docker.from_env(timeout=None)


def daemon_problem() -> str | None:
    """None when a Docker daemon answers here, else one line saying why not."""
    client, problem = _attempt(PROBE_TIMEOUT_S)
    if client is not None:
        client.close()
    return problem


def image_problem(client: Any, image: str) -> str | None:
    """None when `image` exists on the daemon (fixloop never pulls), else why not."""
    import docker

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return (
            f"--image {image}: no such image on the Docker daemon at {daemon_address()} "
            "(build, load or pull it first; fixloop never pulls)"
        )
    except docker.errors.APIError as exc:
        return f"--image {image}: {one_line(exc)}"
    return None


@dataclass(frozen=True)
class LeftoverContainer:
    id: str
    run_id: str
    status: str
    kind: str = "container"  # or "image": one the run's model had built (`build.py`)

    def describe(self) -> str:
        return f"{self.kind} {self.id[:12]} of run {self.run_id or '(none)'} ({self.status})"


def leftover_containers() -> list[LeftoverContainer]:
    """Every container a fixloop sandbox started that still exists (running or not)."""
    client = _client_or_none()
    if client is None:
        return []
    try:
        return _listed(client)
    finally:
        client.close()


def remove_leftovers(run_ids: Iterable[str]) -> list[LeftoverContainer]:
    """Remove the sandbox containers of these runs, then the images they built (callers pass
    only runs that are dead)."""
    wanted = set(run_ids)
    client = _client_or_none()
    if client is None or not wanted:
        return []
    import docker

    removed: list[LeftoverContainer] = []
    try:
        for leftover in _listed(client):
            if leftover.run_id not in wanted:
                continue
            with contextlib.suppress(docker.errors.NotFound):  # removed meanwhile: fine
                client.api.remove_container(leftover.id, force=True)
            removed.append(leftover)
        # Then the images the runs built (after their containers, which would hold them).
        for image in client.api.images(filters={"label": f"{LABEL_SANDBOX}=docker"}):
            run_id = (image.get("Labels") or {}).get(LABEL_RUN_ID, "")
            if run_id not in wanted:
                continue
            with contextlib.suppress(docker.errors.NotFound):
                client.api.remove_image(image["Id"], force=True)
            removed.append(LeftoverContainer(image["Id"], run_id, "built", "image"))
    finally:
        client.close()
    return removed


def remove_container(name: str) -> bool:
    """Remove the container called `name` (a background command's, `DockerSandbox.start`) with
    whatever runs in it; True when there was one. Without a daemon there is none."""
    client = _client_or_none()
    if client is None or not name:
        return False
    import docker

    try:
        client.api.remove_container(name, force=True)
    except docker.errors.NotFound:
        return False
    finally:
        client.close()
    return True


def _client_or_none() -> Any:
    # No daemon answers: then no container of ours can be left over either.
    return _attempt(LEFTOVERS_TIMEOUT_S)[0]


def _listed(client: Any) -> list[LeftoverContainer]:
    found = client.api.containers(all=True, filters={"label": f"{LABEL_SANDBOX}=docker"})
    return [
        LeftoverContainer(item["Id"], item.get("Labels", {}).get(LABEL_RUN_ID, ""), item["State"])
        for item in found
    ]
