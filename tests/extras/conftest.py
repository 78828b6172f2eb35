"""What the extras' tests share: one local Ray cluster per test process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """One local cluster for the whole test process (two CPUs, no dashboard, nothing on the
    network): a pool finds it running and leaves it so. Ray cannot start a second local
    cluster in a process that shut one down (the second's start fails on its auth token), so
    every test that needs one shares this one. Skipped where Ray is not installed
    (`fixloop[ray]`, in the dev extra)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
