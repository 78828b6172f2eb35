"""Fixtures of the batch tests: the shipped pack, a buggy repository, a jobs file writer; the
scripted replies that fix jobs, and a batch run that records its item events."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import ISSUE, fixing_script, make_issue_repo
from tests.helpers.gitrepo import git

from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.batch.jobs import load_jobs
from fixloop.extras.batch.run import BatchOptions, BatchResult, run_batch

UNITTEST = "python3 -m unittest"
WriteJobs = Callable[..., Path]


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_issue_repo(tmp_path / "shop")


@pytest.fixture
def base(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def job(job_id: str, base: str, **more: Any) -> dict[str, Any]:
    """A job on the `shop` repository beside the jobs file, the unittest suite its tests."""
    return {
        "id": job_id,
        "repository": "shop",
        "commit": base,
        "issue": ISSUE,
        "tests": [UNITTEST],
        **more,
    }


@pytest.fixture
def write_jobs(tmp_path: Path) -> WriteJobs:
    def write(*lines: dict[str, Any] | str, name: str = "jobs.jsonl") -> Path:
        path = tmp_path / name
        text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
        return path

    return write


def batch_script(*ids: str, cost_usd: float = 0.0) -> dict[str, Any]:
    """The scripted model's replies that fix each job named, each call costing `cost_usd`."""
    script: dict[str, Any] = {}
    for job_id in ids:
        for key, reply in fixing_script(job_id).items():
            script[key] = {**reply, "cost_usd": cost_usd}
    return script


class Items:
    """The batch's item events, in the order the stream had them."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, object, object]] = []
        self.lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if event.kind is EventKind.ITEM and event.workflow == "batch":
            with self.lock:
                self.seen.append(
                    (event.item, event.status, event.data.get("index"), event.data.get("total"))
                )


def run_jobs(
    pack: Pack, jobs: Path, out: Path, backend: Any, **more: Any
) -> tuple[BatchResult, Items]:
    """The jobs file's batch run in the local sandbox, and the item events it said."""
    items = Items()
    options = BatchOptions(
        jobs=tuple(load_jobs(jobs, out=out)),
        out=out,
        sandbox="local",
        events=EventStream(items),
        **more,
    )
    return run_batch(options, pack, backend), items
