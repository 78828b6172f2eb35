"""`fixloop demo`: build the example repositories, run review-fix, fix-findings, fix-engine,
execute-wave and fix-issue on them, report.

Everything is real except the model: the workflows, their document steps, git, worktrees, bash and
the example's own tests (run before and after with `python -m unittest`). The model is the
scripted backend playing `demo/model.py`; the scripts are written next to the repository so a
user can read exactly what the "model" did. No network, no key.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from fixloop.agents.backend import Backend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import Diagnostic, FixloopError, Severity
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.demo import fix_engine as fix_engine_case
from fixloop.extras.demo.example import REVIEW_PATH, build_example
from fixloop.extras.demo.execute_wave import (
    EXECUTE_WAVE_SCRIPT,
    build_wave_example,
    check_wave,
    run_wave_demo,
)
from fixloop.extras.demo.fix_issue import (
    FIX_ISSUE_SCRIPT,
    build_issue_example,
    check_issue,
    run_issue_demo,
)
from fixloop.extras.demo.model import FINDINGS, FIX_FINDINGS_SCRIPT, REVIEW_FIX_SCRIPT
from fixloop.extras.demo.progress import Display, display_for
from fixloop.reviews.model import FixScope
from fixloop.schemas.results import FixVerifyLoopOutput
from fixloop.workflows.execute_wave import ExecuteWaveResult
from fixloop.workflows.fix_engine import FixEngineResult
from fixloop.workflows.fix_findings import FixFindingsOptions, run_fix_findings
from fixloop.workflows.fix_issue import FixIssueResult
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, ReviewFixResult, run_review_fix

_RAN = re.compile(r"^Ran (\d+) tests?", re.MULTILINE)
_FAILED = re.compile(r"(failures|errors)=(\d+)")


@dataclass(frozen=True)
class SuiteTally:
    ran: int
    failed: int
    problem: str = ""

    @property
    def passed(self) -> int:
        return self.ran - self.failed

    def describe(self) -> str:
        return self.problem or f"{self.passed}/{self.ran} passed"


def run_unit_tests(repo: Path) -> SuiteTally:
    """The example's tests, really run, in a fresh interpreter."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    ran = _RAN.search(done.stderr)
    if ran is None:
        return SuiteTally(0, 0, f"tests did not run: {done.stderr.strip()[-200:]}")
    failed = sum(int(count) for _, count in _FAILED.findall(done.stderr))
    return SuiteTally(int(ran.group(1)), failed)


@dataclass
class DemoResult:
    directory: Path
    repo: Path
    base: str
    tests_before: SuiteTally
    tests_after: SuiteTally | None = None
    review_fix: ReviewFixResult | None = None
    fix_findings: FixVerifyLoopOutput | None = None
    fix_findings_output: Path | None = None
    fix_engine: FixEngineResult | None = None
    commits: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    backend: str = "scripted"  # who played the roles: "scripted", or a real model's backend
    execute_wave: ExecuteWaveResult | None = None
    wave_repo: Path | None = None  # execute-wave's own example repository
    fix_issue: FixIssueResult | None = None
    issue_repo: Path | None = None  # fix-issue's own example repository

    @property
    def ok(self) -> bool:
        return not self.problems


def _prepare(directory: Path | None) -> Path:
    if directory is None:
        return Path(tempfile.mkdtemp(prefix="fixloop-demo-"))
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise FixloopError(
            Diagnostic(str(directory), 1, 1, "usage", "--dir must be a new or empty directory")
        )
    directory.mkdir(parents=True, exist_ok=True)
    return directory.resolve()


def _pack() -> Pack:
    pack, diagnostics = load_pack(default_pack_root())
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        raise FixloopError(errors)
    return pack


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


class _ShowProgress:
    """The demo's display as one listener of the workflows' events: a row per item, notes."""

    def __init__(self, display: Display) -> None:
        self.display = display

    def __call__(self, event: Event) -> None:
        if event.kind is EventKind.ITEM:
            done = event.status != "running"
            status = event.message if done else "working"
            self.display.row(event.workflow, event.item, event.title, status, done=done)
        elif event.kind in (EventKind.NOTE, EventKind.WARNING) and "\n" not in event.message:
            self.display.note(event.message)


