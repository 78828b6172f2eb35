"""Kill a real run after every command of every git step, recover, and check the invariants.

For each run of a git-protocol step that a real run executes (both `tag`s and both
`commit-paths`, with deleted, binary and mode changes in the second), and for each K from 1 to
the number of commands that step runs, a fresh copy of a repository holding a user's staged hunk,
unstaged change and untracked file goes through `tests/helpers/protocol_run.py` with
`FIXLOOP_CRASH_AT=STEP#N:K` (the runtime SIGKILLs itself and the step's process group right after
command K). Then recovery runs, and these must hold:

- `git worktree list` shows only the user's tree; no `fixloop/…` tag, sentinel or temp file left;
- no temp branch left, unless recovery kept it because it holds fix commits, and said so;
- `main` is at its old tip or fast-forwarded to fix commits only;
- every fix commit ever written is reachable from a branch (none lost);
- the user's staged, unstaged and untracked files, and `git status`, are byte-identical.

The same is then done to recovery itself (killed after every command of `recover-run`, then run
again). Each kill point is a test of its own, from the golden tables `goldens/kill-points/
git-protocol.txt` and `review-fix.txt` (`tests/helpers/kill_points.py`); the number covered is
printed in pytest's summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers import crash_tally, warm_python
from tests.helpers.crash_tally import crash_env
from tests.helpers.gitrepo import UserRepo, UserWork, copy_repo, make_user_repo
from tests.helpers.kill_points import Golden, KillPoint, Table, expand
from tests.helpers.reviews import (
    APP_FIX,
    finding,
    review_fix_cli,
    review_text,
    write_review,
)

from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import RecoveryReport, recover
from fixloop.runs.run import Run, is_live, list_runs

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).resolve().parent.parent / "helpers" / "protocol_run.py"
# What `fixloop recover` does, without importing every CLI command group.
RECOVER = (
    "import sys; from pathlib import Path; from fixloop.runs.recovery import recover; "
    "from fixloop.runs.git_session import load_protocol; "
    "print(recover(Path(sys.argv[1]), load_protocol()).lines())"
)
TABLES = Path(__file__).resolve().parent / "goldens" / "kill-points"
MATRIX = "tests/runs/test_crash_matrix.py"
PROTOCOL = Table(TABLES / "git-protocol.txt", "git-protocol", MATRIX)
REVIEW_FIX = Table(TABLES / "review-fix.txt", "review-fix", MATRIX)


def _driver(repo: Path, crash_at: str | None, *options: str) -> subprocess.CompletedProcess[str]:
    env = crash_env(crash_at)
    return warm_python.run([str(DRIVER), str(repo), *options], env=env, timeout=120)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_user_repo(tmp_path_factory.mktemp("template") / "repo").path


@pytest.fixture(scope="module")
def protocol() -> WorkflowDoc:
    return load_protocol()


@pytest.fixture(scope="module")
def step_commands(
    template: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, int], int]:
    repo = copy_repo(template, tmp_path_factory.mktemp("uncrashed") / "repo")
    done = _driver(repo.path, None)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run"]
    return crash_tally.step_commands(
        repo.path / ".git" / "fixloop" / "runs" / run_id / "events.jsonl"
    )


def _fix_commits(repo: UserRepo) -> set[str]:
    objects = repo.git(
        "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"
    )
    commits = [line.split()[0] for line in objects.splitlines() if line.endswith(" commit")]
    subjects = repo.git("show", "-s", "--format=%H %s", *commits)
    return {line.split()[0] for line in subjects.splitlines() if " fix(" in line}


def check_invariants(
    repo: UserRepo, before: UserWork, status: str, old_tip: str, report: RecoveryReport
) -> list[str]:
    problems: list[str] = []
    if not report.ok:
        problems += [item.describe() for item in report.recovered if item.error]
    if repo.worktrees() != [str(repo.path)]:
        problems.append(f"orphan worktree: {repo.worktrees()[1:]}")
    kept = {item.kept_branch for item in report.recovered if item.kept_branch}
    for branch in set(repo.branches()) - {"main"}:
        if branch not in kept:
            problems.append(f"orphan branch {branch} (not reported as kept)")
        elif repo.git("rev-list", "--count", f"main..{branch}").strip() == "0":
            problems.append(f"kept branch {branch} holds nothing the user's branch lacks")
    tip = repo.head()
    ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", old_tip, tip], cwd=repo.path)
    if ancestor.returncode != 0:
        problems.append("main moved, but not by fast-forward")
    subjects = repo.git("log", "--format=%s", f"{old_tip}..{tip}").splitlines()
    if any(not subject.startswith(("fix(", "user: ", "docs(")) for subject in subjects):
        problems.append(f"main gained commits that are not fixes: {subjects}")
    reachable = set(repo.git("rev-list", "--branches").split())
    lost = _fix_commits(repo) - reachable
    if lost:
        problems.append(f"fix commits lost: {sorted(lost)}")
    return problems + _leftovers_and_user_work(repo, before, status)


def _leftovers_and_user_work(repo: UserRepo, before: UserWork, status: str) -> list[str]:
    problems: list[str] = []
    if repo.user_work() != before:
        problems.append("the user's staged/unstaged/untracked work changed")
    if repo.git("status", "--porcelain=v1", "--untracked-files=all") != status:
        problems.append("git status of the user's tree changed")
    if repo.git("tag", "--list", "fixloop/*"):
        problems.append("run tags left behind")
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    if sentinels.is_dir() and any(sentinels.iterdir()):
        problems.append(f"sentinel left: {[p.name for p in sentinels.iterdir()]}")
    if list(repo.path.rglob("pwned")):
        problems.append("a commit message was executed")
    return problems


def _wait_until_dead(repo: Path) -> None:
    """A SIGKILLed run's last processes may take a moment to exit and release its lock."""
    runs = repo / ".git" / "fixloop" / "runs"
    deadline = time.monotonic() + 10
    while any(is_live(run) for run in runs.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)


