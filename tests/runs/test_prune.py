"""Pruning run folders: real runs in real repositories; only old finished runs ever go.

Finished runs are made by `fixloop step run` (a real run that ends `finished`); a kept-branch run
and a crashed run with its sentinel by `tests/helpers/protocol_run.py` (`--diverge`, and a real
SIGKILL from `FIXLOOP_CRASH_AT`); a run holding set-aside user content by a real fix-findings run
with `--on-prestaged stash`.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.crash_tally import crash_env
from tests.helpers.fix_findings import BUGGY, Policies, finding, make_repo, run, verdict
from tests.helpers.gitrepo import UserRepo, git

from fixloop.cli.main import main
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.runs.prune import prune_runs, saved_content
from fixloop.runs.run import Run, is_live, read_run
from fixloop.steps.locking import repository_lock

DRIVER = Path(__file__).resolve().parent.parent / "helpers" / "protocol_run.py"


def _runs(repo: Path) -> Path:
    return repo / ".git" / "fixloop" / "runs"


def _names(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()} if folder.is_dir() else set()


def _finished_runs(repo: Path, count: int) -> list[str]:
    """`count` real runs that end `finished`, oldest first."""
    made: list[str] = []
    for _ in range(count):
        before = _names(_runs(repo))
        assert main(["step", "run", "git-protocol", "preflight", "--repo", str(repo)]) == 0
        [new] = _names(_runs(repo)) - before
        made.append(new)
    assert [read_run(_runs(repo) / r)["state"] for r in made] == ["finished"] * count
    return made


def _driver(repo: Path, *options: str, crash_at: str | None = None) -> str:
    """Run the protocol driver; return the id of the run it made."""
    env = crash_env(crash_at or None)
    before = _names(_runs(repo))
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(repo), *options],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode != 0) == bool(crash_at), done.stderr
    [made] = _names(_runs(repo)) - before
    # A crash SIGKILLs the runtime and its step's process group; the group's last process may
    # still be closing the run's lock a moment after the runtime is reaped (under load).
    deadline = time.monotonic() + 10
    while crash_at and is_live(_runs(repo) / made) and time.monotonic() < deadline:
        time.sleep(0.02)
    return made


def _tree(folder: Path) -> list[tuple[str, int]]:
    """Every path under `folder` with its size: a dry run must leave this identical."""
    return sorted(
        (str(p.relative_to(folder)), p.stat().st_size if p.is_file() else -1)
        for p in folder.rglob("*")
    )


def _kept(report: Any) -> dict[str, str]:
    return {d.run_id: d.reason for d in report.kept}


def test_finished_runs_beyond_the_newest_n_go_oldest_first(user_repo: UserRepo) -> None:
    made = _finished_runs(user_repo.path, 5)
    before = user_repo.user_work()
    report = prune_runs(user_repo.path, keep=2)
    assert [d.run_id for d in report.removed] == made[:3]
    assert set(_kept(report)) == _names(_runs(user_repo.path)) == set(made[3:])
    assert all("one of the newest 2 finished runs" in r for r in _kept(report).values())
    assert user_repo.user_work() == before
    again = prune_runs(user_repo.path, keep=2)
    assert again.removed == [] and len(again.kept) == 2


def test_a_dry_run_changes_nothing(user_repo: UserRepo) -> None:
    made = _finished_runs(user_repo.path, 3)
    state = user_repo.path / ".git" / "fixloop"
    before = _tree(state)
    report = prune_runs(user_repo.path, keep=0, dry_run=True)
    assert [d.run_id for d in report.removed] == made
    assert report.lines()[-1] == "would remove 3 run folder(s), kept 0"
    assert _tree(state) == before  # not even a lock file
    assert prune_runs(user_repo.path, keep=0).lines()[-1] == "removed 3 run folder(s), kept 0"
    assert _names(_runs(user_repo.path)) == set()


def test_older_than_keeps_recent_runs_whatever_keep_says(user_repo: UserRepo) -> None:
    made = _finished_runs(user_repo.path, 2)
    report = prune_runs(user_repo.path, keep=0, older_than_days=1)
    assert report.removed == []
    assert all("less than 1 day(s) ago" in r for r in _kept(report).values())
    later = datetime.now(UTC) + timedelta(days=1, hours=1)
    report = prune_runs(user_repo.path, keep=1, older_than_days=1, now=later)
    assert [d.run_id for d in report.removed] == made[:1]
    assert "older than 1 day(s)" in report.removed[0].reason


def test_a_running_run_is_never_removed(user_repo: UserRepo) -> None:
    [old, finished] = _finished_runs(user_repo.path, 2)
    live = Run.start(user_repo.path, "demo")  # running, lock held
    # A finished run whose lock someone holds again: is_live wins over what run.json says.
    fd = os.open(_runs(user_repo.path) / finished / "lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        report = prune_runs(user_repo.path, keep=0)
        assert [d.run_id for d in report.removed] == [old]
        assert _kept(report) == {
            live.id: "running: its lock is held",
            finished: "running: its lock is held",
        }
        assert (_runs(user_repo.path) / finished / "events.jsonl").is_file()
        assert live.dir.is_dir()
    finally:
        os.close(fd)
        live.finish("finished")
    assert {d.run_id for d in prune_runs(user_repo.path, keep=0).removed} == {finished, live.id}


def test_crashed_and_kept_branch_runs_are_never_removed(user_repo: UserRepo) -> None:
    [finished] = _finished_runs(user_repo.path, 1)
    kept = _driver(user_repo.path, "--diverge")
    assert read_run(_runs(user_repo.path) / kept)["state"] == "kept-branch"
    # Crashed last: a run starting afterwards would recover it (and remove its sentinel).
    crashed = _driver(user_repo.path, crash_at="commit-paths:1")
    sentinel = user_repo.path / ".git" / "fixloop" / "sentinels" / crashed
    assert sentinel.is_file()
    report = prune_runs(user_repo.path, keep=0)
    assert [d.run_id for d in report.removed] == [finished]
    reasons = _kept(report)
    assert "not yet recovered" in reasons[crashed] and "sentinel" in reasons[crashed]
    assert (
        reasons[kept]
        == f"its temp branch fixloop/run/{kept} was kept for commits not on your branch"
    )
    assert sentinel.is_file() and (_runs(user_repo.path) / crashed).is_dir()
    assert (_runs(user_repo.path) / kept).is_dir()
    # Recovered (nothing of it is left in git), the crashed run is old news: it may go.
    assert main(["recover", "--repo", str(user_repo.path)]) == 0
    assert not sentinel.exists()
    report = prune_runs(user_repo.path, keep=0)
    assert [d.run_id for d in report.removed] == [crashed]
    assert "recovered" in report.removed[0].reason
    assert set(_kept(report)) == {kept}


def test_a_kept_branch_run_whose_branch_is_gone_may_be_removed(user_repo: UserRepo) -> None:
    kept = _driver(user_repo.path, "--diverge")
    assert prune_runs(user_repo.path, keep=0).removed == []
    user_repo.git("branch", "--quiet", "-D", f"fixloop/run/{kept}")  # merged or dropped by hand
    report = prune_runs(user_repo.path, keep=0)
    assert [d.run_id for d in report.removed] == [kept]
    assert f"its kept branch fixloop/run/{kept} is gone" in report.removed[0].reason


def test_failed_step_runs_may_be_removed_and_refused_ones_leave_no_folder(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    user_repo.git("checkout", "--quiet", "--detach")
    repo = str(user_repo.path)
    assert main(["step", "run", "git-protocol", "preflight", "--repo", repo]) == 1  # a real failure
    [failed] = _names(_runs(user_repo.path))
    assert read_run(_runs(user_repo.path) / failed)["state"] == "failed"
    # Refused before anything ran (a typo in the step or an input): no run folder at all.
    assert main(["step", "run", "git-protocol", "prefligth", "--repo", repo]) == 2
    assert main(["step", "run", "git-protocol", "tag", "--repo", repo, "--input", "TAG=a b"]) == 2
    assert _names(_runs(user_repo.path)) == {failed}
    capsys.readouterr()
    report = prune_runs(user_repo.path, keep=0)
    assert [d.run_id for d in report.removed] == [failed]
    assert "a failed `step run`" in report.removed[0].reason


def test_the_repository_lock_makes_a_prune_wait(user_repo: UserRepo) -> None:
    _finished_runs(user_repo.path, 2)
    with repository_lock(user_repo.path / ".git" / "fixloop", 1.0):
        with pytest.raises(FixloopError) as caught:
            prune_runs(user_repo.path, keep=0, lock_timeout_s=0.2)
        assert caught.value.exit_code == 1
        assert "repository lock" in str(caught.value)
        assert len(_names(_runs(user_repo.path))) == 2
    assert len(prune_runs(user_repo.path, keep=0).removed) == 2


# -- user content a run set aside ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def test_a_run_holding_set_aside_user_content_needs_include_saved(
    pack: Pack, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    (repo / "calc.py").write_text(BUGGY.replace("return 1", "return 1  # mine"), encoding="utf-8")
    git(repo, "add", "--", "calc.py")  # the user's own staged hunk, set aside by the run
    target = finding()
    edit = {"path": "calc.py", "old": "return sum(xs) / len(xs)\n", "new": "return 0.0\n"}
    script = {
        "fixer/1/round-1": {
            "edits": [edit],
            "output": {"files_changed": ["calc.py"], "summary": "guard", "concerns": None},
        },
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, _, _ = run(pack, repo, [target], script, policies=Policies(on_prestaged="stash"))
    assert read_run(session.run_dir)["state"] == "finished"
    assert saved_content(session.run_dir) == ["prestaged-1.patch"]
    ref = f"refs/fixloop/prestaged/{session.run_id}/1"

    report = prune_runs(repo, keep=0)
    assert report.removed == []
    [decision] = report.kept
    assert "prestaged-1.patch" in decision.reason and "--include-saved" in decision.reason
    assert decision.refs == (ref,)
    assert (session.run_dir / "prestaged-1.patch").is_file()

    report = prune_runs(repo, keep=0, include_saved=True)
    [decision] = report.removed
    assert "user content it set aside (prestaged-1.patch)" in decision.reason
    assert ref in decision.describe(dry_run=False)  # named, never deleted
    assert not session.run_dir.exists()
    assert "# mine" in git(repo, "show", f"{ref}:calc.py")


def test_saved_content_finds_displaced_and_uncommitted_folders(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "snapshots" / "finding-1" / "round-1" / "displaced" / "src").mkdir(parents=True)
    (run_dir / "snapshots" / "finding-1" / "round-1" / "displaced" / "src" / "a.py").write_text("x")
    (run_dir / "uncommitted").mkdir()
    (run_dir / "uncommitted" / "REVIEW-FIX.md").write_text("report")
    (run_dir / "kept" / "displaced").mkdir(parents=True)  # empty: nothing saved there
    (run_dir / "prestaged-12.patch").write_text("diff")
    (run_dir / "prestaged-x.patch").write_text("not ours")
    assert saved_content(run_dir) == [
        "prestaged-12.patch",
        "snapshots/finding-1/round-1/displaced/",
        "uncommitted/",
    ]


def test_json_report(user_repo: UserRepo, capsys: pytest.CaptureFixture[str]) -> None:
    made = _finished_runs(user_repo.path, 2)
    capsys.readouterr()
    assert main(["runs", "prune", "--repo", str(user_repo.path), "--keep", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["ok"], data["command"], data["exit_code"]) == (True, "runs prune", 0)
    assert data["counts"] == {"kept": 1, "removed": 1}
    result = data["result"]
    assert result["dry_run"] is False and result["keep"] == 1 and result["older_than_days"] is None
    assert [(d["id"], d["status"]) for d in data["items"]] == [
        (made[0], "removed"),
        (made[1], "kept"),
    ]
    assert set(data["items"][0]) == {
        "id",
        "status",
        "workflow",
        "state",
        "ended_at",
        "reason",
        "saved",
        "refs",
    }


def test_a_run_made_in_the_old_layout_is_kept_until_recovered(user_repo: UserRepo) -> None:
    """Before worktrees moved out of `.git/`, a run kept it at `.git/fixloop/worktrees/R`; prune
    still sees it there as a leftover, and lets the run go once recovery removed it."""
    run = Run.start(user_repo.path, "demo")
    worktree = user_repo.path / ".git" / "fixloop" / "worktrees" / run.id
    user_repo.git("worktree", "add", "--quiet", "-b", f"fixloop/run/{run.id}", str(worktree))
    run.close()
    info = read_run(_runs(user_repo.path) / run.id)
    assert info["state"] == "crashed" and not is_live(_runs(user_repo.path) / run.id)

    report = prune_runs(user_repo.path, keep=0)
    assert report.removed == [] and "not yet recovered" in _kept(report)[run.id]

    assert main(["recover", "--repo", str(user_repo.path)]) == 0
    assert not worktree.exists()
    assert [d.run_id for d in prune_runs(user_repo.path, keep=0).removed] == [run.id]
