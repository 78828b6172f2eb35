"""`fix-issue batch --ray`: the jobs on a local Ray cluster this test starts (no network), each
job pickled without the batch's events and budget, its end said and its cost charged here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.extras.batch.conftest import Items, WriteJobs, batch_script, job

from fixloop.agents.budget import RunBudget
from fixloop.documents.pack import Pack
from fixloop.events import EventStream
from fixloop.extras.batch.jobs import load_jobs
from fixloop.extras.batch.run import BatchOptions, run_batch
from fixloop.extras.efficacy.ray_pool import RayPool


@pytest.mark.slow
def test_a_batch_on_a_local_ray_cluster(
    pack: Pack, write_jobs: WriteJobs, base: str, tmp_path: Path, ray_cluster: None
) -> None:
    jobs = write_jobs(job("left", base), job("right", base))
    script = tmp_path / "script.yaml"  # each Ray worker loads the backend again from it
    script.write_text(yaml.safe_dump(batch_script("left", "right", cost_usd=0.01)))
    items = Items()
    budget = RunBudget(max_cost_usd=10.0)
    out = tmp_path / "out"
    options = BatchOptions(
        jobs=tuple(load_jobs(jobs, out=out)),
        out=out,
        script=script,
        sandbox="local",
        budget=budget,
        events=EventStream(items),
        workers=2,
        pool=RayPool("local", 2),
    )
    result = run_batch(options, pack)  # on the cluster the fixture started, left running
    assert [(o.id, o.status) for o in result.outcomes] == [
        ("left", "resolved"),
        ("right", "resolved"),
    ], [o.reason for o in result.outcomes]
    # The workers' events stayed there; the driver said each end, by its place in the batch.
    assert sorted(items.seen) == [("left", "resolved", 1, 2), ("right", "resolved", 2, 2)]
    assert budget.spent.cost_usd == pytest.approx(0.02)  # settled here, job by job
    assert all((out / o.id / "fix.patch").is_file() for o in result.outcomes)
