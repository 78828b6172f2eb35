"""execute-wave's backpressure command runs in the run's sandbox: under bwrap, a build that
writes outside the worktree fails (and the host is untouched); unconfined, the same build
passes. The run writes its launcher and says which sandbox it used."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.host_service import counting_host_service
from tests.sandboxes.support import NEEDS_BWRAP, PROBE, kinds
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import fix, implement, score, scores

from fixloop.events import EventKind
from fixloop.sandboxes import choose_sandbox


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host path outside the run's worktree, visible (read-only) under bwrap."""
    path = Path("/var/tmp") / f"fixloop-backpressure-{os.getpid()}"
    yield path
    path.unlink(missing_ok=True)


def _tasks(wave: Wave, outside: Path) -> None:
    # The build writes into the worktree (allowed) and outside it (what a sandbox refuses).
    command = f"echo built > build.log && touch {outside}"
    wave.write_tasks({"tasks": [{"id": 1, "name": "a"}], "backpressureCommand": command})


@NEEDS_BWRAP
def test_under_bwrap_a_build_writing_outside_the_worktree_fails(wave: Wave, outside: Path) -> None:
    _tasks(wave, outside)
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        **{f"fixer/wave-1/backpressure-{n}": fix({"src/a.py": f"a = {n}\n"}) for n in (1, 2, 3)},
    }
    result = wave.run(script, sandbox=choose_sandbox("bwrap"))
    (task,) = result.tasks
    assert (task.status, task.reason) == ("rolled-back", "backpressure failed")
    assert not outside.exists()
    log = (Path(result.run_dir) / "context" / "backpressure-1.log").read_text()
    assert "Read-only file system" in log
    config = json.loads((Path(result.run_dir) / "sandbox" / "config.json").read_text())
    assert (config["kind"], config["run_id"]) == ("bwrap", Path(result.run_dir).name)
    notes = [e.message for e in wave.events if e.kind is EventKind.NOTE]
    assert "sandbox: bwrap (asked for with --sandbox bwrap)" in notes


def test_unconfined_the_same_build_passes(wave: Wave, outside: Path) -> None:
    _tasks(wave, outside)
    script = {
        "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
        "reviewer/1/verify": score(1, scores("logic", 9)),
    }
    result = wave.run(script, sandbox=choose_sandbox("local"))
    assert result.exit_code == 0, result.to_json()
    assert outside.exists()


@NEEDS_BWRAP
def test_under_bwrap_an_executors_shell_cannot_write_outside_its_worktree(
    wave: Wave, outside: Path
) -> None:
    """Every task's role calls go through the run's sandbox, not only the wave's own steps."""
    wave.write_tasks({"tasks": [{"id": 1, "name": "a"}]})
    executor = {**implement(1, {"src/a.py": "a = 1\n"}), "bash": [f"touch {outside}"]}
    script = {"executor/1/implement": executor, "reviewer/1/verify": score(1, scores("logic", 9))}
    result = wave.run(script, sandbox=choose_sandbox("bwrap"))
    assert result.exit_code == 0, result.to_json()
    assert not outside.exists()


@pytest.mark.parametrize("kind", kinds("local", "bwrap"))
def test_the_backpressure_build_cannot_reach_a_host_service(wave: Wave, kind: str) -> None:
    """The build is a document step's command (through the run's launcher, not the model's
    shell): a host Unix socket server at the runtime folder counts who connects."""
    with counting_host_service("wave") as (path, connections):
        probe = wave.repo.path / "tools" / "probe.py"
        probe.parent.mkdir(exist_ok=True)
        probe.write_text(PROBE.read_text())
        wave.repo.git("add", "--", "tools/probe.py")
        wave.repo.git("commit", "--quiet", "-m", "probe", "--", "tools/probe.py")
        command = f"python3 tools/probe.py unix {path}"
        wave.write_tasks({"tasks": [{"id": 1, "name": "a"}], "backpressureCommand": command})
        script = {
            "executor/1/implement": implement(1, {"src/a.py": "a = 1\n"}),
            "reviewer/1/verify": score(1, scores("logic", 9)),
            **{
                f"fixer/wave-1/backpressure-{n}": fix({"src/a.py": f"a = {n}\n"}) for n in (1, 2, 3)
            },
        }
        wave.run(script, sandbox=choose_sandbox(kind))
    assert bool(connections) is (kind == "local"), connections
