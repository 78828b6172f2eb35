"""Recovery, with the containers sweeper handed in, removes the docker sandbox containers of dead
runs, and only theirs: the labels say
whose a container is, the run's sandbox configuration says it ran in docker, its lock says it
is dead. End to end: a real docker-sandboxed review-fix killed in the middle of its model's
shell command, then `fixloop recover`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, REVIEW_REL, finding, review_text, write_review
from tests.helpers.sandbox_image import docker_client, docker_image

from fixloop.gitrepo import state_dir_of
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import recover
from fixloop.runs.run import Run
from fixloop.sandboxes import SandboxChoice
from fixloop.sandboxes.build import build_image
from fixloop.sandboxes.daemon import LABEL_RUN_ID, LABEL_SANDBOX
from fixloop.sandboxes.launcher import RunSandbox, write_launcher
from fixloop.sandboxes.sweep import CONTAINERS_RELEASED, sweep_containers

__all__ = ["docker_client", "docker_image"]

NEEDS_DOCKER = pytest.mark.needs("docker")


def _exists(client: Any, container_id: str) -> bool:
    return bool(client.api.containers(all=True, filters={"id": container_id}))


def _labelled(client: Any, run_id: str) -> list[dict[str, Any]]:
    found = client.api.containers(all=True, filters={"label": f"{LABEL_RUN_ID}={run_id}"})
    return list(found)


def _ran_in_docker(run: Run, image: str) -> Run:
    write_launcher(run.dir, RunSandbox(SandboxChoice("docker", "test", image=image), run.id))
    return run


@NEEDS_DOCKER
def test_only_dead_runs_of_this_repository_lose_their_containers(
    user_repo: UserRepo, docker_client: Any, docker_image: str
) -> None:
    live = _ran_in_docker(Run.start(user_repo.path, "demo"), docker_image)
    dead = _ran_in_docker(Run.start(user_repo.path, "demo"), docker_image)
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
        # Released once: a later recovery does not ask the daemon about that run again.
        assert (dead.dir / "sandbox" / CONTAINERS_RELEASED).is_file()
        assert not (live.dir / "sandbox" / CONTAINERS_RELEASED).exists()
    finally:
        live.close()
        for container_id in containers.values():
            if _exists(docker_client, container_id):
                docker_client.api.remove_container(container_id, force=True)


@NEEDS_DOCKER
def test_an_image_a_dead_run_s_model_built_is_removed_with_its_containers(
    user_repo: UserRepo, docker_client: Any, docker_image: str
) -> None:
    """A SIGKILL skips the sandbox's own removal of the image `build_environment` built: the
    image carries the run's labels, so recovery removes it; another run's stays."""
    dead = _ran_in_docker(Run.start(user_repo.path, "fix-issue"), docker_image)
    live = _ran_in_docker(Run.start(user_repo.path, "fix-issue"), docker_image)
    dead.close()
    images = {}
    for run in (dead, live):
        built = build_image(
            f"FROM {docker_image}\nRUN true\n", run_id=run.id, tag=f"fixloop-env/t:{run.id.lower()}"
        )
        assert built.exit_code == 0, built.log
        images[run.id] = built.image_id
    try:
        report = recover(user_repo.path, load_protocol(), sweepers=(sweep_containers,))
        assert any(f"run {dead.id}: removed its sandbox image" in line for line in report.swept)
        assert not docker_client.api.images(filters={"label": f"{LABEL_RUN_ID}={dead.id}"})
        assert docker_client.api.images(filters={"label": f"{LABEL_RUN_ID}={live.id}"})
    finally:
        live.close()
        for image_id in images.values():
            with contextlib.suppress(Exception):
                docker_client.api.remove_image(image_id, force=True)


def _run_ids(repo: Path) -> list[str]:
    runs = state_dir_of(repo) / "runs"
    return sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []


@NEEDS_DOCKER
def test_recover_removes_the_container_of_a_run_killed_during_a_docker_command(
    user_repo: UserRepo, docker_client: Any, docker_image: str, tmp_path: Path
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": dict(APP_FIX, bash=["sleep 50"])}))
    argv = [sys.executable, "-m", "fixloop", "review-fix", str(user_repo.path / REVIEW_REL)]
    argv += ["--repo", str(user_repo.path), "--script", str(script)]
    argv += ["--sandbox", "docker", "--image", docker_image]
    fixloop = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    run_id = ""
    running: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + 90
        while not running and time.monotonic() < deadline and fixloop.poll() is None:
            time.sleep(0.1)
            for run_id in _run_ids(user_repo.path):
                running = [c for c in _labelled(docker_client, run_id) if c["State"] == "running"]
        assert running, fixloop.stdout.read().decode() if fixloop.stdout else "no container"
    finally:
        os.kill(fixloop.pid, signal.SIGKILL)  # in the middle of the model's shell command
        fixloop.wait()
    try:
        assert _labelled(docker_client, run_id), "a SIGKILL leaves the container to the daemon"
        recovered = subprocess.run(
            [sys.executable, "-m", "fixloop", "recover", "--repo", str(user_repo.path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert recovered.returncode == 0, recovered.stdout + recovered.stderr
        assert _labelled(docker_client, run_id) == [], recovered.stdout
        assert f"run {run_id}: removed its sandbox container {running[0]['Id'][:12]}" in (
            recovered.stdout
        )
    finally:
        for left in _labelled(docker_client, run_id):
            docker_client.api.remove_container(left["Id"], force=True)
