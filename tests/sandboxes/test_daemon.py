"""Containers left behind: listed by their labels, removed only for the runs named."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.sandboxes.support import NEEDS_DOCKER

from fixloop.sandboxes import leftover_containers, remove_leftovers
from fixloop.sandboxes.daemon import LABEL_RUN_ID, LABEL_SANDBOX


@pytest.fixture
def labelled(docker_client: Any, docker_image: str) -> Iterator[dict[str, str]]:
    """Three stopped containers as a sandbox labels them, for runs dead-1, dead-2 and alive."""
    suffix = uuid.uuid4().hex[:8]
    ids = {}
    for run in ("dead-1", "dead-2", "alive"):
        run_id = f"{run}-{suffix}"
        container = docker_client.containers.create(
            docker_image, command=["true"], labels={LABEL_SANDBOX: "docker", LABEL_RUN_ID: run_id}
        )
        ids[run_id] = container.id
    yield ids
    for container_id in ids.values():
        if _exists(docker_client, container_id):
            docker_client.api.remove_container(container_id, force=True)


def _exists(client: Any, container_id: str) -> bool:
    return bool(client.api.containers(all=True, filters={"id": container_id}))


@NEEDS_DOCKER
def test_only_the_named_runs_containers_are_removed(
    docker_client: Any, labelled: dict[str, str]
) -> None:
    dead = [run_id for run_id in labelled if run_id.startswith("dead-")]
    [alive] = [run_id for run_id in labelled if run_id.startswith("alive-")]
    listed = {c.run_id: c for c in leftover_containers() if c.run_id in labelled}
    assert {run_id: c.id for run_id, c in listed.items()} == labelled
    assert listed[alive].describe() == (
        f"container {labelled[alive][:12]} of run {alive} (created)"
    )
    removed = remove_leftovers(dead)
    assert sorted(c.run_id for c in removed) == sorted(dead)
    assert not any(_exists(docker_client, labelled[run_id]) for run_id in dead)
    assert _exists(docker_client, labelled[alive])
    assert remove_leftovers([]) == []


@NEEDS_DOCKER
def test_containers_without_our_label_are_never_listed(
    docker_client: Any, docker_image: str
) -> None:
    container = docker_client.containers.create(
        docker_image, command=["true"], labels={LABEL_RUN_ID: "foreign"}
    )
    try:
        assert container.id not in {c.id for c in leftover_containers()}
        assert remove_leftovers(["foreign"]) == []
        assert _exists(docker_client, container.id)
    finally:
        container.remove(force=True)


def test_without_a_daemon_nothing_is_left_over(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    assert leftover_containers() == []
    assert remove_leftovers(["any"]) == []
