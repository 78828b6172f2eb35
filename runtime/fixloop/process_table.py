"""The process table, read from `/proc`: who runs what, since when, marked how; stopping them.

fixloop marks the processes it starts so that it can find them again from another process (a
later `cleanup` or `recover`), without trusting a pid that may have been reused: a browser by
its profile folder on its command line, a dev server by a variable in its environment (which its
children inherit, even those that leave its process group). Only processes of the current user
are ever looked at. On a system without `/proc` the table is empty: cleanups then find nothing
to stop, they never guess.

It sits with `processes.py` under everything that starts a child: the browser's cleanups find
their processes here, and a bubblewrap sandbox's background command, which runs in a session of
its own inside the sandbox, is found here as its bwrap's descendants (`descendants`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    pgid: int
    ppid: int
    state: str  # `Z`: a zombie, dead and waiting to be reaped; nothing left to stop
    start_ticks: int  # clock ticks after boot: with the pid, names one process for good
    argv: tuple[str, ...]

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")

    def age_s(self) -> float:
        return max(0.0, _uptime_s() - self.start_ticks / os.sysconf("SC_CLK_TCK"))


def _uptime_s() -> float:
    return float((_PROC / "uptime").read_text().split()[0])


def read_process(pid: int) -> ProcessInfo | None:
    """The process `pid` if it exists and belongs to this user, else None."""
    folder = _PROC / str(pid)
    try:
        if folder.stat().st_uid != os.getuid():
            return None
        stat = (folder / "stat").read_text()
        raw_argv = (folder / "cmdline").read_bytes()
    except OSError:
        return None
    # `comm` (in parentheses) may itself hold spaces and parentheses: split after the last one.
    fields = stat[stat.rfind(")") + 2 :].split()
    argv = tuple(part.decode(errors="replace") for part in raw_argv.split(b"\0") if part)
    return ProcessInfo(pid, int(fields[2]), int(fields[1]), fields[0], int(fields[19]), argv)


def processes() -> Iterator[ProcessInfo]:
    """Every live process of this user, in pid order."""
    if not _PROC.is_dir():
        return
    pids = sorted(int(entry.name) for entry in _PROC.iterdir() if entry.name.isdigit())
    for pid in pids:
        info = read_process(pid)
        if info is not None and info.alive:
            yield info


def descendants(pid: int) -> list[ProcessInfo]:
    """The live processes of this user below `pid`: its children, theirs, and so on."""
    table = list(processes())
    below: list[ProcessInfo] = []
    parents = {pid}
    while found := [info for info in table if info.ppid in parents and info not in below]:
        below += found
        parents = {info.pid for info in found}
    return below


def is_running(pid: int, start_ticks: int) -> bool:
    """True while the very process `pid` that started at `start_ticks` is alive."""
    info = read_process(pid)
    return info is not None and info.start_ticks == start_ticks and info.alive


def has_environment_entry(pid: int, entry: str) -> bool:
    """True when process `pid` was started with `entry` (`NAME=value`) in its environment."""
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return entry.encode() in environ.split(b"\0")


def marked_by_environment(entry: str) -> list[ProcessInfo]:
    return [info for info in processes() if has_environment_entry(info.pid, entry)]


def stop(
    find: Callable[[], Iterable[ProcessInfo]],
    grace_s: float,
    *,
    gentle: bool = True,
    settle_s: float = 5.0,
) -> list[ProcessInfo]:
    """Stop every process `find()` lists: SIGTERM (when `gentle`), then SIGKILL after `grace_s`.

    `find` is asked again and again, so that children started meanwhile are stopped too, until
    it lists nothing (SIGKILL is asynchronous: a killed process is gone only a moment later) or
    `settle_s` more seconds have passed. Returns the processes that were signalled.
    """
    signalled: dict[tuple[int, int], ProcessInfo] = {}
    if gentle:
        for info in find():
            if signal_process(info, signal.SIGTERM):
                signalled[info.pid, info.start_ticks] = info
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(True for _ in find()):
            time.sleep(0.05)
    deadline = time.monotonic() + settle_s
    while (left := list(find())) and time.monotonic() < deadline:
        for info in left:
            if signal_process(info, signal.SIGKILL):
                signalled[info.pid, info.start_ticks] = info
        time.sleep(0.02)
    return list(signalled.values())


def signal_process(info: ProcessInfo, signum: signal.Signals) -> bool:
    """Signal this very process (its start time checked first); False when it was gone."""
    if not is_running(info.pid, info.start_ticks):
        return False
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(info.pid, signum)
        return True
    return False


def signal_group(pgid: int, signum: signal.Signals) -> None:
    """Signal a process group this process started itself (no pid reuse is possible while the
    caller has not reaped its leader)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