def run_demo(
    directory: Path | None, console: Console, backend: Backend | None = None
) -> DemoResult:
    """With `backend` (say, a real model) it plays both workflows instead of the scripts."""
    directory = _prepare(directory)
    repo = directory / "shelf"
    pack = _pack()
    review_script = _write_json(directory / "model" / "review-fix.json", REVIEW_FIX_SCRIPT)
    findings_script = _write_json(directory / "model" / "fix-findings.json", FIX_FINDINGS_SCRIPT)
    findings = _write_json(directory / "findings.json", FINDINGS)
    _write_json(directory / "model" / "fix-engine.json", fix_engine_case.SCRIPT)
    wave_script = _write_json(directory / "model" / "execute-wave.json", EXECUTE_WAVE_SCRIPT)
    issue_script = _write_json(directory / "model" / "fix-issue.json", FIX_ISSUE_SCRIPT)
    with display_for(console) as display:
        display.stage("building the example repository")
        build_example(repo)
        base = _git(repo, "rev-parse", "HEAD").strip()
        display.stage("running the example's tests (before)")
        result = DemoResult(directory, repo, base, run_unit_tests(repo))
        result.backend = backend.name if backend is not None else "scripted"
        display.note(f"tests before: {result.tests_before.describe()}")
        display.stage("review-fix: one verified commit per REVIEW.md finding, in a worktree")
        events = EventStream(_ShowProgress(display))
        result.review_fix = run_review_fix(
            ReviewFixOptions(review=repo / REVIEW_PATH, repo=repo, scope=FixScope.CRITICAL_WARNING),
            Context(pack, backend or ScriptedBackend.from_file(review_script), events),
        )
        display.stage("fix-findings: at most two fix + verify rounds per finding, staged")
        session = run_fix_findings(
            FixFindingsOptions(findings, repo, on_prestaged="proceed", on_scope_expansion="defer"),
            Context(pack, backend or ScriptedBackend.from_file(findings_script), events),
        )
        result.fix_findings = session.state.output()
        result.fix_findings_output = _write_json(
            directory / "fix-findings-output.json", result.fix_findings.model_dump(mode="json")
        )
        display.stage("fix-engine: a mini-PRD's criteria, each built and verified, <= 3 tries")
        result.fix_engine = fix_engine_case.run_case(repo, pack, backend, events)
        display.stage("running the example's tests (after)")
        result.tests_after = run_unit_tests(repo)
        display.note(f"tests after: {result.tests_after.describe()}")
        display.stage("execute-wave: two waves of tasks, parallel executors, one commit a wave")
        result.wave_repo = directory / "calc"
        tasks = build_wave_example(result.wave_repo)
        wave_backend = backend or ScriptedBackend.from_file(wave_script)
        result.execute_wave = run_wave_demo(tasks, result.wave_repo, pack, wave_backend, events)
        display.stage("fix-issue: an issue in, a patch graded test by test on a clean checkout")
        result.issue_repo = directory / "ledger"
        issue = build_issue_example(result.issue_repo)
        issue_base = _git(result.issue_repo, "rev-parse", "HEAD").strip()
        issue_backend = backend or ScriptedBackend.from_file(issue_script)
        result.fix_issue = run_issue_demo(issue, result.issue_repo, pack, issue_backend, events)
    result.commits = _git(repo, "log", "--reverse", "--format=%h %s", f"{base}..HEAD").splitlines()
    scripted = result.backend == "scripted"
    engine = fix_engine_case.self_check(result.fix_engine, repo, scripted=scripted)
    result.problems = self_check(result) + engine
    if result.execute_wave is not None and result.wave_repo is not None:
        result.problems += check_wave(result.execute_wave, result.wave_repo)
    if result.fix_issue is not None and result.issue_repo is not None:
        result.problems += check_issue(
            result.fix_issue, result.issue_repo, issue_base, scripted=scripted
        )
    return result


def self_check(result: DemoResult) -> list[str]:
    """The demo's promises, checked against the repository rather than taken on trust."""
    problems: list[str] = []
    review_fix = result.review_fix
    if review_fix is None or not review_fix.report_path:
        return ["review-fix did not commit REVIEW-FIX.md"]
    subjects = [line.split(" ", 1)[1] for line in result.commits]
    fix_commits = [s for s in subjects if s.startswith("fix(")]
    if len(fix_commits) != len(review_fix.fixed):
        problems.append(
            f"{len(fix_commits)} fix commits for {len(review_fix.fixed)} fixed findings"
        )
    for outcome in review_fix.fixed:
        if not any(s.startswith(f"fix(01): {outcome.finding.id} ") for s in fix_commits):
            problems.append(f"no commit for fixed finding {outcome.finding.id}")
    if sum(s.startswith("docs(") for s in subjects) != 1:
        problems.append("REVIEW-FIX.md was not committed exactly once")
    report = (result.repo / review_fix.report_path).read_text(encoding="utf-8")
    if f"fixed: {len(review_fix.fixed)}\n" not in report:
        problems.append("REVIEW-FIX.md's fixed count differs from the commits")
    if f"skipped: {len(review_fix.skipped)}\n" not in report:
        problems.append("REVIEW-FIX.md's skipped count differs from the run")
    after = result.tests_after
    if after is None or after.problem or after.passed <= result.tests_before.passed:
        problems.append("the example's tests did not improve")
    return problems
