"""Dispatch: the role document becomes the request; every call lands in the trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.agents.backend import StopReason
from fixloop.agents.budget import RunBudget
from fixloop.agents.dispatch import Dispatcher, build_request
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventKind, EventStream

FINDING = {
    "id": 7,
    "severity": "P1",
    "title": "Division by zero in $(rm -rf ~)",
    "body": "mean() divides by len(xs)",
    "file": "stats.py",
    "line_start": 3,
    "line_end": 3,
    "confidence": 0.9,
    "criterion": "no crash on empty input",
    "verdict": "confirmed",
    "evidence": "checked",
}
REPORT = {"files_changed": ["stats.py"], "summary": "fixed: guard", "concerns": None}


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def fixer_inputs(worktree: Path) -> dict[str, object]:
    return {"finding": FINDING, "files": ["stats.py"], "worktree": str(worktree)}


def test_the_request_comes_from_the_role_document(pack: Pack, tmp_path: Path) -> None:
    request = build_request(
        pack,
        "fixer",
        fixer_inputs(tmp_path),
        "Fix finding 7.",
        tmp_path,
        writable=["stats.py"],
        key="fixer/7/round-1",
    )
    spec = pack.agent("fixer").spec
    assert request.role == "fixer"
    assert request.tools == tuple(spec.tools)
    assert request.model == spec.model
    assert request.max_turns == spec.max_turns
    assert request.output_schema == "FixerResult"
    assert request.writable == ("stats.py",)
    assert request.key == "fixer/7/round-1"
    assert request.task == "Fix finding 7."
    # The finding is rendered into the prompt as data, exactly as given.
    assert "Division by zero in $(rm -rf ~)" in request.system_prompt
    assert str(tmp_path) in request.system_prompt
    assert "{{" not in request.system_prompt


def test_a_missing_input_names_the_role_document(pack: Pack, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        build_request(pack, "fixer", {"finding": FINDING}, "task", tmp_path, key="fixer/7")
    line = caught.value.diagnostics[0].format()
    assert line.startswith("agents/fixer.md:") or "agents/fixer.md:" in line, line
    assert ": inputs: fixer/7: required inputs are missing: 'files' (list), 'worktree'" in line
    with pytest.raises(FixloopError) as one:
        inputs = {"finding": FINDING, "files": []}
        build_request(pack, "fixer", inputs, "task", tmp_path, key="fixer/7")
    line = one.value.diagnostics[0].format()
    assert ": inputs: fixer/7: input 'worktree': required string input is missing" in line


def test_a_mistyped_input_is_refused(pack: Pack, tmp_path: Path) -> None:
    inputs = fixer_inputs(tmp_path) | {"files": "stats.py"}
    with pytest.raises(FixloopError) as caught:
        build_request(pack, "fixer", inputs, "task", tmp_path)
    assert "input 'files': expected list, got str" in caught.value.diagnostics[0].format()


def test_an_unknown_role_is_an_error(pack: Pack, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        build_request(pack, "janitor", {}, "task", tmp_path)
    assert "no agent named 'janitor'" in caught.value.diagnostics[0].format()


def test_every_call_is_traced_with_its_outcome(pack: Pack, tmp_path: Path) -> None:
    backend = ScriptedBackend(
        {
            "fixer/7/round-1": {"output": REPORT, "cost_usd": 0.25},
            "fixer/7/round-2": {"fail": "malformed", "raw": "sorry"},
        }
    )
    seen: list[Event] = []
    dispatcher = Dispatcher(pack, backend, EventStream(seen.append))
    first = dispatcher.call("fixer", fixer_inputs(tmp_path), "t", tmp_path, key="fixer/7/round-1")
    second = dispatcher.call("fixer", fixer_inputs(tmp_path), "t", tmp_path, key="fixer/7/round-2")
    assert first.ok
    assert second.reason is StopReason.MALFORMED
    # Each call: its start and its turn while it runs (for a live display), then its record.
    assert [event.kind for event in seen] == 2 * [
        EventKind.AGENT_PROGRESS,
        EventKind.AGENT_PROGRESS,
        EventKind.AGENT,
    ]
    running = [event.to_json() for event in seen if event.kind is EventKind.AGENT_PROGRESS]
    assert [(e["key"], e["turns"]) for e in running] == [
        ("fixer/7/round-1", 0),
        ("fixer/7/round-1", 1),
        ("fixer/7/round-2", 0),
        ("fixer/7/round-2", 1),
    ]
    events = [event.to_json() for event in seen if event.kind is EventKind.AGENT]
    assert [(e["key"], e["outcome"], e["reason"]) for e in events] == [
        ("fixer/7/round-1", "ok", "none"),
        ("fixer/7/round-2", "inconclusive", "malformed_output"),
    ]
    assert events[0]["cost_usd"] == 0.25
    assert events[0]["role"] == "fixer"


def test_a_spent_run_budget_starts_no_new_call(pack: Pack, tmp_path: Path) -> None:
    backend = ScriptedBackend(
        {
            "fixer/7/round-1": {"output": REPORT, "cost_usd": 1.0},
            "fixer/7/round-2": {"output": REPORT, "cost_usd": 1.0},
        }
    )
    dispatcher = Dispatcher(pack, backend, budget=RunBudget(max_cost_usd=0.5))
    first = dispatcher.call("fixer", fixer_inputs(tmp_path), "t", tmp_path, key="fixer/7/round-1")
    second = dispatcher.call("fixer", fixer_inputs(tmp_path), "t", tmp_path, key="fixer/7/round-2")
    assert first.ok
    assert second.reason is StopReason.RUN_BUDGET
    assert [call.key for call in backend.calls] == ["fixer/7/round-1"]
