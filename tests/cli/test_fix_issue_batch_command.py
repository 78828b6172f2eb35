"""`fixloop fix-issue batch JOBS.jsonl` through the real CLI: a progress line per job, the
summary, the envelope, exit 0 only when every job resolved, a bad line exit 2 with nothing run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import cli
from tests.helpers.fix_issue import ISSUE, STATS, fixing_script, make_issue_repo
from tests.helpers.gitrepo import git
from tests.helpers.sandbox_image import docker_client, docker_image

__all__ = ["docker_client", "docker_image"]  # fixtures
UNITTEST = "python3 -m unittest"


def fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    return cli.fixloop(*args, cwd=cwd, env=child)


def _setup(tmp_path: Path, *jobs: dict[str, Any], cost_usd: float = 0.0) -> tuple[Path, str]:
    repo = make_issue_repo(tmp_path / "shop")
    base = git(repo, "rev-parse", "HEAD").strip()
    lines = [
        json.dumps(
            {"repository": "shop", "commit": base, "issue": ISSUE, "tests": [UNITTEST], **job}
        )
        for job in jobs
    ]
    (tmp_path / "jobs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    script: dict[str, Any] = {}
    for job in jobs:
        for key, reply in fixing_script(str(job["id"])).items():
            script[key] = {**reply, "cost_usd": cost_usd}
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")
    return repo, base


def test_a_good_batch_prints_a_line_per_job_and_the_summary(tmp_path: Path) -> None:
    repo, _ = _setup(tmp_path, {"id": "avg"}, {"id": "avg-main", "commit": "main"})
    done = fixloop(
        "fix-issue",
        "batch",
        "jobs.jsonl",
        "--script",
        "script.yaml",
        "--sandbox",
        "local",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "batch [1/2] avg: resolved" in done.stderr
    assert "batch [2/2] avg-main: resolved" in done.stderr
    assert "## Batch: jobs.jsonl" in done.stdout and "**2/2 resolved**" in done.stdout
    out = tmp_path / "jobs.batch"  # the default folder, beside the jobs file
    assert (out / "summary.md").read_text() == done.stdout
    assert (repo / "calc/stats.py").read_text() == STATS
    shown = fixloop("runs", "show", "latest", "--repo", str(out / "avg" / "repo"), cwd=tmp_path)
    assert shown.returncode == 0 and "fix-issue" in shown.stdout, shown.stderr


def test_the_envelope_and_exit_one_when_a_job_is_not_resolved(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"}, {"id": "gone", "commit": "no-such-branch"})
    done = fixloop(
        "fix-issue",
        "batch",
        "jobs.jsonl",
        "--script",
        "script.yaml",
        "--sandbox",
        "local",
        "--out",
        "out",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    envelope = json.loads(done.stdout)
    assert (envelope["command"], envelope["ok"]) == ("fix-issue batch", False)
    assert envelope["counts"] == {"error": 1, "resolved": 1}
    gone = envelope["result"]["jobs"][1]
    assert gone["id"] == "gone" and "has no commit no-such-branch" in gone["reason"]
    assert (tmp_path / "out" / "avg" / "fix.patch").is_file()
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["totals"]["jobs"] == 2


def test_a_bad_line_is_one_located_line_exit_2_and_nothing_runs(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"}, {"id": "bad", "tests": "make test"})
    done = fixloop("fix-issue", "batch", "jobs.jsonl", "--script", "script.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = (tmp_path / "jobs.jsonl").read_text().splitlines()[1]
    column = line.index('"tests"') + 1
    assert done.stderr.strip().splitlines() == [
        f"jobs.jsonl:2:{column}: tests: a list of test commands, or an object of commands, "
        "fail_to_pass, pass_to_pass"
    ]
    assert done.stdout == "" and not (tmp_path / "jobs.batch").exists()


def test_the_budget_covers_the_batch(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "first"}, {"id": "second"}, cost_usd=0.05)
    done = fixloop(
        "fix-issue",
        "batch",
        "jobs.jsonl",
        "--script",
        "script.yaml",
        "--sandbox",
        "local",
        "--max-cost-usd",
        "0.05",
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert "batch [2/2] second: not-run: run cost budget spent" in done.stderr
    assert not (tmp_path / "jobs.batch" / "second" / "repo").exists()


def test_an_issue_file_named_batch_is_still_an_issue(tmp_path: Path) -> None:
    # Only `batch` first is the verb; `./batch` is fix-issue's own ISSUE.
    repo = make_issue_repo(tmp_path / "shop")
    done = fixloop("fix-issue", "./batch", "--repo", str(repo), cwd=tmp_path)
    assert done.returncode == 2 and "batch" in done.stderr and "JOBS" not in done.stderr


def _refused(done: subprocess.CompletedProcess[str], tmp_path: Path, line: str) -> None:
    """One line, exit 2, and nothing cloned: the batch folder was never made."""
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [line]
    assert done.stdout == "" and not (tmp_path / "jobs.batch").exists()


def test_a_sandbox_that_cannot_be_had_is_one_line_exit_2_before_any_clone(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"}, {"id": "avg-main", "commit": "main"})
    docker = fixloop(
        "fix-issue", "batch", "jobs.jsonl", "--script", "script.yaml", "--sandbox", "docker",
        cwd=tmp_path,
    )  # fmt: skip
    _refused(
        docker,
        tmp_path,
        "--sandbox:1:1: sandbox: --sandbox docker needs --image IMAGE (the image commands run in)",
    )
    local = fixloop(
        "fix-issue", "batch", "jobs.jsonl", "--script", "script.yaml", "--sandbox", "local",
        "--image", "python:3.12", cwd=tmp_path,
    )  # fmt: skip
    _refused(
        local,
        tmp_path,
        "--sandbox:1:1: sandbox: --image applies to the docker sandbox, not to --sandbox local",
    )


def test_bwrap_asked_for_where_it_is_missing_is_one_line_exit_2(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"})
    tools = tmp_path / "bin"  # git, and no bwrap
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"} | {"PATH": str(tools)}
    done = cli.fixloop(
        "fix-issue", "batch", "jobs.jsonl", "--script", "script.yaml", "--sandbox", "bwrap",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    _refused(
        done,
        tmp_path,
        "--sandbox:1:1: sandbox: --sandbox bwrap: bubblewrap is not installed "
        "(no `bwrap` on PATH; apt-get install bubblewrap)",
    )


@pytest.mark.needs("docker")
def test_a_jobs_own_image_the_daemon_lacks_is_shown_at_its_line(
    tmp_path: Path, docker_image: str
) -> None:
    missing = f"fixloop-no-such-image:{uuid.uuid4().hex[:12]}"
    _setup(tmp_path, {"id": "avg"}, {"id": "gone", "image": missing})
    done = fixloop(
        "fix-issue", "batch", "jobs.jsonl", "--script", "script.yaml", "--sandbox", "docker",
        "--image", docker_image, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"jobs.jsonl:2:1: image: --image {missing}: no such image"), line
    assert done.stdout == "" and not (tmp_path / "jobs.batch").exists()
