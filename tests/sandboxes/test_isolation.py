"""What each confining sandbox proves, for real: no network, no write outside the worktree, a
timeout that kills the whole tree, and nothing left running after a SIGKILL of fixloop.

The local sandbox runs the same probes as the control: there the connection and the write
succeed, so a refusal inside bwrap or docker is the sandbox's doing, not a broken probe.
"""

from __future__ import annotations

import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandboxes.support import (
    HOLDER,
    NEEDS_BWRAP,
    NEEDS_DOCKER,
    OpenSandbox,
    kinds,
    processes_holding,
    python_in,
    wait_until,
)

from fixloop.sandboxes import leftover_containers, remove_leftovers

CONFINING = kinds("bwrap", "docker")
ALL = kinds("local", "bwrap", "docker")
GREETING = "hello from the host"


class _Greeter(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(f"{GREETING}\n".encode())


def _host_addresses() -> list[str]:
    addresses = ["127.0.0.1"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
            outward = probe.getsockname()[0]
        except OSError:
            outward = None
    if outward and outward not in addresses:
        addresses.append(outward)
    return addresses


@pytest.fixture(scope="module")
def host_server() -> Iterator[int]:
    """A TCP server on every host address; returns its port."""
    server = socketserver.ThreadingTCPServer(("0.0.0.0", 0), _Greeter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("address", _host_addresses())
def test_the_local_control_reaches_the_host_server(
    sandbox_of: OpenSandbox, host_server: int, address: str
) -> None:
    sandbox = sandbox_of("local")
    result = sandbox.run([sys.executable, "probe.py", "connect", address, str(host_server)])
    assert result.ok, result
    assert result.stdout.strip() == GREETING


@pytest.mark.parametrize("kind", CONFINING)
@pytest.mark.parametrize("address", _host_addresses())
def test_no_network_the_host_server_is_out_of_reach(
    sandbox_of: OpenSandbox, host_server: int, kind: str, address: str
) -> None:
    sandbox = sandbox_of(kind)
    result = sandbox.run([python_in(kind), "probe.py", "connect", address, str(host_server)])
    assert result.exit_code == 1, result
    assert result.stdout.startswith("refused: "), result
    assert GREETING not in result.stdout


@pytest.mark.parametrize("kind", ALL)
def test_a_write_inside_the_worktree_is_allowed(
    sandbox_of: OpenSandbox, worktree: Path, kind: str
) -> None:
    sandbox = sandbox_of(kind)
    (worktree / "sub").mkdir()
    result = sandbox.run(
        [python_in(kind), "../probe.py", "write", "made.txt"], cwd=worktree / "sub"
    )
    assert result.ok, result
    assert (worktree / "sub" / "made.txt").read_text() == "written from inside\n"


@pytest.mark.parametrize("kind", CONFINING)
def test_a_write_outside_the_worktree_is_refused(
    sandbox_of: OpenSandbox, worktree: Path, kind: str
) -> None:
    outside = Path("/var/tmp") / f"fixloop-outside-{uuid.uuid4().hex}.txt"
    control = sandbox_of("local").run([sys.executable, "probe.py", "write", str(outside)])
    assert control.ok and outside.exists(), "the control must be able to write there"
    outside.unlink()
    sandbox = sandbox_of(kind)
    for target in (outside, Path("/etc/fixloop-sandbox-test")):
        result = sandbox.run([python_in(kind), "probe.py", "write", str(target)])
        assert result.exit_code == 1, (target, result)
        assert result.stdout.startswith("refused: "), result
        assert not target.exists(), target
    # Next to the worktree (here under /tmp, which bwrap replaces): whatever the command sees
    # there, the host's folder is untouched.
    sibling = worktree.parent / "outside.txt"
    sandbox.run([python_in(kind), "probe.py", "write", str(sibling)])
    assert not sibling.exists()


@pytest.mark.parametrize("kind", CONFINING)
def test_a_writable_folder_outside_the_worktree_is_writable_and_only_it(
    sandbox_of: OpenSandbox, worktree: Path, kind: str
) -> None:
    reports = Path("/var/tmp") / f"fixloop-reports-{uuid.uuid4().hex}"
    reports.mkdir()
    beside = reports.with_name(reports.name + "-beside")
    beside.mkdir()
    try:
        sandbox = sandbox_of(kind, writable=(reports,))
        result = sandbox.run([python_in(kind), "probe.py", "write", str(reports / "r.xml")])
        assert result.ok, result
        assert (reports / "r.xml").read_text() == "written from inside\n"
        refused = sandbox.run([python_in(kind), "probe.py", "write", str(beside / "r.xml")])
        assert refused.stdout.startswith("refused: "), refused
        assert not (beside / "r.xml").exists()
    finally:
        for folder in (reports, beside):
            for child in folder.iterdir():
                child.unlink()
            folder.rmdir()


@pytest.mark.parametrize("kind", CONFINING)
def test_tmp_is_private_and_writable(sandbox_of: OpenSandbox, kind: str) -> None:
    name = f"/tmp/fixloop-private-{uuid.uuid4().hex}"
    sandbox = sandbox_of(kind)
    result = sandbox.run([python_in(kind), "probe.py", "write", name])
    assert result.ok, result
    assert not Path(name).exists(), "the sandbox's /tmp is its own"


@pytest.mark.parametrize("kind", ALL)
def test_a_timeout_kills_the_whole_process_tree(
    sandbox_of: OpenSandbox, worktree: Path, kind: str
) -> None:
    token = f"tree-{uuid.uuid4().hex}"
    sandbox = sandbox_of(kind)
    result = sandbox.run([python_in(kind), "probe.py", "tree", token, "ready"], timeout_s=4)
    assert (worktree / "ready").is_file(), "the tree was up before the timeout"
    assert result.timed_out
    assert result.exit_code == 137, result
    assert wait_until(lambda: not processes_holding(token)), processes_holding(token)


@pytest.mark.parametrize("kind", ALL)
def test_a_child_left_running_is_killed_when_the_command_ends(
    sandbox_of: OpenSandbox, kind: str
) -> None:
    token = f"orphan-{uuid.uuid4().hex}"
    result = sandbox_of(kind).run([python_in(kind), "probe.py", "orphan", token], timeout_s=60)
    assert result.ok and not result.timed_out, result
    assert wait_until(lambda: not processes_holding(token)), processes_holding(token)


@pytest.mark.parametrize("kind", ALL)
def test_a_child_that_leaves_the_process_group(sandbox_of: OpenSandbox, kind: str) -> None:
    """It keeps the output pipe open; the call still returns. Only local cannot kill it."""
    token = f"escape-{uuid.uuid4().hex}"
    try:
        result = sandbox_of(kind).run([python_in(kind), "probe.py", "escape", token])
        assert result.ok and not result.timed_out, result
        if kind == "local":
            assert processes_holding(token), "local is not isolation: the child got away"
        else:
            assert wait_until(lambda: not processes_holding(token)), processes_holding(token)
    finally:
        for pid in processes_holding(token):
            os.kill(pid, signal.SIGKILL)


def _hold_then_sigkill(
    kind: str, worktree: Path, token: str, extra: list[str]
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a fixloop process running `probe.py hold` in a sandbox, wait until the probe is
    up, SIGKILL the fixloop process; returns it and the probe's network namespace."""
    ready = worktree / "ready"
    holder = subprocess.Popen(
        [sys.executable, str(HOLDER), kind, str(worktree), python_in(kind), token, "ready", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        up = wait_until(lambda: ready.is_file() and ready.read_text().endswith("\n"), 60)
        assert up, _output_of(holder) if holder.poll() is not None else "not ready"
        assert processes_holding(token), "the probe runs while fixloop does"
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    return holder, ready.read_text().strip()


def _output_of(process: subprocess.Popen[bytes]) -> str:
    return process.stdout.read().decode() if process.stdout else ""


def _processes_in(namespace: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str((entry / "ns" / "net").readlink()) == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@NEEDS_BWRAP
def test_bwrap_namespace_is_gone_after_a_sigkill_of_fixloop(worktree: Path) -> None:
    token = f"hold-{uuid.uuid4().hex}"
    holder, namespace = _hold_then_sigkill("bwrap", worktree, token, [])
    assert holder.returncode == -signal.SIGKILL
    assert namespace != str(Path("/proc/self/ns/net").readlink()), (
        "the probe had a network of its own"
    )
    assert wait_until(lambda: not processes_holding(token)), processes_holding(token)
    assert wait_until(lambda: not _processes_in(namespace)), "no process is left in the namespace"


@NEEDS_DOCKER
def test_docker_container_is_removed_by_recovery_after_a_sigkill_of_fixloop(
    docker_image: str, worktree: Path
) -> None:
    token = f"hold-{uuid.uuid4().hex}"
    run_id = f"killed-{uuid.uuid4().hex[:8]}"
    holder, _ = _hold_then_sigkill("docker", worktree, token, [docker_image, run_id])
    assert holder.returncode == -signal.SIGKILL
    [left] = [c for c in leftover_containers() if c.run_id == run_id]
    assert left.status == "running", "the daemon keeps a container its client no longer watches"
    assert processes_holding(token)
    removed = remove_leftovers([run_id])
    assert [c.id for c in removed] == [left.id]
    assert [c for c in leftover_containers() if c.run_id == run_id] == []
    assert wait_until(lambda: not processes_holding(token)), processes_holding(token)


@NEEDS_BWRAP
def test_bwrap_still_sees_an_interpreter_environment_under_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The private /tmp hides the host's /tmp, but not the environment fixloop itself runs from
    (a virtualenv made under /tmp, as CI machines often do): the step library's tools run it."""
    from fixloop.sandboxes.bubblewrap import BubblewrapSandbox

    environment = tmp_path / "venv"
    (environment / "bin").mkdir(parents=True)
    tool = environment / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho from the environment\n")
    tool.chmod(0o755)
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    (worktree / ".git").mkdir()
    assert tmp_path.resolve().is_relative_to(Path("/tmp").resolve())  # the case this is about
    monkeypatch.setattr(sys, "prefix", str(environment))
    with BubblewrapSandbox(worktree) as sandbox:
        done = sandbox.run([str(tool)], cwd=worktree)
    assert (done.exit_code, done.stdout) == (0, "from the environment\n"), done.stderr
