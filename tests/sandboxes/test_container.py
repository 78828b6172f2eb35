"""The docker sandbox on a real daemon: limits, the worktree's owner, a real pytest run, labels,
and no container left after a command — also when the caller is interrupted."""

from __future__ import annotations

import os
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.sandboxes.support import NEEDS_DOCKER, OpenSandbox, processes_holding, wait_until

from fixloop.diagnostics import FixloopError
from fixloop.sandboxes import leftover_containers, open_sandbox
from fixloop.sandboxes.container import DockerSandbox


def _containers_of(run_id: str) -> list[str]:
    return [c.id for c in leftover_containers() if c.run_id == run_id]


@NEEDS_DOCKER
def test_pytest_runs_in_the_users_image(sandbox_of: OpenSandbox, worktree: Path) -> None:
    (worktree / "test_sample.py").write_text(
        "def test_adds():\n    assert 1 + 1 == 2\n\ndef test_fails():\n    assert 1 + 1 == 3\n"
    )
    sandbox = sandbox_of("docker")
    result = sandbox.run(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    assert result.exit_code == 1, result
    assert "1 failed, 1 passed" in result.stdout


@NEEDS_DOCKER
def test_memory_is_limited_without_swap(sandbox_of: OpenSandbox) -> None:
    sandbox = sandbox_of("docker", memory="64m")
    result = sandbox.run(["python3", "probe.py", "allocate", "256"], timeout_s=60)
    assert result.exit_code == 137 and not result.timed_out, result
    assert "allocated" not in result.stdout
    assert "[the container ran out of memory: its limit is 64m]" in result.stderr
    assert sandbox.run(["python3", "probe.py", "allocate", "16"]).stdout == "allocated\n"


@NEEDS_DOCKER
def test_processes_are_limited(sandbox_of: OpenSandbox) -> None:
    result = sandbox_of("docker", pids=16).run(["python3", "probe.py", "spawn", "40"])
    assert result.ok, result
    assert 0 < int(result.stdout) < 16


@NEEDS_DOCKER
def test_commands_run_as_the_worktrees_owner(sandbox_of: OpenSandbox, worktree: Path) -> None:
    os.chown(worktree, 65534, 65534)
    os.chown(worktree / "probe.py", 65534, 65534)
    sandbox = sandbox_of("docker")
    assert sandbox.run(["id", "-u"]).stdout == "65534\n"
    assert sandbox.run(["python3", "probe.py", "write", "mine.txt"]).ok
    assert (worktree / "mine.txt").stat().st_uid == 65534


@NEEDS_DOCKER
def test_each_command_has_a_labelled_container_removed_afterwards(
    sandbox_of: OpenSandbox, worktree: Path
) -> None:
    run_id = f"label-{uuid.uuid4().hex[:8]}"
    sandbox = sandbox_of("docker", run_id=run_id)
    seen: list[list[str]] = []
    token = f"label-{uuid.uuid4().hex}"

    def watch() -> None:
        wait_until(lambda: bool(processes_holding(token)), 60)
        seen.append(_containers_of(run_id))
        (worktree / "done").touch()  # lets the command end

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = sandbox.run(["python3", "probe.py", "until", "done", token], timeout_s=120)
    watcher.join()
    assert result.ok, result
    assert len(seen[0]) == 1, "while it runs, the command's container carries the run id"
    assert _containers_of(run_id) == []


@NEEDS_DOCKER
def test_an_interrupted_command_leaves_no_container(sandbox_of: OpenSandbox) -> None:
    run_id = f"interrupt-{uuid.uuid4().hex[:8]}"
    sandbox = sandbox_of("docker", run_id=run_id)
    token = f"interrupt-{uuid.uuid4().hex}"

    def interrupt() -> None:
        if wait_until(lambda: bool(processes_holding(token)), 30):
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        sandbox.run(["python3", "probe.py", "tree", token, "ready"], timeout_s=120)
    assert _containers_of(run_id) == []
    assert wait_until(lambda: not processes_holding(token))


@NEEDS_DOCKER
def test_leaving_the_block_removes_a_container_another_thread_still_runs(
    docker_image: str, worktree: Path
) -> None:
    run_id = f"close-{uuid.uuid4().hex[:8]}"
    token = f"close-{uuid.uuid4().hex}"
    results: list[Any] = []
    with open_sandbox("docker", worktree=worktree, image=docker_image, run_id=run_id) as sandbox:
        argv = ["python3", "probe.py", "tree", token, "ready"]
        thread = threading.Thread(target=lambda: results.append(_quietly(sandbox, argv)))
        thread.start()
        assert wait_until(lambda: bool(processes_holding(token)), 30)
    assert _containers_of(run_id) == []
    thread.join(30)
    assert not thread.is_alive()
    assert wait_until(lambda: not processes_holding(token))


def _quietly(sandbox: Any, argv: list[str]) -> object:
    try:
        return sandbox.run(argv, timeout_s=120)
    except FixloopError as error:  # its container went away under it: expected here
        return error


@NEEDS_DOCKER
def test_no_image_or_a_missing_image_is_one_line_exit_2(docker_client: Any, worktree: Path) -> None:
    with pytest.raises(FixloopError) as error:
        DockerSandbox(worktree, image=None)
    assert error.value.exit_code == 2
    assert str(error.value) == (
        "--sandbox:1:1: sandbox: --sandbox docker needs --image IMAGE (the image commands run in)"
    )
    with pytest.raises(FixloopError) as error:
        open_sandbox("docker", worktree=worktree, image="fixloop-no-such-image:1")
    assert error.value.exit_code == 2
    assert str(error.value) == (
        f"--image:1:1: sandbox: --image fixloop-no-such-image:1: no such image on the Docker "
        f"daemon at {os.environ['DOCKER_HOST']} (build, load or pull it first; fixloop never "
        "pulls)"
    )


@NEEDS_DOCKER
@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"memory": "lots"}, "memory limit 'lots': expected a size of at least 6m"),
        ({"memory": "0"}, "memory limit '0': expected a size of at least 6m"),
        ({"pids": 0}, "process limit 0: expected a number >= 1"),
    ],
)
def test_bad_limits_are_one_line_exit_2(
    docker_image: str, worktree: Path, limits: dict[str, Any], message: str
) -> None:
    with pytest.raises(FixloopError) as error:
        open_sandbox("docker", worktree=worktree, image=docker_image, **limits)
    assert error.value.exit_code == 2
    assert str(error.value) == f"--sandbox:1:1: sandbox: {message}"


def test_no_daemon_is_one_line_exit_2(
    worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
    with pytest.raises(FixloopError) as error:
        open_sandbox("docker", worktree=worktree, image="any:1")
    assert error.value.exit_code == 2
    assert str(error.value) == (
        f"--sandbox:1:1: sandbox: no Docker daemon answers at unix://{tmp_path}/no-daemon.sock: "
        "No such file or directory"
    )
