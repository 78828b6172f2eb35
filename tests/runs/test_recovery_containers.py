"""Recovery, handed the containers sweeper, removes the sandbox containers of dead runs, and only
theirs."""

from __future__ import annotations

from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.sandbox_image import docker_client, docker_image

from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import recover
from fixloop.runs.run import Run
from fixloop.sandboxes.daemon import LABEL_RUN_ID, LABEL_SANDBOX, sweep_containers

__all__ = ["docker_client", "docker_image"]


def _exists(client: Any, container_id: str) -> bool:
    return bool(client.api.containers(all=True, filters={"id": container_id}))


@pytest.mark.needs("docker")
def test_only_dead_runs_of_this_repository_lose_their_containers(
    user_repo: UserRepo, docker_client: Any, docker_image: str
) -> None:
    live = Run.start(user_repo.path, "demo")
    dead = Run.start(user_repo.path, "demo")
    dead.close()  # its process "died": the lock is released
    containers = {
        run_id: docker_client.containers.create(
            docker_image, command=["true"], labels={LABEL_SANDBOX: "docker", LABEL_RUN_ID: run_id}
        ).id
        for run_id in (live.id, dead.id, "20990101T000000Z-1-abcdef")  # the last: no run here
    }
    try:
        report = recover(user_repo.path, load_protocol(), sweepers=(sweep_containers,))
        removed = containers[dead.id][:12]
        assert report.swept == [f"run {dead.id}: removed its sandbox container {removed} (created)"]
        assert not _exists(docker_client, containers[dead.id])
        assert _exists(docker_client, containers[live.id])
        assert _exists(docker_client, containers["20990101T000000Z-1-abcdef"])
    finally:
        live.close()
        for container_id in containers.values():
            if _exists(docker_client, container_id):
                docker_client.api.remove_container(container_id, force=True)
