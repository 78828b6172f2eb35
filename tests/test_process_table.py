"""The process table (`process_table.py`) on real processes: a process's descendants, also those
that left its session, and a stop that asks with SIGTERM before it kills."""

from __future__ import annotations

import signal
import subprocess
import time
from functools import partial
from pathlib import Path

from fixloop import process_table


def _wait_for(path: Path) -> None:
    for _ in range(500):
        if path.exists():
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


def test_descendants_include_grandchildren_in_a_session_of_their_own(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    line = f"setsid sleep 300 & sleep 300 & touch {ready}; wait"
    parent = subprocess.Popen(["bash", "-c", line], start_new_session=True)
    try:
        _wait_for(ready)
        below = process_table.descendants(parent.pid)
        sleeps = [info for info in below if info.argv[:1] == ("sleep",)]
        assert len(sleeps) == 2 and all(info.ppid != 0 for info in below)
        assert parent.pid not in {info.pid for info in below}
        signalled = process_table.stop(partial(process_table.descendants, parent.pid), 5.0)
        assert {info.pid for info in sleeps} <= {info.pid for info in signalled}
        assert process_table.descendants(parent.pid) == []
    finally:
        process_table.signal_group(parent.pid, signal.SIGKILL)
        parent.wait()


def test_stop_asks_with_sigterm_before_it_kills(tmp_path: Path) -> None:
    inner = 'trap "echo bye > said; exit 0" TERM; touch up; while :; do sleep 0.05; done'
    parent = subprocess.Popen(["bash", "-c", 'bash -c "$0" & wait', inner], cwd=tmp_path)
    try:
        _wait_for(tmp_path / "up")
        process_table.stop(partial(process_table.descendants, parent.pid), 5.0)
        assert (tmp_path / "said").read_text() == "bye\n"
    finally:
        parent.kill()
        parent.wait()
