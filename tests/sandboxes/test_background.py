"""`Sandbox.start` for real: a command that runs until it is stopped, confined as `run` confines
one, its output read as it is written, and nothing of it left once `stop` returns."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.sandbox_image import container_exists
from tests.sandboxes.support import OpenSandbox, kinds, processes_holding, wait_until

from fixloop.diagnostics import FixloopError

ALL = kinds("local", "bwrap", "docker")
SLEEP = "python3 -c 'import time; time.sleep(600)'"  # its command line then holds the token


def _sleepers(token: str) -> int:
    """How many of the token's holders run the sleep itself. `setsid` makes its session before
    it runs the sleep: a stop while it still holds the token as `setsid` would end it with the
    group, and the test would wait for a survivor that was never there."""
    found = 0
    for pid in processes_holding(token):
        try:
            program = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        found += Path(program.decode(errors="replace")).name == "python3"
    return found


def _first_line(chunks: Iterator[bytes]) -> bytes:
    line = b""
    for chunk in chunks:
        line += chunk
        if b"\n" in line:
            return line
    return line


@pytest.mark.parametrize("kind", ALL)
def test_a_started_command_runs_until_stopped_and_leaves_nothing(
    kind: str, sandbox_of: OpenSandbox, worktree: Path, tmp_path: Path
) -> None:
    token = f"fixloop-background-{uuid.uuid4().hex}"
    outside = tmp_path / "outside.txt"
    name = f"fixloop-test-{token}" if kind == "docker" else ""
    # A child that starts a session of its own, and a write outside the worktree.
    line = (
        f"echo started $GREETING; (echo x > {outside}) 2>/dev/null; "
        f"setsid {SLEEP} {token} & exec {SLEEP} {token}"
    )
    sandbox = sandbox_of(kind)
    started = sandbox.start(["bash", "-c", line], env={"GREETING": "hello"}, name=name)
    try:
        assert _first_line(started.chunks()) == b"started hello\n"
        assert started.poll() is None
        assert started.container == name
        assert (started.pid == 0) == (kind == "docker")
        assert wait_until(lambda: _sleepers(token) >= 2)
    finally:
        started.stop(grace_s=1)
    assert started.poll() is not None
    assert outside.exists() == (kind == "local")
    if kind == "local":
        # Not isolation: the setsid child left the group, as under `run`.
        # (`setsid` may fork first: its own short-lived parent also holds the token.)
        assert wait_until(lambda: len(processes_holding(token)) == 1)
        (left,) = processes_holding(token)
        os.kill(left, 9)
    else:
        assert wait_until(lambda: processes_holding(token) == [])
    if kind == "docker":
        assert wait_until(lambda: not container_exists(name))


@pytest.mark.parametrize("kind", ALL)
def test_stop_asks_first_a_command_that_traps_sigterm_ends_on_its_own_terms(
    kind: str, sandbox_of: OpenSandbox, worktree: Path
) -> None:
    """SIGTERM before SIGKILL under every sandbox: under bwrap the command is in a session of
    its own inside the sandbox, which a signal to bwrap's group does not reach, and a bwrap that
    ends takes its sandbox down with SIGKILL."""
    line = "trap 'echo bye > said-bye; exit 3' TERM; echo up; while :; do sleep 0.05; done"
    started = sandbox_of(kind).start(["bash", "-c", line])
    try:
        assert _first_line(started.chunks()) == b"up\n"
    finally:
        started.stop(grace_s=10)
    assert (worktree / "said-bye").read_text() == "bye\n"
    assert started.poll() == 3  # its own exit code, not a kill's


@pytest.mark.parametrize("kind", ALL)
def test_a_command_that_ends_reports_its_exit_code(kind: str, sandbox_of: OpenSandbox) -> None:
    started = sandbox_of(kind).start(["bash", "-c", "exit 7"])
    try:
        assert wait_until(lambda: started.poll() is not None)
        assert started.poll() == 7
    finally:
        started.stop(grace_s=1)


@pytest.mark.parametrize("kind", kinds("local", "bwrap"))
def test_a_program_that_is_not_there_is_one_line(kind: str, sandbox_of: OpenSandbox) -> None:
    with pytest.raises(FixloopError) as raised:
        sandbox_of(kind).start(["no-such-program-here"])
    assert f"no-such-program-here: command not found (in the {kind} sandbox)" in str(raised.value)


def test_shell_text_is_refused(sandbox_of: OpenSandbox) -> None:
    with pytest.raises(FixloopError, match="list of words"):
        sandbox_of("local").start("sleep 1")
