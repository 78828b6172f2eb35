"""Each workflow's Python follows its document's "Order of work", checked on real runs.

Static: every step the order names exists (in the document, or in the document it names), and
every method marked `@implements("id")` names a step of the document or of the git protocol.
Dynamic: a real run (real git, the scripted model) emits a `phase` event on entering each part of
the order; the top-level phases, first occurrence each, must come in the order the document
names them. A workflow whose `run()` did its parts in another order than its prose fails here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers import fix_findings as findings_helpers
from tests.helpers import fix_issue as issue_helpers
from tests.helpers.gitrepo import UserRepo, make_user_repo
from tests.helpers.reviews import (
    APP_FIX,
    REVIEW_REL,
    finding,
    pack,
    review_text,
    write_review,
)
from tests.workflows.fix_engine import scenario as fix_engine_scenario

from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.order import Mention, order_of_work
from fixloop.documents.pack import Pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.workflows.execute_wave import ExecuteWave, ExecuteWaveOptions
from fixloop.workflows.fix_engine import FixEngine
from fixloop.workflows.fix_findings import FixFindings, FixFindingsOptions
from fixloop.workflows.fix_issue import FixIssue, FixIssueOptions, IssueStatus
from fixloop.workflows.kernel.workflow import PROTOCOL, AnyWorkflow, Context, implemented_steps
from fixloop.workflows.review import Review, ReviewOptions
from fixloop.workflows.review_fix import ReviewFix, ReviewFixOptions

WORKFLOWS: list[type[AnyWorkflow]] = [
    ReviewFix,
    FixFindings,
    ExecuteWave,
    FixEngine,
    FixIssue,
    Review,
]


def _steps(loaded: Pack, name: str) -> set[str]:
    return {step.name for step in loaded.workflow(name).markdown().steps}


def _mentions(loaded: Pack, name: str) -> list[Mention]:
    flow = loaded.workflow(name)
    return order_of_work(flow.source, name, _steps(loaded, name))


def _top_level_phases(events: list[Event]) -> list[str]:
    return [
        event.step
        for event in events
        if event.kind is EventKind.PHASE and event.data.get("depth") == 0
    ]


def follows(order: list[str], phases: list[str]) -> str | None:
    """None when the first occurrences of `phases` come in `order`'s order; else what did not.

    A step the order names twice (say `cleanup`, once for resuming and once at the end) may
    match either mention; a phase the order does not name is a part of a named one."""
    position = -1
    seen: set[str] = set()
    for phase in phases:
        if phase in seen or phase not in order:
            continue
        seen.add(phase)
        later = [index for index, name in enumerate(order) if name == phase and index >= position]
        if not later:
            return f"{phase!r} ran after {order[position]!r}, but the document names it before"
        position = later[0]
    return None


def test_follows_catches_an_order_the_document_does_not_name() -> None:
    order = ["a", "b", "c", "b", "d"]
    assert follows(order, ["a", "b", "x", "c", "b", "d"]) is None
    assert follows(order, ["a", "c", "b", "d"]) is None  # `b` matches its second mention
    assert follows(order, ["a", "d", "c"]) == "'c' ran after 'd', but the document names it before"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_every_step_the_order_names_exists(workflow: type[AnyWorkflow]) -> None:
    loaded = pack()
    mentions = _mentions(loaded, workflow.name)
    assert mentions, f"workflows/{workflow.name}.md needs an 'Order of work' section"
    unknown = [
        f"line {m.line}: {m.step} of {m.document}"
        for m in mentions
        if m.document not in (workflow.name, PROTOCOL) or m.step not in _steps(loaded, m.document)
    ]
    assert unknown == []


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_every_implemented_step_exists(workflow: type[AnyWorkflow]) -> None:
    loaded = pack()
    known = _steps(loaded, workflow.name) | _steps(loaded, PROTOCOL)
    implemented = implemented_steps(workflow)
    assert implemented, f"{workflow.__name__} marks no method with @implements"
    assert {method: step for method, step in implemented.items() if step not in known} == {}


def _review_fix_run(tmp_path: Path) -> list[Event]:
    user = make_user_repo(tmp_path / "repo")
    write_review(user.path, review_text(finding("CR-01", "add subtracts", "src/app.py")))
    clean = {
        "edits": [{"path": REVIEW_REL, "content": review_text(status="clean")}],
        "output": {"schema_version": "v1", "findings": []},
    }
    script = {"fixer/CR-01/iteration-1": APP_FIX, "reviewer/review/iteration-2": clean}
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append))
    options = ReviewFixOptions(review=user.path / REVIEW_REL, repo=user.path, auto=True)
    result = ReviewFix(context, options).run()
    assert result.report_commit and result.iterations == 1
    return events


def _fix_findings_run(tmp_path: Path) -> list[Event]:
    repo = findings_helpers.make_repo(tmp_path)
    target = findings_helpers.finding(evidence=None)  # no verifier yet: the pre-gate runs
    script = {
        "verifier/1/pre-gate": {"output": findings_helpers.verdict(target, "confirmed")},
        "fixer/1/round-1": findings_helpers.fix(),
        "verifier/1/round-1": {"output": findings_helpers.verdict(target, "confirmed")},
        "fixer/1/round-2": findings_helpers.fix(findings_helpers.BETTER),
        "verifier/1/round-2": {"output": findings_helpers.verdict(target, "confirmed")},
    }
    path = tmp_path / "findings.json"
    path.write_text(json.dumps([target]), encoding="utf-8")
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append))
    result = FixFindings(context, FixFindingsOptions(path, repo)).run()
    assert [e.id for e in result.state.output().escalated] == [1]
    return events


def _execute_wave_run(tmp_path: Path) -> list[Event]:
    from tests.workflows.execute_wave.scripts import fix, implement, score, scores

    user = make_user_repo(tmp_path / "repo")
    tasks = {
        "tasks": [{"id": 1, "name": "mul"}, {"id": 2, "name": "after mul", "dependsOn": [1]}],
        "backpressureCommand": "true",
    }
    (tmp_path / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    script = {
        "executor/1/implement": implement(1, {"src/mul.py": "def mul(a, b):\n    return a\n"}),
        "reviewer/1/verify": score(1, scores("logic", 5)),
        "fixer/1/attempt-1": fix({"src/mul.py": "def mul(a, b):\n    return a * b\n"}),
        "reviewer/1/attempt-1": score(1, scores("logic", 9)),
        "executor/2/implement": implement(2, {"src/use.py": "from src.mul import mul\n"}),
        "reviewer/2/verify": score(2, scores("logic", 9)),
    }
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append))
    options = ExecuteWaveOptions(tasks=tmp_path / "tasks.json", repo=user.path)
    result = ExecuteWave(context, options).run()
    assert result.exit_code == 0, result.to_json()
    return events


def _fix_engine_run(tmp_path: Path) -> list[Event]:
    # One item passes on its second attempt, the other fails three times: escalated.
    repo = fix_engine_scenario.make_section_repo(tmp_path / "repo")
    events: list[Event] = []
    result, _ = fix_engine_scenario.run(repo.path, fix_engine_scenario.script(), events=events)
    assert result.status == "escalated" and len(result.done) == 1
    return events


def _fix_issue_run(tmp_path: Path) -> list[Event]:
    repo = issue_helpers.make_issue_repo(tmp_path / "repo")
    issue = issue_helpers.write_issue(tmp_path)
    script = {
        # The first attempt edits but leaves the tests failing; the second finishes the fix.
        "issue-fixer/ISSUE/attempt-1": {
            "tools": issue_helpers.fixing_tools(old="(len(values) + 1)", new="(len(values) + 2)"),
            "output": issue_helpers.FIXED_OUTPUT,
        },
        "issue-fixer/ISSUE/attempt-2": {
            "tools": issue_helpers.fixing_tools(old="(len(values) + 2)", new="len(values)"),
            "output": issue_helpers.FIXED_OUTPUT,
        },
    }
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append))
    options = FixIssueOptions(
        issue, repo, tests=[issue_helpers.UNITTEST], open_sandbox=issue_helpers.recorder()
    )
    result = FixIssue(context, options).run()
    assert result.status is IssueStatus.RESOLVED and len(result.attempts) == 2
    return events


def _review_run(tmp_path: Path) -> list[Event]:
    user = make_user_repo(tmp_path / "repo")
    (user.path / ".planning" / "phases" / "02-x").mkdir(parents=True)
    (user.path / "src" / "app.py").write_text("def add(a, b):\n    return a - b  # 02\n")
    user.git("commit", "--quiet", "-m", "fix(02-01): app", "--", "src/app.py")
    found = {"schema_version": "v1", "findings": [], "checks_run": ["src/app.py"]}
    script = {"reviewer/review/findings": {"output": found}}
    events: list[Event] = []
    context = Context(pack(), ScriptedBackend(script), EventStream(events.append))
    result = Review(context, ReviewOptions(paths=("02",), repo=user.path)).run()
    assert result.files == ["src/app.py"]
    return events


RUNS: dict[str, Callable[[Path], list[Event]]] = {
    "review-fix": _review_fix_run,
    "fix-findings": _fix_findings_run,
    "execute-wave": _execute_wave_run,
    "fix-engine": _fix_engine_run,
    "fix-issue": _fix_issue_run,
    "review": _review_run,
}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda w: w.name)
def test_a_real_run_follows_the_order_of_work(workflow: type[AnyWorkflow], tmp_path: Path) -> None:
    loaded = pack()
    order = [mention.step for mention in _mentions(loaded, workflow.name)]
    phases = _top_level_phases(RUNS[workflow.name](tmp_path))
    # The scenario walks most of the order (all of a short one).
    assert len(set(phases)) >= min(6, len(set(order))), phases
    assert follows(order, phases) is None, phases
    unnamed = set(phases) - set(order)
    assert unnamed == set(), f"top-level phases the order of work does not name: {unnamed}"


def test_a_workflow_that_swaps_two_parts_fails(user_repo: UserRepo) -> None:
    """The check has teeth: a review-fix that wrote its report before fixing is caught."""
    loaded = pack()
    order = [mention.step for mention in _mentions(loaded, "review-fix")]
    swapped = ["parse-findings", "check-review-status", "write-fix-report", "fix-one-finding"]
    assert follows(order, swapped) is not None
