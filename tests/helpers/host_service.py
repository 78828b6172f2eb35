"""A Unix socket server of the host that counts who connects: what a confined command must not
reach. It listens in the runtime folder, where the Docker daemon's and the system bus's sockets
live (/run when the test may write there, else the user's XDG_RUNTIME_DIR)."""

from __future__ import annotations

import contextlib
import os
import socketserver
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

GREETING = b"hello from a host service\n"


@contextlib.contextmanager
def counting_host_service(name: str) -> Iterator[tuple[Path, list[str]]]:
    """The socket's path (`fixloop-NAME-<uuid>.sock`, one of its own per test) and the list of
    connections, one entry each; the server is stopped and its file removed at the end."""
    folder = Path("/run") if os.access("/run", os.W_OK) else Path(os.environ["XDG_RUNTIME_DIR"])
    path = folder / f"fixloop-{name}-{uuid.uuid4().hex[:12]}.sock"
    connections: list[str] = []

    class Counting(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            connections.append("connected")
            self.request.sendall(GREETING)

    server = socketserver.ThreadingUnixStreamServer(str(path), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield path, connections
    finally:
        server.shutdown()
        server.server_close()
        path.unlink(missing_ok=True)
