"""`--ray local`: the same tasks on a Ray cluster this test starts (no network), gathered into
the report the serial run gives, at once, with the run's budget held by the driver."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.extras.efficacy.conftest import CORPUS
from tests.extras.efficacy.test_executor import TASKS, _bench, _costly, _overlap, _same
from tests.helpers import cli

from fixloop.agents.budget import RunBudget
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.extras.efficacy.ray_pool import RayPool


@pytest.mark.slow
def test_a_local_ray_cluster_gives_the_serial_report_with_tasks_at_once(
    pack: Pack, tmp_path: Path, ray_cluster: None
) -> None:
    serial, _ = _bench(pack, 1)
    on_ray, progress = _bench(pack, 2, pool=RayPool("local", 2))
    assert [o.id for o in on_ray.outcomes] == list(TASKS)
    assert [_same(o) for o in on_ray.outcomes] == [_same(o) for o in serial.outcomes]
    assert on_ray.outcomes[0].status == "resolved" and on_ray.exit_code == 0
    assert _overlap(on_ray.outcomes[0], on_ray.outcomes[1])
    # Each task's end is said here, in the driver, by its place in the run.
    ends = {(item, index, total) for item, status, index, total in progress.lines}
    assert ends == {(task, n, len(TASKS)) for n, task in enumerate(TASKS, 1)}


@pytest.mark.slow
def test_the_driver_holds_the_run_budget(pack: Pack, tmp_path: Path, ray_cluster: None) -> None:
    budget = RunBudget(max_cost_usd=1.0)
    result, _ = _bench(pack, 2, script=_costly(tmp_path), budget=budget, pool=RayPool("local", 2))
    # The first two went out at once; each one's $1 came back to the driver's budget before a
    # third could be submitted, so none was.
    assert [o.status for o in result.outcomes] == ["resolved", "resolved", "not-run", "not-run"]
    assert budget.spent.cost_usd == 2.0  # what the two tasks cost, charged here


def test_without_ray_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    with pytest.raises(FixloopError) as raised:
        RayPool("local", 2)
    assert raised.value.exit_code == 2
    assert str(raised.value) == "--ray:1:1: usage: needs Ray: pip install 'fixloop[ray]'"


@pytest.mark.slow
def test_the_command_line_runs_on_a_ray_cluster_it_starts(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    done = cli.fixloop(
        "bench",
        "efficacy",
        str(CORPUS),
        "--task",
        "regex",
        "--task",
        "api-misuse",
        "--ray",
        "local",
        "--workers",
        "2",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [(item["id"], item["status"]) for item in out["items"]] == [
        ("regex", "resolved"),
        ("api-misuse", "resolved"),
    ]
    assert "efficacy [2/2] api-misuse: resolved" in done.stderr
