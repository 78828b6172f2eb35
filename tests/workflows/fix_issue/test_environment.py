"""build_environment under --sandbox docker, on the real daemon: the fixer's Dockerfile is built
from a local image only (nothing pulled, no network, an empty context), its log, exit code and
image id come back, the run's later tests run in that image (acceptance keeps the user's), and
the images are gone when the run is over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import (
    FIXED_OUTPUT,
    UNITTEST,
    Listening,
    fixing_tools,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.sandbox_image import docker_client, docker_image

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.sandboxes.build import base_problem, bounded_log, build_image, remove_image
from fixloop.workflows.fix_issue import FixIssueOptions, run_fix_issue
from fixloop.workflows.kernel.workflow import Context

__all__ = ["docker_client", "docker_image"]

pytestmark = [pytest.mark.needs("docker"), pytest.mark.slow]

KEY = "issue-fixer/ISSUE/attempt-1"
# Passes only in an image that has the marker the fixer's Dockerfile writes.
MARKER = ["python3", "-c", "import os, sys; sys.exit(0 if os.path.exists('/opt/env/ok') else 1)"]


def test_only_local_bases_are_built(docker_client: Any, docker_image: str) -> None:
    local = f"FROM {docker_image} AS base\nRUN true\nFROM base\nCOPY --from=base /tmp /tmp\n"
    assert base_problem(docker_client, local) is None
    refused = {
        "FROM python:3.12-slim\n": "FROM python:3.12-slim: no such image on this Docker daemon",
        f"FROM {docker_image}\nCOPY --from=alpine:3 /bin/sh /x\n": "FROM alpine:3: no such",
        "ARG BASE\nFROM $BASE\n": "$BASE: an image named by a variable cannot be checked",
        f"FROM {docker_image}\nADD https://example.com/x.tgz /x\n": "ADD of a URL",
        "RUN true\n": "the Dockerfile has no FROM",
    }
    for dockerfile, said in refused.items():
        problem = base_problem(docker_client, dockerfile)
        assert problem is not None and problem.startswith(said), (dockerfile, problem)
        assert "\n" not in problem


def test_a_long_log_keeps_its_head_its_tail_and_its_errors() -> None:
    log = "Step 1/9\n" + "downloading 1%\n" * 2000 + "ERROR: no matching distribution\n"
    log += "downloading 2%\n" * 2000 + "The command returned a non-zero code: 1\n"
    shown, truncated = bounded_log(log)
    assert truncated and len(shown) < 9000
    assert shown.startswith("Step 1/9") and shown.endswith("non-zero code: 1\n")
    assert "ERROR: no matching distribution" in shown


def test_the_fixer_s_image_runs_its_tests_and_is_removed_after(
    tmp_path: Path, pack: Pack, docker_client: Any, docker_image: str
) -> None:
    dockerfile = f"FROM {docker_image}\nRUN mkdir -p /opt/env && touch /opt/env/ok\n"
    tools = [
        {"name": "run_tests", "input": {"target": "2"}},  # the user's image: no marker
        {"name": "build_environment", "input": {"dockerfile": "FROM python:3.12-slim\n"}},
        {"name": "build_environment", "input": {"dockerfile": f"FROM {docker_image}\nRUN exit 3"}},
        {"name": "run_tests", "input": {"target": "2"}},  # a failed build changed nothing
        {"name": "build_environment", "input": {"dockerfile": dockerfile}},
        {"name": "run_tests", "input": {"target": "2"}},  # the fixer's image
        *fixing_tools(),
    ]
    backend = Listening(ScriptedBackend({KEY: {"tools": tools, "output": FIXED_OUTPUT}}))
    opener = recorder()
    options = FixIssueOptions(
        issue=write_issue(tmp_path),
        repo=make_issue_repo(tmp_path / "repo"),
        tests=[UNITTEST, MARKER],
        sandbox="docker",
        image=docker_image,
        open_sandbox=opener,
    )
    result = run_fix_issue(options, Context(pack, backend))

    not_local, failed, built = backend.of("build_environment")
    assert not_local["error"] == "not_local" and "python:3.12-slim" in not_local["message"]
    assert failed["error"] == "build_failed" and failed["exit_code"] == 1
    assert "returned a non-zero code: 3" in failed["log"]
    assert built["ok"] and built["exit_code"] == 0 and built["image_id"].startswith("sha256:")
    assert built["bases"] == [docker_image] and "Successfully built" in built["log"]
    statuses = [answer["results"][0]["status"] for answer in backend.of("run_tests")]
    assert statuses[:3] == ["failed", "failed", "passed"]  # the marker: only in its image
    assert result.attempts[0].succeeded  # checked in the fixer's image
    assert result.environment == built["image"]

    images = [s.choice.image for s in opener.opened]
    assert images == [docker_image, built["image"], docker_image]  # acceptance: the user's
    kept = Path(result.result_path).parent / "environment"
    assert sorted(p.name for p in kept.iterdir()) == [
        "Dockerfile-1",
        "Dockerfile-2",
        "build-1.log",
        "build-2.log",
    ]
    assert not docker_client.images.list(name="fixloop-env")  # removed with the run's sandbox


def test_the_build_sees_no_repository_and_no_network(docker_client: Any, docker_image: str) -> None:
    """The context is the Dockerfile alone; the only network device is loopback."""
    dockerfile = (
        f"FROM {docker_image}\nCOPY . /ctx\n"
        "RUN echo context: $(ls -A /ctx) && echo devices: $(ls /sys/class/net)\n"
    )
    built = build_image(dockerfile, run_id="fixloop-test-build", tag="fixloop-env:probe-1")
    try:
        assert built.exit_code == 0, built.log
        assert "context: Dockerfile\n" in built.log and "devices: lo\n" in built.log
    finally:
        remove_image("fixloop-env:probe-1")
    assert not docker_client.images.list(name="fixloop-env")
