"""`fixloop sandbox exec` through the real CLI (the command a run's launcher runs): the argv
runs confined to the working tree holding the current directory, its output and exit code come
back, a bad configuration is one line, exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sandboxes.support import NEEDS_BWRAP

from fixloop.sandboxes import choose_sandbox
from fixloop.sandboxes.launcher import RunSandbox, write_launcher


def sandbox_exec(config: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", "sandbox", "exec", "--config", str(config), "--", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    folder = tmp_path / "wt"
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "src").mkdir()
    return folder.resolve()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path outside the worktree that exists on the host (not under bwrap's private /tmp)."""
    path = Path("/var/tmp") / f"fixloop-sandbox-exec-{os.getpid()}"
    yield path
    path.unlink(missing_ok=True)


def _config(tmp_path: Path, kind: str) -> Path:
    launcher = write_launcher(tmp_path / "run", RunSandbox(choose_sandbox(kind), run_id="t"))
    return launcher.with_name("config.json")


def test_output_and_exit_code_come_back(tmp_path: Path, worktree: Path) -> None:
    config = _config(tmp_path, "local")
    done = sandbox_exec(
        config,
        "bash",
        "-c",
        'pwd; echo "$1" >&2; exit 5',
        "_",
        "a b $(c)",
        cwd=worktree / "src",
    )
    assert (done.returncode, done.stdout, done.stderr) == (5, f"{worktree}/src\n", "a b $(c)\n")


@NEEDS_BWRAP
def test_under_bwrap_a_write_outside_the_worktree_is_refused(
    tmp_path: Path, worktree: Path, outside: Path
) -> None:
    config = _config(tmp_path, "bwrap")
    script = 'touch inside && touch "$1"'
    done = sandbox_exec(config, "bash", "-c", script, "_", str(outside), cwd=worktree)
    assert done.returncode == 1
    assert "Read-only file system" in done.stderr
    assert (worktree / "inside").is_file()
    assert not outside.exists()
    local = sandbox_exec(_config(tmp_path / "l", "local"), "touch", str(outside), cwd=worktree)
    assert local.returncode == 0 and outside.exists()  # the same command, unconfined


@NEEDS_BWRAP
def test_under_bwrap_there_is_no_network(tmp_path: Path, worktree: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = str(server.getsockname()[1])
        connect = ["bash", "-c", 'exec 3<>"/dev/tcp/127.0.0.1/$1"', "_", port]
        confined = sandbox_exec(_config(tmp_path, "bwrap"), *connect, cwd=worktree)
        unconfined = sandbox_exec(_config(tmp_path / "l", "local"), *connect, cwd=worktree)
    assert confined.returncode != 0 and "/dev/tcp/127.0.0.1" in confined.stderr
    assert unconfined.returncode == 0, unconfined.stderr


def test_a_missing_program_is_127(tmp_path: Path, worktree: Path) -> None:
    done = sandbox_exec(_config(tmp_path, "local"), "no-such-program-x", cwd=worktree)
    assert done.returncode == 127


def test_a_bad_config_is_one_line_exit_two(tmp_path: Path, worktree: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"kind": "podman"}')
    done = sandbox_exec(config, "true", cwd=worktree)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"{config}:1:1: sandbox: not a sandbox configuration: kind: expected one of local, "
        "bwrap, docker, got 'podman'"
    ]


def test_outside_a_working_tree_is_one_line_exit_two(tmp_path: Path) -> None:
    done = sandbox_exec(_config(tmp_path, "local"), "true", cwd=Path("/"))
    assert done.returncode == 2
    assert "not inside a git working tree" in done.stderr and "Traceback" not in done.stderr


def test_no_command_is_a_usage_error(tmp_path: Path, worktree: Path) -> None:
    done = sandbox_exec(_config(tmp_path, "local"), cwd=worktree)
    assert done.returncode == 2 and "no command given" in done.stderr
