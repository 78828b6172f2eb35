"""The host's relay to a confined dev server, for real sockets: it carries the bytes both ways,
and what the sandbox puts in the shared folder in place of its socket (a link to a host service,
a plain file) is refused, never connected to."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixloop.extras.browser.devserver import free_port
from fixloop.extras.browser.relay import Relay, connect_inside, host_relay, inside_argv


class UnixServer:
    """A Unix socket server that counts its connections and echoes what it reads, upper-cased."""

    def __init__(self, path: Path) -> None:
        self.accepted = 0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(8)
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with connection:
                while data := connection.recv(4096):
                    connection.sendall(data.upper())

    def close(self) -> None:
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(5)


@pytest.fixture
def relay() -> Iterator[Relay]:
    with host_relay(free_port) as started:
        yield started


def _ask(port: int, data: bytes) -> bytes:
    """What comes back for `data`; b"" when the relay ends the connection (a reset included:
    it closes one with the request unread, and a write after that fails)."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        try:
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
            while chunk := connection.recv(4096):
                answer += chunk
        except OSError:  # reset, or not connected after a reset
            return b""
    return answer


def test_the_relay_carries_bytes_both_ways_and_its_folder_goes(relay: Relay) -> None:
    inside = UnixServer(relay.socket_path)  # what the relay inside the sandbox listens on
    try:
        assert _ask(relay.port, b"get / http/1.1\r\n") == b"GET / HTTP/1.1\r\n"
        assert _ask(relay.port, b"again") == b"AGAIN"
        assert inside.accepted == 2
        assert oct(relay.folder.stat().st_mode & 0o777) == "0o700"
    finally:
        inside.close()


def test_nothing_listening_inside_yet_ends_the_connection(relay: Relay) -> None:
    assert _ask(relay.port, b"GET / HTTP/1.1\r\n") == b""


def test_a_link_to_a_host_service_in_place_of_the_socket_is_refused(
    relay: Relay, tmp_path: Path
) -> None:
    service = UnixServer(tmp_path / "service.sock")  # a host service (the Docker daemon, say)
    try:
        relay.socket_path.symlink_to(tmp_path / "service.sock")
        assert _ask(relay.port, b"GET /containers/json HTTP/1.1\r\n") == b""
        with pytest.raises(OSError, match="not a socket"):
            connect_inside(relay.folder)
        assert service.accepted == 0
        relay.socket_path.unlink()
        relay.socket_path.write_text("a plain file")
        assert _ask(relay.port, b"GET / HTTP/1.1\r\n") == b""
        assert service.accepted == 0
    finally:
        service.close()


def test_the_sandbox_side_gets_its_values_as_arguments_never_as_text(relay: Relay) -> None:
    command = 'echo "$HOME"; $(touch /tmp/x) `id`'
    argv = inside_argv(command, relay)
    assert argv[:2] == ["bash", "-c"]
    assert argv[-3:] == [str(relay.socket_path), str(relay.port), command]
    assert command not in argv[2] and str(relay.port) not in argv[2]


def test_leaving_the_block_removes_the_folder_and_closes_the_port() -> None:
    with host_relay(free_port) as started:
        UnixServer(started.socket_path).close()
    assert not started.folder.exists()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", started.port), timeout=2).close()
