"""Fix-issue in the docker sandbox: every test command runs in a container of the user's image,
the clean checkout's too; an image that does not exist is bad input before anything starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.fix_issue import (
    UNITTEST,
    fixing_script,
    make_issue_repo,
    recorder,
    write_issue,
)
from tests.helpers.sandbox_image import docker_client, docker_image

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.pack import Pack
from fixloop.sandboxes import leftover_containers
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.kernel.workflow import Context

__all__ = ["docker_client", "docker_image"]

pytestmark = [pytest.mark.needs("docker"), pytest.mark.slow]


def test_the_tests_run_in_containers_of_the_image(
    tmp_path: Path, pack: Pack, docker_image: str
) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    opener = recorder()
    options = FixIssueOptions(
        issue=write_issue(tmp_path),
        repo=repo,
        tests=[UNITTEST],
        sandbox="docker",
        image=docker_image,
        open_sandbox=opener,
    )
    result = run_fix_issue(options, Context(pack, ScriptedBackend(fixing_script())))
    assert result.status is IssueStatus.RESOLVED, result.reason
    assert result.sandbox.startswith("sandbox: docker")
    assert [s.choice.kind for s in opener.opened] == ["docker", "docker"]
    assert [len(s.commands) for s in opener.opened] == [3, 2]  # acceptance: base, then patch
    run_ids = {result.run_id, result.run_id + "-verify"}
    assert [c for c in leftover_containers() if c.run_id in run_ids] == []


def test_an_image_that_does_not_exist_is_one_line_exit_two(
    tmp_path: Path, docker_client: Any
) -> None:
    del docker_client  # a daemon answers: the image is what is missing
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(fixing_script()))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fixloop",
            "fix-issue",
            str(issue),
            "--repo",
            str(repo),
            "--test",
            "python3 -m unittest",
            "--sandbox",
            "docker",
            "--image",
            "fixloop-no-such:1",
            "--script",
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("--image:1:1: sandbox: ") and "fixloop-no-such:1" in line
    assert not (repo / ".git" / "fixloop").exists()
