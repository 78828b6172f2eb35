"""Host services a sandboxed command must not reach: Unix sockets, and the variables naming them.

Network (TCP, UDP) and abstract Unix sockets are out of reach by the network namespace alone:
bwrap unshares it (`--unshare-net`) and docker runs with `network_mode="none"`, and the kernel
scopes abstract socket names to a network namespace. A Unix socket with a PATH is different:
`connect()` finds it through the file system, in any namespace, and a read-only mount does not
stop it (connecting needs write permission on the socket file, which a read-only mount does not
take away). So what hides a host socket is the sandbox's view of the file system:

- the folders where services put their sockets are replaced by an empty, read-only tmpfs under
  bwrap: `/run` (which `/var/run` links to on current systems; otherwise it is hidden too) and
  `$XDG_RUNTIME_DIR` (the user's D-Bus, Wayland, ssh-agent, gpg-agent, Docker rootless); `/tmp`
  (X11's `/tmp/.X11-unix`, ssh-agent's `/tmp/ssh-*`) is private already;
- every other socket the sandbox could still see is covered with `/dev/null` at its path, so a
  `connect()` there is refused: each socket bound in the host's network namespace (the kernel
  lists them in `/proc/net/unix`, which finds a socket wherever it lives, also in the worktree),
  and the ones the environment names (`DOCKER_HOST`, `SSH_AUTH_SOCK`, `DBUS_*_BUS_ADDRESS`,
  X11's `DISPLAY`), which may belong to a service in another namespace.

Why not a seccomp filter that forbids `socket(AF_UNIX, …)`: the commands are the project's
tests, and ordinary test suites make Unix sockets of their own (Python's multiprocessing
forkserver, asyncio Unix servers, a database started by a fixture). Hiding the host's sockets
keeps those working and leaves the host's services out of reach.

A caller may hand a sandbox one service on purpose (`checked_services`: a variable and the
socket it names, such as the screenshot service a design executor asks for its pictures): that
socket alone is bound at its own path, and its variable set, in that sandbox.

What remains (see docs/sandboxes.md): a socket bound after the command started, outside the
hidden folders, or bound by a relative path (the kernel then lists no folder for it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

UNIX_SOCKETS_TABLE = Path("/proc/net/unix")
X11_SOCKETS = "/tmp/.X11-unix"  # noqa: S108  (the X server's fixed folder, only read here)
# Variables that point a program at a host service: never handed to a sandboxed command.
HOST_SERVICE_VARIABLES = frozenset(
    {
        "DOCKER_HOST",
        "DOCKER_CONTEXT",
        "CONTAINER_HOST",
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XAUTHORITY",
        "XDG_RUNTIME_DIR",
        "PULSE_SERVER",
    }
)
_DBUS_PATH = re.compile(r"(?:^|;)unix:(?:[^;]*,)?path=([^,;]+)")
_X11_DISPLAY = re.compile(r"^(?:unix)?:(\d+)(?:\.\d+)?$")


def without_host_services(environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` without the variables that name host services."""
    return {k: v for k, v in environment.items() if k not in HOST_SERVICE_VARIABLES}


def checked_services(services: Mapping[str, Path] | None) -> dict[str, Path]:
    """The host services a caller hands a sandbox on purpose (variable → socket path): each
    socket is bound at its own path and named to the command by its variable. ValueError when
    a variable is not a name of its own or a path is not a socket now."""
    checked: dict[str, Path] = {}
    for variable, path in (services or {}).items():
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", variable) or variable in HOST_SERVICE_VARIABLES:
            raise ValueError(f"{variable!r}: not a variable a service may be named by")
        real = _socket_at(str(path)) if Path(path).is_absolute() else None
        if real is None:
            raise ValueError(f"{path}: no socket there for {variable}")
        checked[variable] = real
    return checked


def hidden_folders(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders bwrap replaces with an empty read-only tmpfs: where services keep sockets."""
    environ = os.environ if environ is None else environ
    found = [Path("/run").resolve()]
    var_run = Path("/var/run")
    if var_run.is_dir():
        found.append(var_run.resolve())
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_absolute() and Path(runtime).is_dir():
        found.append(Path(runtime).resolve())
    unique = [folder for folder in dict.fromkeys(found) if folder != Path("/")]
    # A folder inside another hidden one is hidden with it.
    return [f for f in unique if not any(f != o and f.is_relative_to(o) for o in unique)]


def _listed_socket_paths(table: Path) -> list[str]:
    """Paths of the Unix sockets bound in this network namespace (`/proc/net/unix`'s last
    column; abstract names start with `@` and are not files)."""
    try:
        lines = table.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    paths = []
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.append(fields[7])
    return paths


def _named_socket_paths(environ: Mapping[str, str]) -> list[str]:
    """Socket paths the environment points programs at."""
    paths = []
    docker_host = environ.get("DOCKER_HOST", "")
    if docker_host.startswith("unix://"):
        paths.append(docker_host.removeprefix("unix://"))
    if environ.get("SSH_AUTH_SOCK"):
        paths.append(environ["SSH_AUTH_SOCK"])
    for name in ("DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"):
        paths += _DBUS_PATH.findall(environ.get(name, ""))
    display = _X11_DISPLAY.match(environ.get("DISPLAY", ""))
    if display:
        paths.append(f"{X11_SOCKETS}/X{display.group(1)}")
    paths.append("/var/run/docker.sock")
    return paths


def _socket_at(path: str) -> Path | None:
    """The socket's real path, when a socket is there now."""
    try:
        real = Path(os.path.realpath(path))
        return real if stat.S_ISSOCK(real.lstat().st_mode) else None
    except (OSError, ValueError):
        return None


def host_sockets(
    visible: Iterable[Path],
    hidden: Sequence[Path],
    *,
    environ: Mapping[str, str] | None = None,
    table: Path = UNIX_SOCKETS_TABLE,
    shared: Iterable[Path] = (),
) -> list[Path]:
    """The host's Unix sockets a sandbox would see: each one inside a `visible` folder (bound
    into the sandbox) and not inside a `hidden` one, unless a visible folder inside the hidden
    one shows it again, and not one of the `shared` ones (`checked_services`). To be covered
    with /dev/null at their paths."""
    environ = os.environ if environ is None else environ
    shown = [folder.resolve() for folder in visible]
    kept = {path.resolve() for path in shared}
    candidates = [*_listed_socket_paths(table), *_named_socket_paths(environ)]
    found: dict[Path, None] = {}
    for candidate in candidates:
        real = _socket_at(candidate)
        if real is None or real in kept:
            continue
        showing = [f for f in shown if real.is_relative_to(f)]
        if not showing:
            continue
        deepest = max(showing, key=lambda f: len(f.parts))
        if any(real.is_relative_to(h) and not deepest.is_relative_to(h) for h in hidden):
            continue  # under a hidden folder that nothing shows again: gone already
        found[real] = None
    return sorted(found)


__all__ = [
    "HOST_SERVICE_VARIABLES",
    "checked_services",
    "hidden_folders",
    "host_sockets",
    "without_host_services",
]
