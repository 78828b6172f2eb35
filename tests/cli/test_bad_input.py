"""Inputs that must be one clear line and exit 2 (never a traceback, never exit 70, never a hang).

Each case runs the real command line in a subprocess with a timeout, so a hang fails the test
instead of stalling the suite; every case checks that nothing in the repository changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import cli
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import REVIEW_REL, finding, review_text, write_review

from fixloop.agents.claude_preflight import find_cli

TIMEOUT_S = 60


def fixloop(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return cli.fixloop(*args, cwd=cwd, env=env, stdin=stdin, timeout=TIMEOUT_S)


def _script(tmp_path: Path, data: object) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data))
    return str(path)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one error line; progress lines (`-- …`, such as the count of findings read) aside."""
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    [line] = [line for line in done.stderr.strip().splitlines() if not line.startswith("-- ")]
    return line


def _untouched(user: UserRepo, tip: str) -> None:
    assert user.head() == tip
    assert user.worktrees() == [str(user.path)]
    assert user.branches() == ["main"]
    assert not (user.path / ".git" / "fixloop" / "runs").exists()


def test_a_review_that_does_not_exist_is_one_line_exit_2(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    tip = user_repo.head()
    done = fixloop(
        "review-fix", "nothere.md", "--script", _script(tmp_path, {}), cwd=user_repo.path
    )
    assert done.returncode == 2
    assert _one_line(done) == "nothere.md:1:1: review-path: no such file"
    _untouched(user_repo, tip)


def test_a_phase_number_finds_its_phase_directory(user_repo: UserRepo, tmp_path: Path) -> None:
    write_review(
        user_repo.path,
        review_text(finding("CR-01", "add subtracts", "src/app.py"), phase="01"),
        ".planning/phases/01-auth/01-REVIEW.md",
    )
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": {"fail": "crash"}})
    done = fixloop("review-fix", "01", "--script", script, "--dry-run", cwd=user_repo.path)
    assert done.returncode == 0, done.stderr
    assert ".planning/phases/01-auth/01-REVIEW.md" in done.stdout
    done = fixloop("review-fix", "7", "--script", script, cwd=user_repo.path)
    assert done.returncode == 2
    assert _one_line(done) == (
        "7:1:1: review-path: no such file, and no phase directory .planning/phases/07-*"
    )


def test_a_fifo_is_refused_not_read_forever(user_repo: UserRepo, tmp_path: Path) -> None:
    tip = user_repo.head()
    fifo = user_repo.path / ".planning" / "02-REVIEW.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    script = _script(tmp_path, {})
    done = fixloop("review-fix", REVIEW_REL, "--script", script, cwd=user_repo.path)
    assert done.returncode == 2
    assert _one_line(done) == ".planning/02-REVIEW.md:1:1: review-path: not a regular file"
    findings = tmp_path / "findings.json"
    os.mkfifo(findings)
    done = fixloop("fix-findings", str(findings), "--script", script, cwd=user_repo.path)
    assert done.returncode == 2
    assert _one_line(done).endswith("findings.json:1:1: findings: not a regular file")
    _untouched(user_repo, tip)


def test_deeply_nested_findings_json_is_one_line_exit_2(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text("[" * 100_000 + "]" * 100_000)
    done = fixloop(
        "fix-findings", str(findings), "--script", _script(tmp_path, {}), cwd=user_repo.path
    )
    assert done.returncode == 2
    assert _one_line(done).endswith("findings.json:1:1: findings: invalid JSON: nested too deeply")


def test_output_piped_into_a_closed_reader_is_no_internal_error(user_repo: UserRepo) -> None:
    # `fixloop … | head -1`: the reader goes away; the command must not report a crash.
    reader = subprocess.run(
        f'"{sys.executable}" -m fixloop agents list --json | head -c 1 >/dev/null; '
        f'"{sys.executable}" -m fixloop schema ReviewOutput | head -c 1',
        shell=True,
        cwd=user_repo.path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert "internal error" not in reader.stderr and "Traceback" not in reader.stderr, reader.stderr
    assert "BrokenPipe" not in reader.stderr


@pytest.mark.parametrize("state", ["detached", "unborn", "bare"])
def test_a_repository_review_fix_cannot_work_in_is_exit_2(
    user_repo: UserRepo, tmp_path: Path, state: str
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    repo = user_repo.path
    if state == "detached":
        user_repo.git("checkout", "--quiet", "--detach")
    elif state == "unborn":
        user_repo.git("checkout", "--quiet", "--orphan", "fresh")
    else:
        repo = tmp_path / "bare.git"
        git(tmp_path, "clone", "--quiet", "--bare", str(user_repo.path), str(repo))
        review = repo / REVIEW_REL
        review.parent.mkdir(parents=True)
        review.write_text(review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": {"fail": "crash"}})
    done = fixloop(
        "review-fix", str(repo / REVIEW_REL), "--repo", str(repo), "--script", script, cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    line = _one_line(done)
    why = {
        "detached": "HEAD is detached",
        "unborn": "no commits",
        "bare": "not inside a git working tree",
    }
    assert why[state] in line.partition(": repository: ")[2]
    assert not (repo / ".git" / "fixloop" / "runs").exists()
    assert not (repo / "fixloop" / "runs").exists()


def _no_claude_login(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home-without-login"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    return env | {"HOME": str(home)}


@pytest.mark.parametrize("backend", [["--backend", "claude"], []], ids=["explicit", "default"])
def test_no_login_or_key_stops_before_any_worktree_or_commit(
    user_repo: UserRepo, tmp_path: Path, backend: list[str]
) -> None:
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    tip = user_repo.head()
    done = fixloop(
        "review-fix", REVIEW_REL, *backend, cwd=user_repo.path, env=_no_claude_login(tmp_path)
    )
    assert done.returncode == 2
    # A pip install has no `claude` on PATH: the line names the CLI that came with fixloop.
    bundled = find_cli(None)
    assert bundled is not None
    assert _one_line(done) == (
        "backend:1:1: backend: claude: not logged in and no ANTHROPIC_API_KEY; "
        "set ANTHROPIC_API_KEY, or log in with the Claude Code CLI fixloop installed "
        f"(`{bundled} /login`); --backend scripted --script FILE runs offline"
    )
    _untouched(user_repo, tip)


def test_no_login_with_claude_on_path_names_it(user_repo: UserRepo, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text("#!/bin/sh\nexit 1\n")
    claude.chmod(0o755)
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    env = _no_claude_login(tmp_path)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    done = fixloop("review-fix", REVIEW_REL, cwd=user_repo.path, env=env)
    assert done.returncode == 2
    assert "log in to Claude Code (`claude /login`)" in _one_line(done)


def test_fix_findings_without_login_or_key_changes_nothing(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text(
        json.dumps(
            [
                {
                    "id": 1,
                    "severity": "P0",
                    "title": "t",
                    "body": "b",
                    "file": "src/app.py",
                    "line_start": 2,
                    "line_end": 2,
                    "confidence": 0.9,
                    "criterion": "c",
                    "verdict": "confirmed",
                    "evidence": "traced",
                }
            ]
        )
    )
    before, tip = user_repo.user_work(), user_repo.head()
    done = fixloop(
        "fix-findings", str(findings), cwd=user_repo.path, env=_no_claude_login(tmp_path)
    )
    assert done.returncode == 2
    assert _one_line(done).startswith("backend:1:1: backend: claude: not logged in")
    assert user_repo.user_work() == before
    _untouched(user_repo, tip)


def test_a_script_that_answers_none_of_the_runs_calls_is_refused_up_front(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    write_review(
        user_repo.path,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"), finding("WR-01", "u", "src/util.py")
        ),
    )
    tip = user_repo.head()
    script = _script(tmp_path, {"fixer/CR-07/iteration-1": {"fail": "crash"}})
    done = fixloop("review-fix", REVIEW_REL, "--script", script, cwd=user_repo.path)
    assert done.returncode == 2
    assert _one_line(done).endswith(
        "script.json:1:1: script: no reply for fixer/CR-01/iteration-1, "
        "fixer/WR-01/iteration-1 (the calls this run starts with)"
    )
    _untouched(user_repo, tip)


@pytest.mark.needs("bwrap")
def test_a_read_only_repository_is_one_line_exit_2(user_repo: UserRepo, tmp_path: Path) -> None:
    # Read-only for fixloop (root writes through file modes, so a read-only mount it is).
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    tip = user_repo.head()
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": {"fail": "crash"}})
    repo = str(user_repo.path)
    read_only = ["bwrap", "--bind", "/", "/", "--ro-bind", repo, repo, "--dev", "/dev"]
    command = [sys.executable, "-m", "fixloop", "review-fix", REVIEW_REL, "--script", script]
    done = subprocess.run(
        [*read_only, "--proc", "/proc", *command],
        cwd=user_repo.path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert _one_line(done) == (
        f"{user_repo.path / '.git' / 'fixloop' / 'runs'}:1:1: state: "
        "cannot create a run folder: Read-only file system"
    )
    _untouched(user_repo, tip)


DETACHED_INPUTS = {
    "fix-engine": (
        "sections/calc/mini-prd.md",
        "# Calc\n\n## Acceptance Criteria\n\n- AC-1: adds\n",
    ),
    "execute-wave": ("tasks.json", json.dumps([{"id": 1, "name": "a"}])),
    "fix-issue": ("ISSUE.md", "add() subtracts\n"),
}


@pytest.mark.parametrize("workflow", DETACHED_INPUTS)
def test_a_detached_head_is_exit_2_in_every_workflow(tmp_path: Path, workflow: str) -> None:
    # The kernel's one preflight says it for all, before a run folder exists (was exit 1).
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "-b", "main")
    (repo / "app.py").write_text("x = 1\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "--quiet", "-m", "one")
    git(repo, "checkout", "--quiet", "--detach")
    name, text = DETACHED_INPUTS[workflow]
    given = (repo if workflow == "fix-engine" else tmp_path) / name
    given.parent.mkdir(parents=True, exist_ok=True)
    given.write_text(text)
    extra = ["--test", "python3 -m unittest"] if workflow == "fix-issue" else []
    script = _script(tmp_path, {})
    done = fixloop(workflow, str(given), "--repo", str(repo), "--script", script, *extra, cwd=repo)
    assert done.returncode == 2, done.stderr
    assert _one_line(done).startswith(".:1:1: repository: HEAD is detached; check out a branch")
    assert not (repo / ".git" / "fixloop" / "runs").exists()


@pytest.mark.needs("bwrap")
def test_a_full_disk_is_one_line_exit_1_and_the_branch_stays(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    # The state folder on a file system of 16 KiB: the run's trace fills it part way.
    write_review(user_repo.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    tip = user_repo.head()
    script = _script(tmp_path, {"fixer/CR-01/iteration-1": {"fail": "crash"}})
    state = str(user_repo.path / ".git" / "fixloop")
    tiny = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--size", "16384", "--tmpfs", state]
    command = [sys.executable, "-m", "fixloop", "review-fix", REVIEW_REL, "--script", script]
    done = subprocess.run(
        [*tiny, "--proc", "/proc", *command],
        cwd=user_repo.path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    problems = [line for line in done.stderr.splitlines() if ": disk: " in line]
    assert [line.endswith(":1:1: disk: No space left on device") for line in problems] == [True]
    assert done.stderr.strip().splitlines()[-1] == problems[0], done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert user_repo.head() == tip
