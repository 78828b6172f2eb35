"""What the sandbox tests run INSIDE a sandbox (standard library only; copied into the worktree).

probe.py connect HOST PORT       prints what the server said, or `refused: <reason>` (exit 1)
probe.py unix PATH [REQUEST]      connects to the Unix socket PATH (`@NAME`: abstract), sends
                                 REQUEST if given, prints the first line of the answer, or
                                 `refused: <reason>` (exit 1)
probe.py environ                 prints the names of its environment variables, one a line
probe.py write PATH              writes PATH, or prints `refused: <reason>` (exit 1)
probe.py tree TOKEN READY        starts a child that sleeps, writes READY, then sleeps itself
                                 (both hold TOKEN in their argv: the host finds them in /proc)
probe.py until PATH TOKEN        waits until PATH exists, then exits 0
probe.py orphan TOKEN            starts a child that sleeps, and exits at once
probe.py escape TOKEN            like orphan, the child in a session of its own (`setsid`)
probe.py hold TOKEN READY        writes its network namespace to READY, then sleeps
probe.py spawn N                 starts N sleeping children; prints how many started
probe.py allocate MEGABYTES      allocates and touches that much memory
probe.py signal NUMBER           kills itself with that signal
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

SLEEP_S = 600


def connect(host: str, port: int) -> int:
    try:
        with socket.create_connection((host, port), timeout=5) as connection:
            print(connection.recv(100).decode().strip())
    except OSError as exc:
        print(f"refused: {exc}")
        return 1
    return 0


def unix(path: str, request: str = "") -> int:
    address = "\0" + path[1:] if path.startswith("@") else path
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(5)
            connection.connect(address)
            if request:
                connection.sendall(request.encode().decode("unicode_escape").encode())
            answer = connection.recv(200).decode(errors="replace")
    except OSError as exc:
        print(f"refused: {exc}")
        return 1
    print(answer.splitlines()[0] if answer else "(connected, no answer)")
    return 0


def write(path: str) -> int:
    try:
        Path(path).write_text("written from inside\n")
    except OSError as exc:
        print(f"refused: {exc}")
        return 1
    return 0


def tree(token: str, ready: str) -> int:
    subprocess.Popen([sys.executable, __file__, "sleep", token])
    Path(ready).write_text("up\n")
    time.sleep(SLEEP_S)
    return 0


def until(path: str) -> int:
    while not Path(path).exists():
        time.sleep(0.02)
    return 0


def orphan(token: str, *, own_session: bool = False) -> int:
    subprocess.Popen([sys.executable, __file__, "sleep", token], start_new_session=own_session)
    return 0


def hold(token: str, ready: str) -> int:
    namespace = str(Path("/proc/self/ns/net").readlink())
    Path(ready).write_text(f"{namespace}\n")
    del token  # only in the argv, for the host to find this process
    time.sleep(SLEEP_S)
    return 0


def spawn(count: int) -> int:
    started = []
    for _ in range(count):
        try:
            started.append(subprocess.Popen(["sleep", "30"]))
        except OSError:
            break
    print(len(started))
    for child in started:
        child.kill()
    return 0


def allocate(megabytes: int) -> int:
    block = bytearray(megabytes << 20)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    print("allocated")
    return 0


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "connect":
        return connect(args[0], int(args[1]))
    if command == "unix":
        return unix(*args[:2])
    if command == "environ":
        print("\n".join(sorted(os.environ)))
        return 0
    if command == "write":
        return write(args[0])
    if command == "tree":
        return tree(args[0], args[1])
    if command == "until":
        return until(args[0])
    if command in ("orphan", "escape"):
        return orphan(args[0], own_session=command == "escape")
    if command == "sleep":
        time.sleep(SLEEP_S)
        return 0
    if command == "hold":
        return hold(args[0], args[1])
    if command == "spawn":
        return spawn(int(args[0]))
    if command == "allocate":
        return allocate(int(args[0]))
    if command == "signal":
        os.kill(os.getpid(), int(args[0]))
        time.sleep(5)
        return 0
    print(f"unknown probe {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
