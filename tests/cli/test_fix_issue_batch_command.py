"""`fixloop fix-issue batch JOBS.jsonl` through the real CLI: a progress line per job, the
summary, the envelope, exit 0 only when every job resolved, a bad line exit 2 with nothing run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
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


def _batch(tmp_path: Path, *more: str, sandbox: str = "local") -> subprocess.CompletedProcess[str]:
    """`fixloop fix-issue batch jobs.jsonl` with the scripted model of script.yaml."""
    options = ("--script", "script.yaml", "--sandbox", sandbox, *more)
    return fixloop("fix-issue", "batch", "jobs.jsonl", *options, cwd=tmp_path)


def test_a_good_batch_prints_a_line_per_job_and_the_summary(tmp_path: Path) -> None:
    repo, _ = _setup(tmp_path, {"id": "avg"}, {"id": "avg-main", "commit": "main"})
    done = _batch(tmp_path)
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
    done = _batch(tmp_path, "--out", "out", "--json")
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
    done = _batch(tmp_path, "--max-cost-usd", "0.05")
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
    docker = _batch(tmp_path, sandbox="docker")
    _refused(
        docker,
        tmp_path,
        "--sandbox:1:1: sandbox: --sandbox docker needs --image IMAGE (the image commands run in)",
    )
    local = _batch(tmp_path, "--image", "python:3.12")
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
    options = ("--script", "script.yaml", "--sandbox", "bwrap")
    done = cli.fixloop("fix-issue", "batch", "jobs.jsonl", *options, cwd=tmp_path, env=env)
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
    done = _batch(tmp_path, "--image", docker_image, sandbox="docker")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"jobs.jsonl:2:1: image: --image {missing}: no such image"), line
    assert done.stdout == "" and not (tmp_path / "jobs.batch").exists()


def _script(tmp_path: Path, script: dict[str, Any]) -> None:
    (tmp_path / "script.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")


def _runs(repo: Path) -> list[str]:
    """The fix-issue runs a job's clone holds, by folder name (not their verification runs)."""
    runs = (repo / ".git" / "fixloop" / "runs").iterdir()
    return sorted(p.name for p in runs if not p.name.endswith("-verify"))


def test_an_existing_out_is_refused_with_a_line_naming_resume(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"})
    assert _batch(tmp_path).returncode == 0
    again = _batch(tmp_path)
    assert again.returncode == 2, again.stderr
    assert again.stderr.strip().splitlines() == [
        "jobs.batch:1:1: out: exists and is not empty: name a new one, or --resume the batch "
        "it holds"
    ]
    assert again.stdout == ""


def test_resume_after_an_outage_runs_only_the_job_that_did_not_finish(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "first"}, {"id": "second"})
    outage = {"fail": "backend", "raw": "529 overloaded"}
    _script(tmp_path, {**fixing_script("first"), "issue-fixer/second/attempt-1": outage})
    done = _batch(tmp_path)
    assert done.returncode == 1, done.stderr
    assert "batch [2/2] second: error:" in done.stderr and "529 overloaded" in done.stderr
    out = tmp_path / "jobs.batch"
    first_runs = _runs(out / "first" / "repo")
    first_row = (out / "first" / "evidence.json").read_bytes()

    # The backend answers again. The first job has no reply now: run again, it would not resolve.
    _script(tmp_path, fixing_script("second"))
    resumed = _batch(tmp_path, "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert "batch [1/2] first: resolved: recorded by an earlier run of this batch" in (
        resumed.stderr
    )
    assert "batch [2/2] second: resolved" in resumed.stderr
    envelope = json.loads(resumed.stdout)
    assert envelope["counts"] == {"resolved": 2}
    assert [job["id"] for job in envelope["result"]["jobs"]] == ["first", "second"]
    assert "**2/2 resolved**" in (out / "summary.md").read_text()
    assert _runs(out / "first" / "repo") == first_runs  # not run again
    assert (out / "first" / "evidence.json").read_bytes() == first_row
    assert len(_runs(out / "second" / "repo")) == 1  # a fresh clone, one run: the new one


