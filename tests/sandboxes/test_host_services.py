"""No host service is reachable from bwrap or docker: real Unix socket servers of the host, at
the kinds of path services use (the Docker daemon's, D-Bus's, an ssh agent's, X11's), an
abstract socket, and the real Docker daemon; and no variable pointing at one reaches a command.

The local sandbox runs the same probe as the control: there every server answers, so a refusal
inside bwrap or docker is the sandbox's doing. (TCP on the host's loopback and outward address:
`test_isolation.py`.)
"""

from __future__ import annotations

import os
import shutil
import socketserver
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandboxes.support import NEEDS_DOCKER, OpenSandbox, kinds, python_in, wait_until

from fixloop.sandboxes.host_services import HOST_SERVICE_VARIABLES, host_sockets

GREETING = "hello from a host service"
ALL = kinds("local", "bwrap", "docker")
CONFINING = kinds("bwrap", "docker")


class _Greeter(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(f"{GREETING}\n".encode())


class _Servers:
    """Unix socket servers of the host (threads of this test process), stopped at the end."""

    def __init__(self) -> None:
        self.servers: list[socketserver.ThreadingUnixStreamServer] = []
        self.files: list[Path] = []
        self.folders: list[Path] = []

    def serve(self, address: str) -> str:
        """A server at `address` (`@NAME`: an abstract socket); returns the probe's address."""
        if not address.startswith("@"):
            folder = Path(address).parent
            if not folder.exists():
                self.folders.append(folder)
                folder.mkdir(parents=True)
            self.files.append(Path(address))
        bound = "\0" + address[1:] if address.startswith("@") else address
        server = socketserver.ThreadingUnixStreamServer(bound, _Greeter)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.servers.append(server)
        return address

    def close(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()
        for path in self.files:
            path.unlink(missing_ok=True)
        for folder in self.folders:
            shutil.rmtree(folder.parent if folder.name == ".X11-unix" else folder)


@pytest.fixture
def servers() -> Iterator[_Servers]:
    opened = _Servers()
    yield opened
    opened.close()


def _runtime_folder() -> Path:
    """Where services of this user put sockets: /run when we may write there (root: the Docker
    daemon's and the system bus's folder), else the user's runtime folder (D-Bus, ssh-agent)."""
    if os.access("/run", os.W_OK):
        return Path("/run")
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    assert runtime and os.access(runtime, os.W_OK), "no writable /run or XDG_RUNTIME_DIR here"
    return Path(runtime)


def _place(where: str, worktree: Path, tag: str) -> tuple[str, str]:
    """(the path the server binds, the path the probe connects to) for a kind of place."""
    if where == "run":  # the Docker daemon's /var/run/docker.sock, the system bus
        bound = str(_runtime_folder() / f"fixloop-test-{tag}.sock")
        return bound, bound.replace("/run/", "/var/run/", 1) if bound.startswith("/run/") else bound
    if where == "var-tmp":  # a service's socket outside every folder the sandbox hides
        bound = f"/var/tmp/fixloop-test-{tag}.sock"
        return bound, bound
    if where == "tmp":  # X11's /tmp/.X11-unix/X0, ssh-agent's /tmp/ssh-*/agent.*
        bound = f"/tmp/fixloop-test-{tag}/.X11-unix/X0"
        return bound, bound
    if where == "worktree":  # a host program's socket in the repository (a dev database)
        bound = str(worktree / ".service.sock")
        return bound, bound
    bound = f"@fixloop-test-{tag}"  # abstract
    return bound, bound


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("where", ["run", "var-tmp", "tmp", "worktree", "abstract"])
def test_a_host_unix_socket_is_out_of_reach(
    sandbox_of: OpenSandbox, servers: _Servers, worktree: Path, kind: str, where: str
) -> None:
    bound, reached = _place(where, worktree, uuid.uuid4().hex[:12])
    servers.serve(bound)
    result = sandbox_of(kind).run([python_in(kind), "probe.py", "unix", reached])
    if kind == "local":  # the control: the server is real and answers
        assert (result.exit_code, result.stdout.strip()) == (0, GREETING), result
    else:
        assert result.exit_code == 1, result
        assert result.stdout.startswith("refused: "), result
        assert GREETING not in result.stdout


@pytest.fixture
def daemon_at_run() -> Iterator[str]:
    """The Docker daemon the tests use, also answering at the runtime folder, where a system
    daemon's socket is (`/var/run/docker.sock`): socat relays a socket there to it."""
    address = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    assert address.startswith("unix://"), address
    relay = _runtime_folder() / f"fixloop-test-docker-{uuid.uuid4().hex[:12]}.sock"
    process = subprocess.Popen(
        ["socat", f"UNIX-LISTEN:{relay},fork", f"UNIX-CONNECT:{address.removeprefix('unix://')}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(relay.exists), "socat did not listen"
        yield str(relay)
    finally:
        process.kill()
        process.wait()
        relay.unlink(missing_ok=True)


@NEEDS_DOCKER
@pytest.mark.needs("socat")
@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("where", ["DOCKER_HOST", "runtime folder"])
def test_the_docker_daemon_is_out_of_reach(
    sandbox_of: OpenSandbox, request: pytest.FixtureRequest, kind: str, where: str
) -> None:
    """The real daemon: a command that reached it could start a container writing anywhere on
    the host. Asked where the tests' daemon listens, and at the folder a system daemon's is."""
    if where == "DOCKER_HOST":
        address = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        assert address.startswith("unix://"), address
        socket_path = address.removeprefix("unix://")
    else:
        socket_path = request.getfixturevalue("daemon_at_run")
        socket_path = socket_path.replace("/run/", "/var/run/", 1)
    ping = "GET /_ping HTTP/1.0\\r\\n\\r\\n"
    result = sandbox_of(kind).run([python_in(kind), "probe.py", "unix", socket_path, ping])
    if kind == "local":
        assert result.exit_code == 0 and result.stdout.startswith("HTTP/1.0 200"), result
    else:
        assert result.exit_code == 1 and result.stdout.startswith("refused: "), result


@pytest.mark.parametrize("kind", ALL)
def test_variables_naming_host_services_never_reach_a_command(
    sandbox_of: OpenSandbox, kind: str
) -> None:
    """Not even when a caller hands them over (fixloop's own environment never passes)."""
    services = {
        "SSH_AUTH_SOCK": "/tmp/ssh-abc/agent.1",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
        "DOCKER_HOST": "unix:///var/run/docker.sock",
        "DISPLAY": ":0",
        "XDG_RUNTIME_DIR": "/run/user/1000",
    }
    result = sandbox_of(kind).run(
        [python_in(kind), "probe.py", "environ"], env={**services, "CI": "1"}
    )
    assert result.ok, result
    names = set(result.stdout.split())
    assert "CI" in names  # what a caller hands over on purpose still arrives
    assert names.isdisjoint(HOST_SERVICE_VARIABLES), names & HOST_SERVICE_VARIABLES


@pytest.mark.needs("bwrap")
def test_the_user_runtime_folder_is_hidden_under_bwrap(
    sandbox_of: OpenSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Path("/var/tmp") / f"fixloop-test-runtime-{uuid.uuid4().hex[:12]}"
    runtime.mkdir()
    try:
        (runtime / "bus").write_text("a file where the session bus would be\n")
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        seen = sandbox_of("bwrap").run(["ls", "-A", str(runtime)])
        assert seen.ok and seen.stdout == "", seen
        assert (runtime / "bus").is_file()
    finally:
        (runtime / "bus").unlink(missing_ok=True)
        runtime.rmdir()


def test_a_socket_the_environment_names_is_covered_even_when_the_kernel_lists_none(
    servers: _Servers, tmp_path: Path
) -> None:
    """An ssh agent or daemon of another network namespace is not in /proc/net/unix: the paths
    the environment names are covered all the same."""
    agent = servers.serve(str(tmp_path / "agent.sock"))
    bus = servers.serve(str(tmp_path / "bus"))
    listed_nothing = tmp_path / "unix"
    listed_nothing.write_text("Num RefCount Protocol Flags Type St Inode Path\n")
    environ = {"SSH_AUTH_SOCK": agent, "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus},guid=1"}
    found = host_sockets([tmp_path], [], environ=environ, table=listed_nothing)
    assert found == sorted([Path(agent).resolve(), Path(bus).resolve()])
    # Under a hidden folder nothing shows again: already gone, nothing to cover.
    assert host_sockets([Path("/")], [tmp_path], environ=environ, table=listed_nothing) == []
    # Shown again by a folder bound inside the hidden one: covered.
    again = host_sockets(
        [Path("/"), tmp_path], [tmp_path.parent], environ=environ, table=listed_nothing
    )
    assert again == found


@pytest.mark.parametrize("kind", ALL)
def test_a_service_handed_in_on_purpose_is_the_only_one_in_reach(
    sandbox_of: OpenSandbox, servers: _Servers, kind: str
) -> None:
    """The socket a caller names (the screenshot service) is bound at its path and its variable
    set; another host socket beside it stays covered."""
    tag = uuid.uuid4().hex[:12]
    handed = Path(servers.serve(f"/var/tmp/fixloop-test-{tag}-handed.sock"))
    beside = servers.serve(f"/var/tmp/fixloop-test-{tag}-beside.sock")
    sandbox = sandbox_of(kind, services={"FIXLOOP_TEST_SERVICE": handed})
    named = sandbox.run(["sh", "-c", 'printf %s "$FIXLOOP_TEST_SERVICE"'])
    assert named.stdout == str(handed), named
    reached = sandbox.run([python_in(kind), "probe.py", "unix", str(handed)])
    assert (reached.exit_code, reached.stdout.strip()) == (0, GREETING), reached
    other = sandbox.run([python_in(kind), "probe.py", "unix", beside])
    if kind == "local":
        assert other.exit_code == 0, other
    else:
        assert other.exit_code == 1 and other.stdout.startswith("refused: "), other


@pytest.mark.parametrize(
    ("variable", "path", "problem"),
    [
        ("DOCKER_HOST", "SOCKET", "not a variable a service may be named by"),
        ("lower-case", "SOCKET", "not a variable a service may be named by"),
        ("FIXLOOP_TEST_SERVICE", "/etc/passwd", "no socket there"),
        ("FIXLOOP_TEST_SERVICE", "relative.sock", "no socket there"),
    ],
)
def test_a_service_that_is_not_a_socket_or_names_a_host_service_is_refused(
    sandbox_of: OpenSandbox, servers: _Servers, variable: str, path: str, problem: str
) -> None:
    from fixloop.diagnostics import FixloopError

    socket_path = servers.serve(f"/var/tmp/fixloop-test-{uuid.uuid4().hex[:12]}.sock")
    given = Path(socket_path if path == "SOCKET" else path)
    with pytest.raises(FixloopError, match=problem) as raised:
        sandbox_of("local", services={variable: given})
    assert raised.value.exit_code == 2