def _crash_and_recover(
    template: Path, target: Path, crash_at: str, protocol: WorkflowDoc, *options: str
) -> list[str]:
    repo = copy_repo(template, target)
    before = repo.user_work()
    status = repo.git("status", "--porcelain=v1", "--untracked-files=all")
    old_tip = repo.head()
    done = _driver(repo.path, crash_at, *options)
    if done.returncode != -9:
        return [f"{crash_at}: the run was not killed (exit {done.returncode}): {done.stderr}"]
    _wait_until_dead(repo.path)
    problems = _says_where_it_died(repo, crash_at)
    report = recover(repo.path, protocol)
    problems += check_invariants(repo, before, status, old_tip, report)
    return [f"{crash_at}: {p}" for p in problems]


def _says_where_it_died(repo: UserRepo, crash_at: str) -> list[str]:
    step = crash_at.partition("#")[0].partition(":")[0]
    [info] = list_runs(repo.path / ".git" / "fixloop")
    if info["state"] != "crashed" or info.get("last_step") != f"git-protocol#{step}":
        return [f"runs list says {info['state']} in {info.get('last_step')}"]
    return []


@pytest.fixture(scope="module")
def diverged_commands(template: Path, tmp_path_factory: pytest.TempPathFactory) -> int:
    """Commands of a cleanup that cannot fast-forward: the user commits meanwhile."""
    probe = copy_repo(template, tmp_path_factory.mktemp("diverged") / "probe")
    done = _driver(probe.path, None, "--diverge")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"] == "kept-branch"
    events = probe.path / ".git" / "fixloop" / "runs" / result["run"] / "events.jsonl"
    return crash_tally.step_commands(events)["cleanup", 1]


def _killed_at_the_first_fix(step_commands: dict[tuple[str, int], int]) -> str:
    """The state with the most to recover: killed once the first fix commit is made."""
    return f"commit-paths#1:{step_commands['commit-paths', 1]}"


@pytest.fixture(scope="module")
def recovery_commands(
    template: Path,
    step_commands: dict[tuple[str, int], int],
    protocol: WorkflowDoc,
    tmp_path_factory: pytest.TempPathFactory,
) -> int:
    probe = copy_repo(template, tmp_path_factory.mktemp("recovery") / "probe")
    assert _driver(probe.path, _killed_at_the_first_fix(step_commands)).returncode == -9
    _wait_until_dead(probe.path)
    recorder = Run.start(probe.path, "recover")
    report = recover(probe.path, protocol, run=recorder)
    recorder.close()
    [item] = report.recovered
    assert item.kept_branch, "the probe must leave a fix commit to protect"
    return crash_tally.step_commands(recorder.events_path)["recover-run", 1]


def test_the_table_names_every_kill_point_of_a_run(
    step_commands: dict[tuple[str, int], int],
    diverged_commands: int,
    recovery_commands: int,
    golden: Golden,
) -> None:
    PROTOCOL.check(
        golden,
        {
            "run": expand(step_commands),
            "diverged": [f"cleanup:{k}" for k in range(1, diverged_commands + 1)],
            "recovery": [f"recover-run:{k}" for k in range(1, recovery_commands + 1)],
        },
    )


RUN_POINTS = PROTOCOL.points("run")


