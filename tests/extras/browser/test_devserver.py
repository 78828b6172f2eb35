"""Dev servers started in a worktree for real: awaited, stopped, timed out, left over by a kill."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest
from tests.extras.browser.conftest import SERVE_STATIC, SERVERS, answers, http_get

from fixloop.diagnostics import FixloopError
from fixloop.extras.browser.devserver import (
    MARKER_VARIABLE,
    RECORDS,
    DevServer,
    dev_server,
    free_port,
    stop_leftovers,
)
from fixloop.process_table import marked_by_environment, processes

PYTHON = {"PYTHON": sys.executable}


def _processes_of(server: DevServer) -> list[int]:
    return [p.pid for p in marked_by_environment(f"{MARKER_VARIABLE}={server.marker}")]


def test_a_dev_server_runs_in_the_worktree_on_its_port_and_is_stopped(
    site: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "run"
    with dev_server(SERVE_STATIC, site, folder, run_id="r1", env=PYTHON) as server:
        assert b"A small page" in http_get(server.url)  # served from the worktree
        assert server.url == f"http://127.0.0.1:{server.port}/"
        assert os.getpgid(server.pid) == server.pgid == server.pid  # a group of its own
        assert os.getpgid(server.pid) != os.getpgid(0)
        (record,) = (folder / RECORDS).iterdir()
        data = json.loads(record.read_text())
        assert (data["pid"], data["port"], data["run_id"]) == (server.pid, server.port, "r1")
        assert data["worktree"] == str(site) and data["started_at"]
        assert _processes_of(server) == [server.pid]
    assert not answers(server.url)
    assert _processes_of(server) == []
    assert list((folder / RECORDS).iterdir()) == []


def test_port_host_and_the_command_are_data(tmp_path: Path) -> None:
    worktree = tmp_path / "wt $(touch pwned) `touch pwned2`"
    worktree.mkdir()
    command = (
        'printf "%s %s %s" "$PORT" "$HOST" "$BROWSER" > env.txt; '
        "echo 'quoted \"text\" $(not run)' > quoted.txt; " + SERVE_STATIC
    )
    with dev_server(command, worktree, tmp_path / "run", env=PYTHON) as server:
        assert (worktree / "env.txt").read_text() == f"{server.port} 127.0.0.1 none"
    assert (worktree / "quoted.txt").read_text() == 'quoted "text" $(not run)\n'
    assert not (tmp_path / "pwned").exists() and not (worktree / "pwned").exists()
    assert not (worktree / "pwned2").exists()


def test_a_server_that_never_answers_times_out_and_its_whole_group_is_killed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "run"
    # Listens nowhere; one child stays in the group, one leaves it (setsid) and ignores SIGTERM.
    command = "sleep 600 & setsid bash -c 'trap \"\" TERM; sleep 600' & echo starting; wait"
    started = time.monotonic()
    with (
        pytest.raises(FixloopError) as raised,
        dev_server(command, tmp_path, folder, timeout_s=2, grace_s=1),
    ):
        pytest.fail("the block must not run: the server never answered")
    assert raised.value.exit_code == 1
    message = str(raised.value)
    assert "did not answer HTTP on 127.0.0.1:" in message and "within 2 s" in message
    assert "starting" in message  # the server's own output, as a hint
    assert time.monotonic() - started < 15
    assert list((folder / RECORDS).iterdir()) == []
    assert _sleepers_of_this_test() == []


def _sleepers_of_this_test() -> list[int]:
    """Live `sleep 600` processes started by a dev server of this test process."""
    mine = f"{MARKER_VARIABLE}={os.getpid()}-".encode()
    found = []
    for info in processes():
        if info.argv[:2] != ("sleep", "600"):
            continue
        with contextlib.suppress(OSError):
            environ = Path(f"/proc/{info.pid}/environ").read_bytes().split(b"\0")
            if any(entry.startswith(mine) for entry in environ):
                found.append(info.pid)
    return found


def test_a_server_that_exits_at_once_says_why(tmp_path: Path) -> None:
    with (
        pytest.raises(FixloopError) as raised,
        dev_server("echo 'port 3000 already in use' >&2; exit 3", tmp_path, tmp_path / "run"),
    ):
        pytest.fail("unreachable")
    assert "exited (3) before answering: port 3000 already in use" in str(raised.value)


def test_an_exception_in_the_block_stops_the_server(site: Path, tmp_path: Path) -> None:
    with (
        pytest.raises(RuntimeError),
        dev_server(SERVE_STATIC, site, tmp_path / "run", env=PYTHON) as server,
    ):
        raise RuntimeError("the task failed")
    assert not answers(server.url)
    assert _processes_of(server) == []


@pytest.mark.parametrize(("command", "message"), [("  ", "devServerCommand is empty")])
def test_bad_input_is_exit_two(command: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as raised, dev_server(command, tmp_path, tmp_path / "r"):
        pytest.fail("unreachable")
    assert raised.value.exit_code == 2 and message in str(raised.value)
    with pytest.raises(FixloopError) as missing, dev_server("true", tmp_path / "nope", tmp_path):
        pytest.fail("unreachable")
    assert missing.value.exit_code == 2 and "no such worktree" in str(missing.value)


def test_the_server_of_a_killed_run_is_stopped_by_stop_leftovers(
    site: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "run"
    # Quiet: a server logging each request would die of SIGPIPE on its next line once its
    # starter (the reader of its output) is gone; a quiet one outlives it, the case to handle.
    quiet = SERVE_STATIC + " 2>/dev/null"
    holder = subprocess.Popen(
        [sys.executable, str(SERVERS / "hold_dev_server.py"), str(folder), str(site), quiet],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **PYTHON},
    )
    try:
        assert holder.stdout is not None
        url = holder.stdout.readline().strip()
        assert answers(url)
        assert stop_leftovers(folder) == []  # its run is live: left alone
        assert answers(url)
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert answers(url), "the server should outlive its killed starter (own group)"

        (stopped,) = stop_leftovers(folder)
        assert (stopped.url, stopped.run_id, stopped.worktree) == (url, "held", str(site))
        assert not answers(url)
        assert _processes_of(stopped) == []
        assert list((folder / RECORDS).iterdir()) == []
        assert stop_leftovers(folder) == []
    finally:
        holder.kill()
        holder.wait()
        stop_leftovers(folder, grace_s=0)


def test_stop_leftovers_without_records_is_a_no_op(tmp_path: Path) -> None:
    assert stop_leftovers(tmp_path) == []


def test_parallel_servers_get_ports_of_their_own(site: Path, tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack, ThreadPoolExecutor(3) as pool:
        start = partial(dev_server, SERVE_STATIC, site, tmp_path / "run", env=PYTHON)
        managers = [start(run_id=f"task-{n}") for n in range(3)]
        servers = list(pool.map(stack.enter_context, managers))
        assert len({s.port for s in servers}) == 3
        assert all(answers(s.url) for s in servers)
    assert not any(answers(s.url) for s in servers)
    assert len({free_port() for _ in range(50)}) == 50
