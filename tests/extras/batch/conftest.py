"""Fixtures of the batch tests: the shipped pack, a buggy repository, a jobs file writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import ISSUE, make_issue_repo
from tests.helpers.gitrepo import git

from fixloop.documents.pack import Pack, default_pack_root, load_pack

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
