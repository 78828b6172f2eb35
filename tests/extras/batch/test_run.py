"""A batch through the pool: each job an ordinary fix-issue run on its own clone, a job's
failure only its row, the run budget the batch's, two workers really at once."""

from __future__ import annotations

import json
import pickle
import threading
from pathlib import Path
from typing import Any

import yaml
from tests.extras.batch.conftest import Items, WriteJobs, batch_script, job, run_jobs
from tests.helpers.fix_issue import STATS
from tests.helpers.gitrepo import git

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.budget import RunBudget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.extras.batch.jobs import load_jobs
from fixloop.extras.batch.run import BatchJob, BatchOptions
from fixloop.runs.show import run_totals
from fixloop.sandboxes import Sandbox, open_sandbox


def test_every_job_resolved_on_its_own_clone_and_kept(
    pack: Pack, write_jobs: WriteJobs, repo: Path, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(job("avg", base), job("avg-again", "main"))
    backend = ScriptedBackend(batch_script("avg", "avg-again"))
    result, items = run_jobs(pack, jobs, tmp_path / "out", backend)
    assert [(o.id, o.status) for o in result.outcomes] == [
        ("avg", "resolved"),
        ("avg-again", "resolved"),
    ], [o.reason for o in result.outcomes]
    assert result.exit_code == 0 and backend.unplayed() == []
    assert (repo / "calc/stats.py").read_text() == STATS, "the user's repository is only read"
    assert git(repo, "status", "--porcelain") == "" and git(repo, "branch", "--list") == "* main\n"
    for outcome in result.outcomes:
        folder = tmp_path / "out" / outcome.id
        assert outcome.base == base and outcome.accepted is True
        # Its run is the clone's: `fixloop runs show` reads it there.
        assert run_totals(folder / "repo" / ".git" / "fixloop", outcome.run_id) is not None
        git(folder / "repo", "apply", "--check", str(folder / "fix.patch"))
        kept = json.loads((folder / "evidence.json").read_text())
        assert (kept["status"], kept["line"]) == ("resolved", outcome.line)
        assert json.loads((folder / "result.json").read_text())["status"] == "resolved"
    assert items.seen == [
        ("avg", "running", 1, 2),
        ("avg", "resolved", 1, 2),
        ("avg-again", "running", 2, 2),
        ("avg-again", "resolved", 2, 2),
    ]


class Breaks:
    """The real local sandbox, except for `job`'s clone: opening it raises what no sandbox
    should, a failure of fixloop itself in the middle of one job."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id

    def __call__(self, *args: Any, **kwargs: Any) -> Sandbox:
        reports = [str(path) for path in kwargs.get("writable", ())]
        if any(f"/{self.job_id}/repo/" in path for path in reports):  # the run's own folder
            raise RuntimeError(f"the sandbox of {self.job_id} broke")
        return open_sandbox(*args, **kwargs)


def test_a_failing_job_is_its_own_row_and_the_others_resolve(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(
        job("gone", "0" * 40),  # a commit the repository does not have
        job("gives-up", base),
        job("avg", base),
    )
    script = batch_script("avg")
    script["issue-fixer/gives-up/attempt-1"] = {
        "output": {"id": "gives-up", "status": "failed", "notes": "no idea"}
    }
    result, _ = run_jobs(pack, jobs, tmp_path / "out", ScriptedBackend(script), max_attempts=1)
    rows = {o.id: o for o in result.outcomes}
    assert [o.id for o in result.outcomes] == ["gone", "gives-up", "avg"]
    assert rows["gone"].status == "error" and "has no commit" in rows["gone"].reason
    assert rows["gives-up"].status == "unresolved" and "no idea" in rows["gives-up"].reason
    assert rows["avg"].status == "resolved"
    assert result.exit_code == 1
    kept = json.loads((tmp_path / "out" / "gone" / "evidence.json").read_text())
    assert kept["status"] == "error"


def test_a_bug_in_one_job_stops_no_other(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(job("broken", base), job("avg", base))
    backend = ScriptedBackend(batch_script("broken", "avg"))
    result, _ = run_jobs(pack, jobs, tmp_path / "out", backend, open_sandbox=Breaks("broken"))
    broken, avg = result.outcomes
    assert broken.status == "error" and "the sandbox of broken broke" in broken.reason
    assert avg.status == "resolved"


def test_once_the_budget_is_spent_the_jobs_left_are_not_run(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(job("first", base), job("second", base), job("third", base))
    backend = ScriptedBackend(batch_script("first", "second", "third", cost_usd=0.05))
    budget = RunBudget(max_cost_usd=0.05)
    result, items = run_jobs(pack, jobs, tmp_path / "out", backend, budget=budget)
    assert [o.status for o in result.outcomes] == ["resolved", "not-run", "not-run"]
    assert result.outcomes[1].reason == "run cost budget spent: $0.0500 of $0.0500"
    assert not (tmp_path / "out" / "second" / "repo").exists(), "a job not run clones nothing"
    assert [c.key for c in backend.calls] == ["issue-fixer/first/attempt-1"]
    assert ("third", "not-run", 3, 3) in items.seen and result.exit_code == 1


class Meeting:
    """The scripted model, except that each job's first call waits until the other job has
    made its own: a batch that ran them one after the other breaks the barrier (no reply)."""

    def __init__(self, inner: ScriptedBackend) -> None:
        self.inner, self.name = inner, inner.name
        self.barrier = threading.Barrier(2, timeout=120)

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        if request.key.endswith("/attempt-1"):
            self.barrier.wait()
        return self.inner.dispatch(request)


def test_two_workers_run_two_jobs_at_once(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    jobs = write_jobs(job("left", base), job("right", base))
    backend = Meeting(ScriptedBackend(batch_script("left", "right")))
    result, items = run_jobs(pack, jobs, tmp_path / "out", backend, workers=2)
    assert [(o.id, o.status) for o in result.outcomes] == [
        ("left", "resolved"),
        ("right", "resolved"),
    ], [o.reason for o in result.outcomes]
    # By the batch's own events: both jobs started before either ended.
    statuses = [status for _, status, _, _ in items.seen]
    assert statuses[:2] == ["running", "running"] and sorted(statuses[2:]) == ["resolved"] * 2
    assert len({o.run_id for o in result.outcomes}) == 2


def test_a_job_sent_to_another_process_runs_there_and_is_settled_here(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path
) -> None:
    # What a pool running jobs elsewhere (RayPool) does: the job pickled, run from its copy
    # (which loads its own backend from the options), its row settled on the batch's side.
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(batch_script("avg", cost_usd=0.02)), encoding="utf-8")
    out = tmp_path / "out"
    items, budget = Items(), RunBudget(max_cost_usd=1.0)
    options = BatchOptions(
        jobs=tuple(load_jobs(write_jobs(job("avg", base)), out=out)),
        out=out,
        script=script,
        sandbox="local",
        events=EventStream(items),
        budget=budget,
    )
    here = BatchJob(options, pack)
    there: BatchJob = pickle.loads(pickle.dumps(here))
    assert there.options.budget is None and there.backend is None
    placed = (1, options.jobs[0])
    outcome = there(placed)
    assert outcome.status == "resolved", outcome.reason
    assert items.seen == [], "the copy's events are its own process's"
    here.settle(placed, outcome)
    assert items.seen == [("avg", "resolved", 1, 1)]
    assert budget.exhausted() is None and round(budget.spent.cost_usd, 4) == 0.02
