"""Kill a real fix-engine run after every command of every step it runs, resume it, check it all.

Two runs of the real command line (`fixloop fix-engine … --backend scripted`) on a repository
holding a user's staged hunk, unstaged change and untracked file (and the section's untracked
mini-PRD): `complete` (AC-1 passes on its second attempt, check-2 on its first: two commits, then
COMPLETE) and `escalated` (check-2 fails three times: rolled back, error report). For each run
of each step they execute — the git protocol's (`setup-worktree`, every `tag`,
`commit-paths`, `rollback-files`, `cleanup`) and the document's own (`make-checklist`, every
`record-verdict` and `record-commit`, `error-report`, `complete`) — and each K from 1 to the
commands that step runs, a fresh copy is killed with `FIXLOOP_CRASH_AT=STEP#N:K`, then resumed as
a user would (`--resume`; a plain run when the kill came before any state existed; nothing when
it came after the section was finished). Then:

- right after the kill: COMPLETE never exists unless every commit it names is on the branch;
- the resumed run ends as the uncrashed one does: the same commits (each item committed exactly
  once), the same files, meta.yaml `completed` with COMPLETE, or `escalated` with its report;
- no item done before the kill is done again, and no recorded attempt is made again;
- the user's branch only fast-forwarded; no worktree, branch, tag or sentinel is left, and
  `fixloop recover` finds nothing to do;
- the user's staged, unstaged and untracked work and `git status` are byte-identical.

Each kill point is a test of its own, from the golden table `goldens/kill-points/fix-engine.txt`
(`tests/helpers/kill_points.py`); the number covered is printed in pytest's summary.
"""

from __future__ import annotations

import functools
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import crash_tally
from tests.helpers.crash_tally import step_commands
from tests.helpers.gitrepo import UserRepo, copy_repo
from tests.helpers.kill_points import Golden, KillPoint, Table, expand
from tests.workflows.fix_engine.scenario import (
    ADD_RIGHT,
    fix_engine_cli,
    make_section_repo,
    script,
    state_dir,
)
from tests.workflows.fix_engine.test_workflow import GREET, passing

from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.git_session import load_protocol
from fixloop.runs.recovery import recover
from fixloop.runs.run import is_live

pytestmark = pytest.mark.slow

SCENARIOS: dict[str, Callable[[], dict[str, Any]]] = {"complete": passing, "escalated": script}
AC_1 = "calc: AC-1 `add(a, b)` returns the sum of a and b"
EXPECTED_SUBJECTS = {"complete": 2, "escalated": 1}
TABLE = Table(
    Path(__file__).resolve().parent / "goldens" / "kill-points" / "fix-engine.txt",
    "fix-engine",
    "tests/runs/test_fix_engine_crash_matrix.py",
)


@functools.cache
def protocol() -> WorkflowDoc:
    """The git protocol recovery follows, read once per worker: no test changes the pack."""
    return load_protocol()


def _events_path(repo: Path, run_id: str) -> Path:
    return repo / ".git" / "fixloop" / "runs" / run_id / "events.jsonl"


def _events(repo: Path, run_id: str) -> list[dict[str, Any]]:
    path = _events_path(repo, run_id)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_section_repo(tmp_path_factory.mktemp("template") / "repo").path


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("scripts")
    written = {}
    for name, replies in SCENARIOS.items():
        written[name] = folder / f"{name}.json"
        written[name].write_text(json.dumps(replies()), encoding="utf-8")
    return written


@pytest.fixture(scope="module")
def points(
    template: Path, scripts: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[tuple[str, int], int]]:
    """Each scenario's steps, run by run, with the commands each ran (an uncrashed run):
    every run of every step of `complete`; of `escalated` only the step runs `complete` lacks."""
    found: dict[str, dict[tuple[str, int], int]] = {}
    for name in SCENARIOS:
        repo = copy_repo(template, tmp_path_factory.mktemp(f"uncrashed-{name}") / "repo").path
        done = fix_engine_cli(repo, scripts[name])
        assert done.returncode == (0 if name == "complete" else 1), done.stderr
        counts = step_commands(_events_path(repo, json.loads(done.stdout)["run_id"]))
        known = found.get("complete", {})
        found[name] = {key: n for key, n in counts.items() if key not in known}
    return found


def _wait_until_dead(repo: Path) -> None:
    runs = repo / ".git" / "fixloop" / "runs"
    deadline = time.monotonic() + 10
    while runs.is_dir() and any(is_live(r) for r in runs.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)


def _meta(repo: Path) -> dict[str, Any] | None:
    path = state_dir(repo) / "meta.yaml"
    if not path.is_file():
        return None
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else None


def _on_main(repo: UserRepo, commit: str) -> bool:
    probe = ["git", "merge-base", "--is-ancestor", commit, "main"]
    return subprocess.run(probe, cwd=repo.path, capture_output=True).returncode == 0


def _after_the_kill(repo: UserRepo) -> list[str]:
    complete = state_dir(repo.path) / "COMPLETE"
    if not complete.is_file():
        return []
    named = yaml.safe_load(complete.read_text(encoding="utf-8"))["commits"]
    return [f"COMPLETE names {c[:7]}, not on the branch" for c in named if not _on_main(repo, c)]


