"""The host's way to a dev server confined in a sandbox without a network: a loopback port of the
host, relayed to a Unix socket in a folder shared with the sandbox.

    with host_relay() as relay:                   # listens on 127.0.0.1:relay.port now
        sandbox = run_sandbox.open(worktree, writable=[relay.folder])
        sandbox.start(inside_argv(command, relay), env={"PORT": str(relay.port), ...})
        # the browser opens http://127.0.0.1:{relay.port}/

Inside the sandbox (bwrap, docker) the server listens on the sandbox's own loopback, at the same
port number as the host's relay (so the URLs it writes into its pages are right on the host
too), and `relay_inside.py`, started beside it, listens on `FOLDER/http.sock` and connects each
connection to that port. Here each connection to the host's port is connected to that socket.

The folder and what is in it are the sandbox's to write, so the host trusts nothing there: it
opens `http.sock` by a descriptor of the folder, without following a symbolic link
(`O_PATH | O_NOFOLLOW`), checks that what it opened is a socket, and connects through that very
descriptor (`/proc/self/fd/N`), so a link to a host service (the Docker daemon's socket, say),
swapped in at any moment, is refused, never reached. It relays at most `MAX_CONNECTIONS` at a
time; it runs nothing and writes nothing but bytes between the two sockets.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fixloop.extras.browser.relay_inside import pump

SOCKET_NAME = "http.sock"
FOLDER_PREFIX = "fxd-"
MAX_CONNECTIONS = 64
CONNECT_TIMEOUT_S = 10.0
_SHORT_TMP = Path("/tmp")  # noqa: S108  (a socket path may not exceed 107 bytes)
_INSIDE = Path(__file__).with_name("relay_inside.py")
# The sandbox's first process: the relay in the background, then the server's own command in
# its place (so the sandbox ends when the server does). Values come as arguments, never text.
_WRAPPER = 'python3 -I -c "$1" "$2" "$3" & exec bash -c "$4" dev-server'


@dataclass
class Relay:
    """The host's side: `port` on 127.0.0.1, relayed to `folder`/http.sock."""

    folder: Path
    port: int
    listener: socket.socket
    slots: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(MAX_CONNECTIONS)
    )
    live: set[socket.socket] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)

    @property
    def socket_path(self) -> Path:
        return self.folder / SOCKET_NAME

    def accept_loop(self) -> None:
        while not self.closing.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # the listener was closed: the relay ends
            if not self.slots.acquire(blocking=False):
                client.close()  # too many at once: this one is refused, the others go on
                continue
            threading.Thread(target=self.relay, args=(client,), daemon=True).start()

    def relay(self, client: socket.socket) -> None:
        inside: socket.socket | None = None
        try:
            try:
                inside = connect_inside(self.folder)
            except OSError:
                return  # nothing listens inside yet (or what is there is no socket)
            with self.lock:
                self.live.update((client, inside))
            if self.closing.is_set():
                return
            back = threading.Thread(target=pump, args=(inside, client), daemon=True)
            back.start()
            pump(client, inside)
            back.join()
        finally:
            with self.lock:
                self.live.discard(client)
                if inside is not None:
                    self.live.discard(inside)
            client.close()
            if inside is not None:
                inside.close()
            self.slots.release()

    def close(self) -> None:
        self.closing.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        with self.lock:
            live = list(self.live)
        for connection in live:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


def connect_inside(folder: Path) -> socket.socket:
    """A connection to `folder`/http.sock, only if that is a socket itself (see the module doc);
    OSError otherwise."""
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        target = os.open(SOCKET_NAME, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    finally:
        os.close(directory)
    try:
        if not stat.S_ISSOCK(os.fstat(target).st_mode):
            raise OSError(f"{folder / SOCKET_NAME} is not a socket")
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(CONNECT_TIMEOUT_S)
            connection.connect(f"/proc/self/fd/{target}")
            connection.settimeout(None)
        except OSError:
            connection.close()
            raise
        return connection
    finally:
        os.close(target)


@contextlib.contextmanager
def host_relay(pick_port: Callable[[], int]) -> Iterator[Relay]:
    """A fresh folder (only its owner may enter) and the host's relay listening on a port
    `pick_port` gives, for the `with` block; then the relay stops and the folder goes."""
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=_SHORT_TMP))
    try:
        listener = _listen(pick_port)
        relay = Relay(folder, listener.getsockname()[1], listener)
        thread = threading.Thread(target=relay.accept_loop, name="dev-server-relay", daemon=True)
        thread.start()
        try:
            yield relay
        finally:
            relay.close()
            thread.join(5)
    finally:
        remove_folder(folder)


def _listen(pick_port: Callable[[], int], attempts: int = 5) -> socket.socket:
    for attempt in range(attempts):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.bind(("127.0.0.1", pick_port()))
            listener.listen(MAX_CONNECTIONS)
            return listener
        except OSError:
            listener.close()
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def remove_folder(folder: Path) -> None:
    """Remove a relay folder (its socket, what the sandbox left there); only one of ours."""
    if not folder.name.startswith(FOLDER_PREFIX) or folder.parent != _SHORT_TMP:
        return
    shutil.rmtree(folder, ignore_errors=True)  # never follows a link the sandbox left there


def inside_argv(command: str, relay: Relay) -> list[str]:
    """The sandbox's argv: the relay in the background, then `command` (`bash -c COMMAND`)."""
    source = _INSIDE.read_text(encoding="utf-8")
    wrapper = ["bash", "-c", _WRAPPER, "dev-server-relay"]
    return [*wrapper, source, str(relay.socket_path), str(relay.port), command]


__all__ = ["Relay", "connect_inside", "host_relay", "inside_argv", "remove_folder"]
