"""The run's sandbox: its JSON round trip, the launcher it writes, the working tree it confines
commands to, and (for real) a command run through it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.sandboxes.support import NEEDS_BWRAP

from fixloop.diagnostics import FixloopError
from fixloop.sandboxes import SandboxChoice, choose_sandbox
from fixloop.sandboxes.launcher import (
    LAUNCHER_TEXT,
    RunSandbox,
    read_run_sandbox,
    working_tree_of,
    write_launcher,
)

DOCKER = RunSandbox(
    SandboxChoice("docker", "image img:1 on the Docker daemon", image="img:1"),
    run_id="20260101-000000-abcd",
    python="/venv/bin/python",
    read_only=("/pack/workflows/lib", "/repo/.git/fixloop/runs/x"),
    timeout_s=42.5,
)


def test_a_run_sandbox_survives_its_json_round_trip(tmp_path: Path) -> None:
    launcher = write_launcher(tmp_path / "run", DOCKER)
    assert launcher == tmp_path / "run" / "sandbox" / "run"
    assert read_run_sandbox(launcher.with_name("config.json")) == DOCKER
    assert RunSandbox.from_json(json.loads(json.dumps(DOCKER.to_json()))) == DOCKER


def test_the_launcher_is_the_same_text_for_every_run_and_executable(tmp_path: Path) -> None:
    first = write_launcher(tmp_path / "a", DOCKER)
    other = RunSandbox(SandboxChoice("local", "asked for"), run_id="other", python="/x")
    second = write_launcher(tmp_path / "b" / "with 'quote' $(x)", other)
    assert first.read_text() == second.read_text() == LAUNCHER_TEXT
    assert os.access(first, os.X_OK) and os.access(second, os.X_OK)
    assert "$(x)" not in LAUNCHER_TEXT and DOCKER.run_id not in LAUNCHER_TEXT


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("[]", "expected a JSON object"),
        ('{"kind": "auto"}', "kind: expected one of local, bwrap, docker, got 'auto'"),
        ('{"kind": "bwrap", "run_id": 3}', "run_id: expected text"),
        ('{"kind": "docker", "image": 1}', "image: expected text or null"),
        ('{"kind": "local", "read_only": "/x"}', "read_only: expected a list of paths"),
        ('{"kind": "local", "timeout_s": 0}', "timeout_s: expected a number of seconds > 0"),
        ("{not json", "not a sandbox configuration: Expecting property name"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_file(tmp_path: Path, data: str, problem: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(data)
    with pytest.raises(FixloopError) as caught:
        read_run_sandbox(config)
    (line,) = [d.format() for d in caught.value.diagnostics]
    assert line.startswith(f"{config}:1:1: sandbox: ")
    assert problem in line
    assert caught.value.exit_code == 2


def test_a_missing_config_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        read_run_sandbox(tmp_path / "nowhere.json")
    assert "No such file or directory" in caught.value.diagnostics[0].format()


def test_the_working_tree_is_the_folder_holding_dot_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    inner = tmp_path / "repo" / "src" / "pkg"
    inner.mkdir(parents=True)
    assert working_tree_of(inner) == (tmp_path / "repo").resolve()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: /elsewhere\n")  # a linked worktree's .git is a file
    assert working_tree_of(linked) == linked.resolve()
    with pytest.raises(FixloopError, match="not inside a git working tree"):
        working_tree_of(Path("/"))


def test_the_runtime_interpreter_becomes_the_image_python_only_in_a_container() -> None:
    assert DOCKER.argv(["/venv/bin/python", "tool.py"]) == ["python3", "tool.py"]
    assert DOCKER.argv(["bash", "-c", "x"]) == ["bash", "-c", "x"]
    local = RunSandbox(SandboxChoice("local", "asked"), python="/venv/bin/python")
    assert local.argv(["/venv/bin/python", "tool.py"]) == ["/venv/bin/python", "tool.py"]


@NEEDS_BWRAP
def test_the_launcher_runs_a_command_in_the_sandbox_and_relays_it(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "wt")], check=True)
    run = RunSandbox(choose_sandbox("bwrap"), run_id="r", python=sys.executable)
    launcher = write_launcher(tmp_path / "run", run)
    env = {"PATH": os.environ["PATH"], "FIXLOOP_PYTHON": sys.executable}
    script = 'echo out; echo err >&2; touch inside; touch "$1" || exit 9'
    outside = Path("/var/tmp") / f"fixloop-launcher-test-{os.getpid()}"
    done = subprocess.run(
        [str(launcher), "bash", "-c", script, "_", str(outside)],
        cwd=tmp_path / "wt",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (9, "out\n")
    assert done.stderr.startswith("err\n") and "Read-only file system" in done.stderr
    assert (tmp_path / "wt" / "inside").is_file()
    assert not outside.exists()


@NEEDS_BWRAP
def test_read_only_folders_under_tmp_are_seen_but_not_written_under_bwrap(tmp_path: Path) -> None:
    worktree, library = tmp_path / "wt", tmp_path / "lib"
    subprocess.run(["git", "init", "-q", str(worktree)], check=True)
    library.mkdir()
    (library / "tool.txt").write_text("tool\n")
    script = 'cat "$1/tool.txt"; touch "$1/written" || exit 9'
    for read_only in ((str(library),), ()):
        run = RunSandbox(choose_sandbox("bwrap"), read_only=read_only)
        done = run.run(["bash", "-c", script, "_", str(library)], cwd=worktree)
        # Without it, the folder is hidden by the private /tmp: cat fails, touch finds no folder.
        assert done.exit_code == 9
        assert (done.stdout == "tool\n") is bool(read_only)
        reason = "Read-only file system" if read_only else "No such file or directory"
        assert reason in done.stderr.splitlines()[-1]
    assert not (library / "written").exists()
