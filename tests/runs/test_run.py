"""Run bookkeeping: folder in the repository's state dir, events, liveness through the lock."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo

from fixloop.diagnostics import FixloopError
from fixloop.events import Event, EventKind
from fixloop.gitrepo import state_dir_of
from fixloop.runs.run import Run, is_live, list_runs, read_run


def test_state_lives_in_the_git_common_dir(user_repo: UserRepo) -> None:
    assert state_dir_of(user_repo.path) == user_repo.path / ".git" / "fixloop"
    user_repo.git("worktree", "add", "--quiet", "-b", "side", str(user_repo.path.parent / "wt"))
    assert state_dir_of(user_repo.path.parent / "wt") == user_repo.path / ".git" / "fixloop"


def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        state_dir_of(tmp_path)
    assert "repository:" in caught.value.diagnostics[0].format()


def test_a_run_is_live_until_it_finishes(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    assert is_live(run.dir)
    assert read_run(run.dir)["state"] == "running"
    run.finish("finished", commits=2)
    assert not is_live(run.dir)
    info = read_run(run.dir)
    assert info["state"] == "finished" and info["details"] == {"commits": 2}
    assert info["ended_at"] >= info["started_at"]
    events = [json.loads(line)["event"] for line in run.events_path.read_text().splitlines()]
    assert events == ["run-start", "run-end"]


def test_two_runs_never_share_an_id(user_repo: UserRepo) -> None:
    ids = {Run.start(user_repo.path, "demo").id for _ in range(20)}
    assert len(ids) == 20


def test_a_run_id_must_be_safe_as_a_name(user_repo: UserRepo) -> None:
    with pytest.raises(FixloopError):
        Run.start(user_repo.path, "demo", run_id="../escape")


def test_a_killed_run_reads_as_crashed(user_repo: UserRepo) -> None:
    script = textwrap.dedent(
        """
        import os, signal, sys
        from pathlib import Path
        from fixloop.runs.run import Run
        run = Run.start(Path(sys.argv[1]), "demo")
        print(run.id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(user_repo.path)], capture_output=True, text=True
    )
    assert done.returncode == -9
    run_id = done.stdout.strip()
    [info] = [r for r in list_runs(state_dir_of(user_repo.path)) if r["id"] == run_id]
    assert info["state"] == "crashed" and info["live"] is False


def test_events_from_parallel_threads_stay_whole_lines(user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    payload = "x" * 5000
    with ThreadPoolExecutor(max_workers=8) as pool:
        events = (Event(EventKind.NOTE, payload, data={"n": n}) for n in range(200))
        list(pool.map(run.emit, events))
    run.finish("finished")
    lines = run.events_path.read_text().splitlines()
    assert sorted(json.loads(line).get("n", -1) for line in lines) == [-1, -1, *range(200)]


@pytest.mark.parametrize("content", [b"\xff\xfe{}", b"[1, 2]", b"[" * 10_000])
def test_a_run_json_fixloop_did_not_write_is_an_unreadable_run_everywhere(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    # Not UTF-8, not an object, nested past any run.json: recover, prune and list go on.
    from fixloop.cli.main import main

    run = Run.start(user_repo.path, "demo")
    run.finish("finished")
    (run.dir / "run.json").write_bytes(content)
    assert read_run(run.dir)["state"] == "unreadable"
    repo = str(user_repo.path)
    for command in (["recover"], ["runs", "prune", "--keep", "0"], ["runs", "list"]):
        capsys.readouterr()
        assert main([*command, "--repo", repo]) == 0, command
        assert "internal error" not in capsys.readouterr().err
    assert run.dir.is_dir(), "an unreadable run is not pruned: nobody knows what it holds"


def test_a_state_folder_that_is_a_file_is_one_line_naming_it(user_repo: UserRepo) -> None:
    (user_repo.path / ".git" / "fixloop").write_text("not mine\n")
    with pytest.raises(FixloopError) as caught:
        Run.start(user_repo.path, "demo")
    [problem] = caught.value.diagnostics
    assert problem.format() == (
        f"{user_repo.path / '.git' / 'fixloop'}:1:1: state: "
        "not a folder; fixloop keeps its runs in it: move it away"
    )
    assert (user_repo.path / ".git" / "fixloop").read_text() == "not mine\n"


def test_an_exception_in_a_failing_closed_block_marks_the_run_failed_and_goes_on_up(
    user_repo: UserRepo,
) -> None:
    seen: list[BaseException] = []
    run = Run.start(user_repo.path, "demo")
    with pytest.raises(KeyboardInterrupt), run.failing_closed(lambda: {"items": 3}, seen.append):
        raise KeyboardInterrupt("first line\nsecond line")
    info = read_run(run.dir)
    assert (info["state"], info["details"]["error"], info["details"]["items"]) == (
        "failed",
        "first line",
        3,
    )
    assert [type(exc) for exc in seen] == [KeyboardInterrupt]
    assert not info["live"], "the lock went with the run"
