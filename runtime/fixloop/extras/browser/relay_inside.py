"""The relay inside a dev server's sandbox: a Unix socket in a folder the host shares, to the port
the dev server listens on, on the sandbox's own loopback.

    python3 -I -c "$(cat relay_inside.py)" SOCKET PORT

The sandbox (bwrap, docker) has no network but a loopback of its own, which the host's browser
cannot reach; a Unix socket with a path is reached through the file system instead, in any
network namespace. This listens on SOCKET and copies each connection's bytes to and from
127.0.0.1:PORT, in both directions, until either side ends. It runs inside the sandbox, as
confined as the server: it needs only python3's standard library (a docker image has no fixloop),
and it is handed to python3 as text (`-c`, isolated mode: nothing of the worktree is imported).
The host's side (`relay.py`) trusts nothing it finds in the folder.
"""

import contextlib
import socket
import sys
import threading

CHUNK = 65536
CONNECT_TIMEOUT_S = 10.0


def pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def serve(client: socket.socket, port: int) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT_S)
    except OSError:
        client.close()  # not listening yet: the host sees the connection end, and asks again
        return
    upstream.settimeout(None)
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def main(argv: list[str]) -> int:
    path, port = argv[0], int(argv[1])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, port), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
