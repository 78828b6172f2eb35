"""Kill a real wave run after every command of every git step it runs, recover, resume, check.

The run (`crash_scenario`: two waves, a merge, a conflict, a fix-loop rollback, a rollback from
the baseline, a wave commit each) goes through `wave_run.py` with `FIXLOOP_CRASH_AT=STEP#N:K`: the
runtime SIGKILLs itself right after command K of the N-th run of STEP. Then `fixloop recover`'s
recovery runs, and these must hold:

- only the user's worktree is left; no `fixloop/…` tag, sentinel or task branch; a run branch
  left is one recovery kept and reported, holding finished waves the user's branch lacks;
- the user's branch is at its old tip or fast-forwarded to finished waves;
- the user's staged, unstaged and untracked files, and `git status`, are byte-identical.

Then the run is resumed (`--resume`) and must end exactly as a run that was never killed: the
same tree on the user's branch, the same task statuses, nothing left behind. Each kill point is a
test of its own, from the golden table `goldens/kill-points/execute-wave.txt`
(`tests/helpers/kill_points.py`); the number covered is printed in pytest's summary.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import crash_tally, warm_python
from tests.helpers.crash_tally import crash_env, step_commands
from tests.helpers.gitrepo import UserRepo, UserWork, copy_repo, make_user_repo
from tests.helpers.kill_points import Golden, KillPoint, Table, expand
from tests.workflows.execute_wave import crash_scenario
from tests.workflows.execute_wave.crash_scenario import EXPECTED

from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import RecoveryReport, recover
from fixloop.runs.run import is_live

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).resolve().parent / "wave_run.py"
# Every git step of the run, at the run that takes each path: (step, N) for its N-th run.
POINTS = (
    ("setup-worktree", 1),
    ("tag", 1),  # the run's worktree and baseline
    ("setup-worktree", 2),  # a task's worktree
    ("begin-wave", 1),
    ("tag", 2),  # the wave leaves the branch; its baseline
    ("checkpoint-task", 1),
    ("merge-task", 1),
    ("remove-task", 1),  # task 1: merged
    ("merge-task", 2),  # task 2: conflict, aborted
    ("checkpoint-task", 4),
    ("rollback-files", 1),  # task 3's fix attempt rolled back
    ("rollback-files", 2),
    ("commit-paths", 1),
    ("end-wave", 1),  # rollback, commit, wave ends
    ("cleanup", 1),
)
# The steps of the run this matrix does not kill, and why; any other step must be in POINTS.
NOT_KILLED = {
    "preflight": "reads only, before anything changes (the protocol's matrix kills it)",
    "backpressure": "not a git step: the plan's build command (tasks.json's backpressureCommand)",
}
ALLOWED_SUBJECTS = ("merge: task ", "task ", "feat: implement wave ")
TABLE = Table(
    Path(__file__).resolve().parent / "goldens" / "kill-points" / "execute-wave.txt",
    "execute-wave",
    "tests/workflows/execute_wave/test_crash_matrix.py",
)


@functools.cache
def protocol() -> WorkflowDoc:
    """The git protocol recovery follows, read once per worker: no test changes the pack."""
    return load_protocol()


def driver(repo: Path, tasks: Path, script: Path, crash_at: str | None, *options: str) -> Any:
    env = crash_env(crash_at)
    return warm_python.run(
        [str(DRIVER), str(repo), str(tasks), str(script), *options], env=env, timeout=300
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_user_repo(tmp_path_factory.mktemp("template") / "repo").path


@pytest.fixture(scope="module")
def uncrashed(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("uncrashed")
    repo = copy_repo(template, folder / "repo")
    tasks, script = crash_scenario.write(folder)
    done = driver(repo.path, tasks, script, None)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["statuses"] == EXPECTED
    events = repo.path / ".git" / "fixloop" / "runs" / result["run"] / "events.jsonl"
    counts = step_commands(events)
    assert set(POINTS) <= set(counts), sorted(counts)
    return {"tree": repo.git("rev-parse", "main^{tree}").strip(), "counts": counts}


def wait_until_dead(repo: Path) -> None:
    runs = repo / ".git" / "fixloop" / "runs"
    deadline = time.monotonic() + 10
    while any(is_live(run) for run in runs.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)


def after_recovery(
    repo: UserRepo, before: UserWork, status: str, old_tip: str, report: RecoveryReport
) -> list[str]:
    problems = [item.describe() for item in report.recovered if item.error]
    if repo.worktrees() != [str(repo.path)]:
        problems.append(f"orphan worktree: {repo.worktrees()[1:]}")
    kept = {item.kept_branch for item in report.recovered if item.kept_branch}
    for branch in set(repo.branches()) - {"main"}:
        if branch not in kept:
            problems.append(f"orphan branch {branch} (not reported as kept)")
        elif "-task-" in branch:
            problems.append(f"a task branch was kept: {branch}")
        elif repo.git("rev-list", "--count", f"main..{branch}").strip() == "0":
            problems.append(f"kept branch {branch} holds nothing the user's branch lacks")
    if repo.git("merge-base", "--is-ancestor", old_tip, "main", check=False) != "":
        problems.append("main moved, but not by fast-forward")
    subjects = repo.git("log", "--format=%s", f"{old_tip}..main").splitlines()
    if any(not subject.startswith(ALLOWED_SUBJECTS) for subject in subjects):
        problems.append(f"main gained commits that are not the waves': {subjects}")
    if repo.user_work() != before:
        problems.append("the user's staged/unstaged/untracked work changed")
    if repo.git("status", "--porcelain=v1", "--untracked-files=all") != status:
        problems.append("git status of the user's tree changed")
    if repo.git("tag", "--list", "fixloop/*"):
        problems.append(f"run tags left: {repo.git('tag', '--list', 'fixloop/*').split()}")
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    if sentinels.is_dir() and any(sentinels.iterdir()):
        problems.append(f"sentinel left: {[p.name for p in sentinels.iterdir()]}")
    return problems


def crash_recover_resume(
    template: Path, folder: Path, crash_at: str, uncrashed: dict[str, Any]
) -> list[str]:
    repo = copy_repo(template, folder / "repo")
    tasks, script = crash_scenario.write(folder)
    before = repo.user_work()
    status = repo.git("status", "--porcelain=v1", "--untracked-files=all")
    old_tip = repo.head()
    done = driver(repo.path, tasks, script, crash_at)
    if done.returncode != -9:
        return [f"the run was not killed (exit {done.returncode}): {done.stderr[-500:]}"]
    wait_until_dead(repo.path)
    report = recover(repo.path, protocol())
    problems = after_recovery(repo, before, status, old_tip, report)
    resumed = driver(repo.path, tasks, script, None, "--resume")
    if resumed.returncode != 1:
        return [*problems, f"the resumed run ended {resumed.returncode}: {resumed.stderr[-500:]}"]
    result = json.loads(resumed.stdout)
    if result["statuses"] != EXPECTED:
        problems.append(f"resumed statuses {result['statuses']}")
    disk = {str(t["id"]): t.get("status") for t in json.loads(tasks.read_text())["tasks"]}
    if disk != {"1": "done", "2": "failed", "3": "failed", "4": "done"}:
        problems.append(f"tasks.json after the resume: {disk}")
    if repo.git("rev-parse", "main^{tree}").strip() != uncrashed["tree"]:
        problems.append("the resumed run's tree differs from an uncrashed run's")
    if repo.user_work() != before:
        problems.append("the user's work changed by the end")
    leftovers = [b for b in repo.branches() if b != "main"] + repo.worktrees()[1:]
    if leftovers:
        problems.append(f"left after the resumed run: {leftovers}")
    return problems


def test_the_table_names_every_kill_point_of_the_run(
    uncrashed: dict[str, Any], golden: Golden
) -> None:
    counts: dict[tuple[str, int], int] = uncrashed["counts"]
    unnamed = {step for step, _ in counts} - {step for step, _ in POINTS} - set(NOT_KILLED)
    assert unnamed == set(), f"name a run of each step in POINTS or NOT_KILLED: {sorted(unnamed)}"
    TABLE.check(golden, {"run": expand({point: counts[point] for point in POINTS})})


RUN_POINTS = TABLE.points("run")


@pytest.mark.parametrize("point", RUN_POINTS, ids=[point.id for point in RUN_POINTS])
def test_kill_after_the_command_recover_and_resume(
    point: KillPoint,
    template: Path,
    uncrashed: dict[str, Any],
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    found = crash_recover_resume(template, tmp_path, point.crash_at, uncrashed)
    violations = [f"{point.crash_at}: {problem}" for problem in found]
    crash_tally.record(record_property, point, violations)
    assert violations == []