def test_resume_after_the_batch_was_killed_mid_job_runs_that_job_and_the_rest(
    tmp_path: Path,
) -> None:
    """The second job's agent holds the batch while the test kills it (SIGKILL, its whole
    process group): the second job has a clone and a run folder, no verdict; the third never
    started. The resume keeps the first job's row, and runs the second afresh and the third."""
    _setup(tmp_path, {"id": "first"}, {"id": "second"}, {"id": "third"})
    reached, release = tmp_path / "reached", tmp_path / "release"
    hold = f"touch {reached}; for i in $(seq 600); do [ -e {release} ] && exit 0; sleep 0.1; done"
    held = {**fixing_script("second")["issue-fixer/second/attempt-1"], "bash": [hold]}
    _script(tmp_path, {**fixing_script("first"), "issue-fixer/second/attempt-1": held})
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}
    argv = [sys.executable, "-m", "fixloop", "fix-issue", "batch", "jobs.jsonl"]
    batch = subprocess.Popen(
        [*argv, "--script", "script.yaml", "--sandbox", "local"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(1200):
            if reached.exists() or batch.poll() is not None:
                break
            time.sleep(0.1)
        assert reached.exists(), "the second job's agent never ran"
        # While it works there, a second batch in its folder is refused, touching nothing.
        refused = _batch(tmp_path, "--resume")
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.strip().endswith(
            "jobs.batch:1:1: out: another batch is working in this folder: wait for it to end,"
            " or name another"
        ), refused.stderr
        assert (tmp_path / "jobs.batch" / "first" / "result.json").is_file()
        os.killpg(batch.pid, signal.SIGKILL)
        batch.wait(timeout=60)
    finally:
        release.touch()  # the held command, in a process group of its own, ends too
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
            batch.wait(timeout=60)
    out = tmp_path / "jobs.batch"
    assert (out / "first" / "result.json").is_file()
    assert (out / "second" / "repo").is_dir() and not (out / "second" / "result.json").exists()
    assert not (out / "third").exists() and not (out / "summary.md").exists()
    first_runs, killed = _runs(out / "first" / "repo"), _runs(out / "second" / "repo")
    assert len(killed) == 1

    _script(tmp_path, {**fixing_script("second"), **fixing_script("third")})
    resumed = _batch(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "batch [1/3] first: resolved: recorded by an earlier run of this batch" in (
        resumed.stderr
    )
    assert "batch [2/3] second: resolved" in resumed.stderr
    assert "batch [3/3] third: resolved" in resumed.stderr
    assert "**3/3 resolved**" in resumed.stdout
    assert _runs(out / "first" / "repo") == first_runs
    [again] = _runs(out / "second" / "repo")  # the killed run's clone was made afresh
    assert [again] != killed


def test_resume_refuses_a_folder_of_another_batch_or_of_none(tmp_path: Path) -> None:
    _setup(tmp_path, {"id": "avg"})
    assert _batch(tmp_path, "--out", "out").returncode == 0
    shutil.copyfile(tmp_path / "jobs.jsonl", tmp_path / "other.jsonl")
    options = ("--script", "script.yaml", "--sandbox", "local", "--out", "out", "--resume")
    other = fixloop("fix-issue", "batch", "other.jsonl", *options, cwd=tmp_path)
    assert other.returncode == 2, other.stderr
    assert other.stderr.strip().splitlines() == [
        f"out/batch.json:1:1: out: a batch of {(tmp_path / 'jobs.jsonl').resolve()}, not of "
        f"{(tmp_path / 'other.jsonl').resolve()}: resume it with that file"
    ]
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine\n")
    none = _batch(tmp_path, "--out", "stranger", "--resume")
    assert none.returncode == 2, none.stderr
    assert none.stderr.strip().splitlines() == [
        "stranger:1:1: out: holds no batch to resume (no readable batch.json): name a new one"
    ]
    assert sorted(p.name for p in stranger.iterdir()) == ["notes.txt"]
