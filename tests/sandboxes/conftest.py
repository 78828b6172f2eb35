"""Sandboxes for the tests: a worktree holding `probe.py`, and each kind opened for real.

`sandbox_of(kind)` opens local, bwrap or docker on the worktree. Tests that open bwrap or docker
carry `needs("bwrap")` / `needs("docker")` (`support.kinds` adds them to parameters): skipped
without the tool here, failed under CI=true.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.sandbox_image import docker_client, docker_image
from tests.sandboxes.support import PROBE, OpenSandbox

from fixloop.sandboxes import Sandbox, open_sandbox

__all__ = ["docker_client", "docker_image"]


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    folder = tmp_path / "worktree"
    folder.mkdir()
    shutil.copy(PROBE, folder / "probe.py")
    return folder.resolve()


@pytest.fixture
def sandbox_of(request: pytest.FixtureRequest, worktree: Path) -> Iterator[OpenSandbox]:
    opened: list[Sandbox] = []

    def open_kind(kind: str, **options: Any) -> Sandbox:
        if kind == "docker":
            options.setdefault("image", request.getfixturevalue("docker_image"))
            options.setdefault("run_id", f"test-{os.getpid()}-{time.monotonic_ns()}")
        options.setdefault("worktree", worktree)
        sandbox = open_sandbox(kind, **options)
        opened.append(sandbox)
        return sandbox

    yield open_kind
    for sandbox in opened:
        sandbox.close()