@pytest.mark.parametrize("point", RUN_POINTS, ids=[point.id for point in RUN_POINTS])
def test_kill_after_the_command(
    point: KillPoint,
    template: Path,
    protocol: WorkflowDoc,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    violations = _crash_and_recover(template, tmp_path / "repo", point.crash_at, protocol)
    crash_tally.record(record_property, point, violations)
    assert violations == []


DIVERGED_POINTS = PROTOCOL.points("diverged")


@pytest.mark.parametrize("point", DIVERGED_POINTS, ids=[point.id for point in DIVERGED_POINTS])
def test_kill_after_the_command_of_a_cleanup_that_cannot_fast_forward(
    point: KillPoint,
    template: Path,
    protocol: WorkflowDoc,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    # The user commits meanwhile: cleanup takes its other path and must keep the temp branch.
    target = tmp_path / "repo"
    violations = _crash_and_recover(template, target, point.crash_at, protocol, "--diverge")
    crash_tally.record(record_property, point, violations)
    assert violations == []


RECOVERY_POINTS = PROTOCOL.points("recovery")


@pytest.mark.parametrize("point", RECOVERY_POINTS, ids=[point.id for point in RECOVERY_POINTS])
def test_kill_recovery_after_the_command(
    point: KillPoint,
    *,
    template: Path,
    step_commands: dict[tuple[str, int], int],
    protocol: WorkflowDoc,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    crash = _killed_at_the_first_fix(step_commands)
    violations: list[str] = []
    repo = copy_repo(template, tmp_path / "repo")
    before = repo.user_work()
    status = repo.git("status", "--porcelain=v1", "--untracked-files=all")
    old_tip = repo.head()
    assert _driver(repo.path, crash).returncode == -9
    _wait_until_dead(repo.path)
    env = {**os.environ, "FIXLOOP_CRASH_AT": point.crash_at}
    killed = warm_python.run(["-c", RECOVER, str(repo.path)], env=env, timeout=120)
    if killed.returncode != -9:
        violations.append(f"{point.crash_at}: recovery was not killed: {killed.stderr}")
    else:
        _wait_until_dead(repo.path)
        report = recover(repo.path, protocol)
        problems = check_invariants(repo, before, status, old_tip, report)
        violations += [f"{point.crash_at}: {p}" for p in problems]
    crash_tally.record(record_property, point, violations)
    assert violations == []


# -- review-fix's report commit: killed after every command of it, then resumed ----------------

REPORT_COMMIT = ("commit-paths", 2)  # a one-finding review: the fix, then the report
REVIEW_FIX_ENDING = (REPORT_COMMIT, ("cleanup", 1))


def _review_fix_case(repo: Path, folder: Path) -> Path:
    """A one-finding review in `repo`, and the script that fixes it (in `folder`)."""
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    script = folder / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": APP_FIX}))
    return script


@pytest.fixture(scope="module")
def review_fix_commands(
    template: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, int], int]:
    folder = tmp_path_factory.mktemp("review-fix")
    probe = copy_repo(template, folder / "probe")
    script = _review_fix_case(probe.path, folder)
    done = review_fix_cli(probe.path, script, None)
    assert done.returncode == 0, done.stderr
    [run_dir] = (probe.path / ".git" / "fixloop" / "runs").iterdir()
    counts = crash_tally.step_commands(run_dir / "events.jsonl")
    return {point: counts[point] for point in REVIEW_FIX_ENDING}


def test_the_table_names_every_kill_point_of_review_fix_s_ending(
    review_fix_commands: dict[tuple[str, int], int], golden: Golden
) -> None:
    REVIEW_FIX.check(golden, {"ending": expand(review_fix_commands, "git-protocol/")})


ENDING_POINTS = REVIEW_FIX.points("ending")


@pytest.mark.parametrize("point", ENDING_POINTS, ids=[point.id for point in ENDING_POINTS])
def test_review_fix_killed_around_its_report_commit_resumes_without_doubling_it(
    point: KillPoint, template: Path, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    crash_at = point.crash_at
    violations: list[str] = []
    repo = copy_repo(template, tmp_path / "repo")
    script = _review_fix_case(repo.path, tmp_path)
    before = repo.user_work()
    status = repo.git("status", "--porcelain=v1", "--untracked-files=all")
    old_tip = repo.head()
    killed = review_fix_cli(repo.path, script, crash_at)
    if killed.returncode != -9:
        violations.append(f"{crash_at}: not killed (exit {killed.returncode})")
    else:
        _wait_until_dead(repo.path)
        again = review_fix_cli(repo.path, script, None)  # the same review: resumes the dead run
        if again.returncode != 0:
            violations.append(f"{crash_at}: the resumed run exited {again.returncode}")
        report = recover(repo.path, load_protocol())
        problems = check_invariants(repo, before, status, old_tip, report)
        subjects = repo.git("log", "--format=%s", f"{old_tip}..main").splitlines()
        if sorted(subjects) != [
            "docs(02): add code review fix report",
            "fix(02): CR-01 add subtracts",
        ]:
            problems.append(f"main gained {subjects}, not one fix and one report")
        violations += [f"{crash_at}: {p}" for p in problems]
    crash_tally.record(record_property, point, violations)
    assert violations == []
