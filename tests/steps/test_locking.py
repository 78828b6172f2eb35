"""The repository lock: exclusive across processes, released when its holder is killed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from fixloop.diagnostics import FixloopError
from fixloop.steps.locking import repository_lock

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from fixloop.steps.locking import repository_lock
    with repository_lock(Path(sys.argv[1]), 5):
        print("held", flush=True)
        time.sleep(60)
    """
)


def test_a_held_lock_makes_others_wait_then_fail(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(FixloopError) as caught, repository_lock(tmp_path, 0.2):
            pass
        assert "held the repository lock" in caught.value.diagnostics[0].message
        holder.kill()  # SIGKILL: the kernel releases the flock
        holder.wait()
        with repository_lock(tmp_path, 5):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_threads_of_one_process_take_it_in_turn_without_polling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    polls: list[float] = []
    monkeypatch.setattr(time, "sleep", polls.append)  # a poll of the flock (`locks`) lands here
    order: list[str] = []
    waiting = threading.Event()

    def second() -> None:
        waiting.set()
        with repository_lock(tmp_path, 30):
            order.append("second")

    with repository_lock(tmp_path, 5):
        thread = threading.Thread(target=second)
        thread.start()
        waiting.wait()
        # The second thread cannot have it while this one holds it, not even with no wait.
        with pytest.raises(FixloopError), repository_lock(tmp_path, 0):
            pass
        order.append("first")
    thread.join()
    assert order == ["first", "second"]
    assert polls == []
