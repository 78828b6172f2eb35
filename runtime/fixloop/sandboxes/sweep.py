"""Recovery's sweeper of dead runs' docker containers (a SIGKILL of fixloop skips a sandbox's own
removal, and the container would keep running in a worktree about to be removed).

Whose a container is, its labels say; that a run used docker, its sandbox configuration in the
run folder says; that it is dead, recovery decides (it hands in the dead runs' folders). Read from
files first: the daemon is asked only when a dead run used docker and was not released yet, so a
recovery without docker runs costs no daemon round trip. A run released once is never asked
about again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from fixloop.sandboxes.daemon import daemon_problem, remove_leftovers
from fixloop.sandboxes.launcher import CONFIG_NAME
from fixloop.steps import SANDBOX_LAUNCHER

CONTAINERS_RELEASED = "containers-released"  # in a run's sandbox folder, once its containers went


def _used_docker(folder: Path) -> bool:
    sandbox = (folder / SANDBOX_LAUNCHER).parent
    if (sandbox / CONTAINERS_RELEASED).exists():
        return False
    try:
        kind = json.loads((sandbox / CONFIG_NAME).read_text("utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return False
    return bool(kind == "docker")


def sweep_containers(dead_run_folders: Sequence[Path]) -> list[str]:
    """Remove the sandbox containers of the dead runs with these folders that used docker; one
    line for each container removed."""
    docker = [folder for folder in dead_run_folders if _used_docker(folder)]
    if not docker or daemon_problem() is not None:
        return []  # no daemon answers: nothing to remove now, nothing marked released
    removed = remove_leftovers(folder.name for folder in docker)
    for folder in docker:
        (folder / SANDBOX_LAUNCHER).parent.joinpath(CONTAINERS_RELEASED).touch()
    return [
        f"run {gone.run_id}: removed its sandbox {gone.kind} {gone.id[:12]} ({gone.status})"
        for gone in removed
    ]


__all__ = ["CONTAINERS_RELEASED", "sweep_containers"]