def _resume(repo: UserRepo, replies: Path) -> tuple[subprocess.CompletedProcess[str] | None, str]:
    """What a user does next: --resume; a plain run when there was nothing to resume yet."""
    done = fix_engine_cli(repo.path, replies, "--resume")
    if done.returncode == 2 and "no stopped run of this section" in done.stderr:
        return fix_engine_cli(repo.path, replies), "started again"
    if done.returncode == 2 and "nothing to resume" in done.stderr:
        return None, "finished before the kill"
    return done, "resumed"


def _not_again(repo: UserRepo, run_id: str, at_kill: dict[str, Any] | None) -> list[str]:
    """No item done before the kill is called again; no recorded attempt is made again, except
    the passed attempt of an item whose commit the kill prevented (its changes are gone)."""
    if at_kill is None:
        return []
    problems = []
    for event in _events(repo.path, run_id):
        if event["event"] != "agent":
            continue
        _, item, attempt = event["key"].split("/")
        record = at_kill["items"].get(item, {})
        kept = [
            a for a in record.get("attempts", []) if record["status"] != "passed" or not a["passed"]
        ]
        recorded = max((a["attempt"] for a in kept), default=0)
        if record.get("status") == "done" or int(attempt.removeprefix("attempt-")) <= recorded:
            problems.append(f"{event['key']} was made again")
    return problems


def _final(repo: UserRepo, name: str, old_tip: str) -> list[str]:
    problems = []
    subjects = repo.git("log", "--reverse", "--format=%s", f"{old_tip}..main").splitlines()
    if len(subjects) != EXPECTED_SUBJECTS[name] or subjects[0] != AC_1:
        problems.append(f"commits on main: {subjects}")
    if (repo.path / "src" / "app.py").read_text() != ADD_RIGHT:
        problems.append("AC-1's change is not on the branch")
    greet = repo.path / "src" / "greet.py"
    if (greet.read_text() if greet.exists() else None) != (GREET if name == "complete" else None):
        problems.append("check-2's file is not as the uncrashed run leaves it")
    meta, state = _meta(repo.path) or {}, state_dir(repo.path)
    if name == "complete":
        if meta.get("status") != "completed" or not (state / "COMPLETE").is_file():
            problems.append(f"not completed: meta.yaml says {meta.get('status')}")
    elif meta.get("status") != "escalated" or not (state / "error_report.yaml").is_file():
        problems.append(f"not escalated with a report: meta.yaml says {meta.get('status')}")
    elif (state / "COMPLETE").exists():
        problems.append("COMPLETE written for an escalated section")
    return problems


def _leftovers(repo: UserRepo, before: object, status: str, old_tip: str) -> list[str]:
    problems = []
    if repo.user_work() != before:
        problems.append("the user's staged/unstaged/untracked work changed")
    if repo.git("status", "--porcelain=v1", "--untracked-files=all") != status:
        problems.append("git status of the user's tree changed")
    if repo.worktrees() != [str(repo.path)]:
        problems.append(f"orphan worktree: {repo.worktrees()[1:]}")
    if repo.branches() != ["main"]:
        problems.append(f"branches left: {repo.branches()}")
    if repo.git("tag", "--list", "fixloop/*"):
        problems.append("run tags left behind")
    if not _on_main(repo, old_tip):
        problems.append("main moved, but not by fast-forward")
    sentinels = repo.path / ".git" / "fixloop" / "sentinels"
    if sentinels.is_dir() and any(sentinels.iterdir()):
        problems.append("sentinel left")
    report = recover(repo.path, protocol())
    if report.recovered:
        problems.append(f"recover still found work: {report.lines()}")
    return problems


def _crash_and_resume(
    template: Path, target: Path, name: str, replies: Path, crash: str
) -> list[str]:
    repo = copy_repo(template, target)
    before, old_tip = repo.user_work(), repo.head()
    status = repo.git("status", "--porcelain=v1", "--untracked-files=all")
    killed = fix_engine_cli(repo.path, replies, crash=crash)
    if killed.returncode != -9:
        return [f"{crash}: not killed (exit {killed.returncode}): {killed.stderr[-300:]}"]
    _wait_until_dead(repo.path)
    problems = _after_the_kill(repo)
    at_kill = _meta(repo.path)
    done, how = _resume(repo, replies)
    if done is not None:
        expected = 0 if name == "complete" else 1
        if done.returncode != expected:
            return [f"{crash}: {how}: exit {done.returncode}: {done.stderr[-400:]}"]
        run_id = json.loads(done.stdout)["run_id"]
        if run_id:
            problems += _not_again(repo, run_id, at_kill)
    problems += _final(repo, name, old_tip) + _leftovers(repo, before, status, old_tip)
    return [f"{name} {crash} ({how}): {problem}" for problem in problems]


def test_the_table_names_every_kill_point_of_both_runs(
    points: dict[str, dict[tuple[str, int], int]], golden: Golden
) -> None:
    TABLE.check(golden, {name: expand(steps) for name, steps in points.items()})


POINTS = [point for name in SCENARIOS for point in TABLE.points(name)]


@pytest.mark.parametrize("point", POINTS, ids=[point.id for point in POINTS])
def test_kill_after_the_command_then_resume(
    point: KillPoint,
    template: Path,
    scripts: dict[str, Path],
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    name = point.case
    violations = _crash_and_resume(template, tmp_path / "repo", name, scripts[name], point.crash_at)
    crash_tally.record(record_property, point, violations)
    assert violations == []
