"""Kill a real fix-issue run after every command of each git step it adds, recover, check.

A fix-issue run adds two git steps of its own document, `setup-verify-worktree` and
`apply-patch`, and removes its verification worktree with git-protocol's `recover-run` (the
other protocol steps it runs are the protocol crash matrix's, `tests/runs/test_crash_matrix.py`).
For each command K of each of them, a fresh repository goes through `fixloop fix-issue` with
`FIXLOOP_CRASH_AT=WORKFLOW/STEP#N:K` (the runtime SIGKILLs itself right after command K), then
`fixloop recover`; then:

- `git worktree list` shows only the user's tree: neither the run's worktree nor the
  verification's is left; no `fixloop/…` branch, tag or sentinel;
- `main` did not move (fix-issue never commits), and `git status` and every file of the user's
  tree, the issue beside it too, are byte-identical;
- the runs say they crashed and where, and the run's own is marked recovered.

Each kill point is a test of its own, from the golden table `goldens/kill-points/fix-issue.txt`
(`tests/helpers/kill_points.py`); the number covered is printed in pytest's summary.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from tests.helpers import crash_tally, warm_python
from tests.helpers.crash_tally import crash_env
from tests.helpers.fix_issue import fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import git
from tests.helpers.kill_points import Golden, KillPoint, Table

from fixloop.runs.run import is_live, list_runs

pytestmark = pytest.mark.slow

# (workflow, step, N): the N-th run of the step in one fix-issue run.
POINTS = (
    ("fix-issue", "setup-verify-worktree", 1),
    ("fix-issue", "apply-patch", 1),
    ("git-protocol", "recover-run", 1),  # the verification worktree removed
)
TABLE = Table(
    Path(__file__).resolve().parent / "goldens" / "kill-points" / "fix-issue.txt",
    "fix-issue",
    "tests/workflows/fix_issue/test_crash_matrix.py",
)


def _fix_issue(case: Path, crash_at: str | None) -> subprocess.CompletedProcess[str]:
    env = crash_env(crash_at)
    return warm_python.run(
        [
            "-m",
            "fixloop",
            "fix-issue",
            str(case / "ISSUE.md"),
            "--repo",
            str(case / "repo"),
            "--test",
            "python3 -m unittest",
            "--sandbox",
            "local",
            "--script",
            str(case / "script.yaml"),
        ],
        env=env,
        timeout=120,
    )


def _snapshot(case: Path) -> dict[str, bytes]:
    files = {
        path.relative_to(case).as_posix(): path.read_bytes()
        for path in case.rglob("*")
        if path.is_file() and ".git" not in path.relative_to(case).parts
    }
    files["<status>"] = git(case / "repo", "status", "--porcelain=v1", "--ignored").encode()
    files["<head>"] = git(case / "repo", "rev-parse", "main").encode()
    return files


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    case = tmp_path_factory.mktemp("template")
    make_issue_repo(case / "repo")
    write_issue(case)
    (case / "script.yaml").write_text(yaml.safe_dump(fixing_script()))
    return case


@pytest.fixture(scope="module")
def commands(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Commands each point's step ran in an uncrashed run."""
    case = tmp_path_factory.mktemp("uncrashed") / "case"
    shutil.copytree(template, case, symlinks=True)
    done = _fix_issue(case, None)
    assert done.returncode == 0, done.stderr
    runs = case / "repo" / ".git" / "fixloop" / "runs"
    [main] = [path for path in runs.iterdir() if not path.name.endswith("-verify")]
    counts: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    for line in (main / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "step":
            key = (event["workflow"], event["step"])
            seen[key] = seen.get(key, 0) + 1
            counts[f"{key[0]}/{key[1]}#{seen[key]}"] = event["commands"]
    return counts


def _wait_until_dead(repo: Path) -> None:
    runs = repo / ".git" / "fixloop" / "runs"
    deadline = time.monotonic() + 10
    while any(is_live(run) for run in runs.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)


def _crash_and_recover(template: Path, case: Path, crash_at: str, step: str) -> list[str]:
    shutil.copytree(template, case, symlinks=True)
    repo = case / "repo"
    before = _snapshot(case)
    done = _fix_issue(case, crash_at)
    if done.returncode != -9:
        return [f"not killed (exit {done.returncode}): {done.stderr[-300:]}"]
    _wait_until_dead(repo)
    problems: list[str] = []
    crashed = [run for run in list_runs(repo / ".git" / "fixloop") if run["state"] == "crashed"]
    if not any(run.get("last_step", "").endswith(f"#{step}") for run in crashed):
        problems.append(f"no crashed run says it died in {step}: {crashed}")
    recovered = warm_python.run(["-m", "fixloop", "recover", "--repo", str(repo)], timeout=120)
    if recovered.returncode != 0:
        problems.append(f"recover exit {recovered.returncode}: {recovered.stderr}")
    if git(repo, "worktree", "list", "--porcelain").count("worktree ") != 1:
        problems.append(f"orphan worktree: {git(repo, 'worktree', 'list')}")
    if git(repo, "branch", "--format=%(refname:short)").split() != ["main"]:
        problems.append(f"orphan branch: {git(repo, 'branch')}")
    if git(repo, "tag", "--list", "fixloop/*"):
        problems.append("run tags left behind")
    sentinels = repo / ".git" / "fixloop" / "sentinels"
    if sentinels.is_dir() and any(sentinels.iterdir()):
        problems.append(f"sentinel left: {sorted(p.name for p in sentinels.iterdir())}")
    if _snapshot(case) != before:
        problems.append("the user's branch, tree or issue changed")
    runs = {run["id"]: run for run in list_runs(repo / ".git" / "fixloop")}
    main = [run for run_id, run in runs.items() if not run_id.endswith("-verify")]
    if len(main) != 1 or "recovered_at" not in main[0]:
        problems.append(f"the run is not marked recovered: {main}")
    return problems


def test_the_table_names_every_kill_point_of_the_run(
    commands: dict[str, int], golden: Golden
) -> None:
    named = {f"{workflow}/{step}#{occurrence}" for workflow, step, occurrence in POINTS}
    unnamed = {name for name in commands if name.startswith("fix-issue/")} - named
    assert unnamed == set(), f"a step of fix-issue's own the matrix misses: {sorted(unnamed)}"
    rows = []
    for workflow, step, occurrence in POINTS:
        name = f"{workflow}/{step}#{occurrence}"
        count = commands[name]
        assert count >= 2, f"{name} ran {count} command(s)"
        rows += [f"{name}:{k}" for k in range(1, count + 1)]
    TABLE.check(golden, {"run": rows})


RUN_POINTS = TABLE.points("run")


@pytest.mark.parametrize("point", RUN_POINTS, ids=[point.id for point in RUN_POINTS])
def test_kill_after_the_command(
    point: KillPoint,
    template: Path,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    step = point.step.partition("/")[2].partition("#")[0]
    found = _crash_and_recover(template, tmp_path / "case", point.crash_at, step)
    violations = [f"{point.crash_at}: {problem}" for problem in found]
    crash_tally.record(record_property, point, violations)
    assert violations == []
