"""What `--resume` counts as a finished job (`resume.py`), on the folder a real batch wrote: the
run's verdict and the job's row, agreeing, for the job as its line stands now; anything else
runs again, its folder removed (never what a link in it points to)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.extras.batch.conftest import WriteJobs, batch_script, job, run_jobs

from fixloop.agents.budget import RunBudget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.extras.batch import resume
from fixloop.extras.batch.jobs import Job, load_jobs


def _edit(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


@pytest.fixture
def finished(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> tuple[Path, Path, Job]:
    """A batch of one job, run to its verdict: the jobs file, OUT, the job."""
    jobs = write_jobs(job("avg", base))
    out = tmp_path / "out"
    result, _ = run_jobs(pack, jobs, out, ScriptedBackend(batch_script("avg")), jobs_file=jobs)
    assert [o.status for o in result.outcomes] == ["resolved"]
    return jobs, out, _only_job(jobs, out)


def _only_job(jobs: Path, out: Path) -> Job:
    [only] = load_jobs(jobs, out=out)
    return only


def test_a_finished_job_is_recorded_with_its_row(finished: tuple[Path, Path, Job]) -> None:
    jobs, out, avg = finished
    then = resume.earlier(out, jobs)
    assert then == {"avg": resume.digest(avg)}
    row = resume.recorded(out, avg, then)
    assert row is not None and row["status"] == "resolved" and row["ended_at"]
    moved = replace(avg, line=7, meta={"ticket": "T-1"})  # the same job, its line moved
    assert resume.recorded(out, moved, then) == row


@pytest.mark.parametrize(
    "case",
    [
        "line changed",
        "no verdict",
        "cut short by the batch's budget",
        "row never finished",
        "row disagrees",
        "verdict of another job",
        "verdict not a run's",
        "verdict unreadable",
    ],
)
def test_anything_short_of_a_finished_run_runs_again(
    finished: tuple[Path, Path, Job], case: str
) -> None:
    jobs, out, avg = finished
    then = resume.earlier(out, jobs)
    verdict, row = out / "avg" / "result.json", out / "avg" / "evidence.json"
    if case == "line changed":
        avg = replace(avg, tests=(("python3", "-m", "pytest"),))
    elif case == "no verdict":
        verdict.unlink()
    elif case == "cut short by the batch's budget":
        _edit(verdict, stop_reason="run_budget", status="unresolved")
        _edit(row, status="unresolved")
    elif case == "row never finished":
        _edit(row, ended_at=None)
    elif case == "row disagrees":
        _edit(row, status="error")
    elif case == "verdict of another job":
        _edit(verdict, issue_id="other")
    elif case == "verdict not a run's":
        _edit(verdict, status="error")
        _edit(row, status="error")
    else:
        verdict.write_text("{not json")
    assert resume.recorded(out, avg, then) is None


def test_only_a_batch_of_the_same_jobs_file_is_resumed(
    finished: tuple[Path, Path, Job], tmp_path: Path
) -> None:
    jobs, out, _ = finished
    assert resume.earlier(tmp_path / "new", jobs) == {}
    other = tmp_path / "other.jsonl"
    other.write_text(jobs.read_text())
    with pytest.raises(FixloopError, match=r"a batch of .*jobs\.jsonl, not of .*other\.jsonl"):
        resume.earlier(out, other)
    (out / resume.MARKER).write_text('{"jobs": ["avg"]}')
    with pytest.raises(FixloopError, match="not a batch's record"):
        resume.earlier(out, jobs)
    (out / resume.MARKER).unlink()
    with pytest.raises(FixloopError, match="holds no batch to resume"):
        resume.earlier(out, jobs)


def test_clearing_a_job_removes_a_link_not_what_it_points_to(
    finished: tuple[Path, Path, Job], tmp_path: Path
) -> None:
    _, out, avg = finished
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "work.txt").write_text("the user's\n")
    resume.clear(out, avg)
    assert not (out / "avg").exists()
    (out / "avg").symlink_to(mine, target_is_directory=True)
    resume.clear(out, avg)
    assert not (out / "avg").is_symlink() and (mine / "work.txt").read_text() == "the user's\n"


def test_a_resume_runs_the_jobs_the_budget_left_and_keeps_the_rest(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(job("first", base), job("second", base))
    out = tmp_path / "out"
    script = batch_script("first", "second", cost_usd=0.05)
    result, _ = run_jobs(
        pack, jobs, out, ScriptedBackend(script), jobs_file=jobs, budget=RunBudget(0.05)
    )
    assert [o.status for o in result.outcomes] == ["resolved", "not-run"]
    # Only the second job's reply: the first, run again, would find none and not resolve.
    again, items = run_jobs(
        pack, jobs, out, ScriptedBackend(batch_script("second")), jobs_file=jobs, resume=True
    )
    assert [o.status for o in again.outcomes] == ["resolved", "resolved"]
    assert again.outcomes[0].ended_at == result.outcomes[0].ended_at  # the row kept
    assert [(i, s) for i, s, _, _ in items.seen if s != "running"] == [
        ("first", "resolved"),
        ("second", "resolved"),
    ]


def test_a_folder_holding_only_a_let_go_lock_is_a_new_batch(tmp_path: Path) -> None:
    """A batch refused before it wrote anything (its sandbox was missing, say) leaves at most
    the lock file: the folder is still a new batch's, not one to resume."""
    out = tmp_path / "out"
    refused = pytest.raises(FixloopError, match="another batch is working in this folder")
    with resume.holding(out), refused, resume.holding(out):
        pass
    assert [entry.name for entry in out.iterdir()] == [resume.LOCK]
    assert resume.empty(out) and resume.earlier(out, None) == {}
    (out / "stray").write_text("x")
    assert not resume.empty(out)
