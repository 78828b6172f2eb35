"""The openai backend's agent loop against a scripted Chat Completions server on loopback.

Only the model is scripted: the backend is the real one (the official SDK, real HTTP), its tools
run on a real git repository. Budgets stop the loop inconclusive; failures are one line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fixloop.agents.backend import AgentRequest, OutcomeStatus, StopReason, Usage
from fixloop.agents.budget import BudgetedBackend, RunBudget
from fixloop.agents.openai_backend import SUBMIT, OpenAIBackend
from fixloop.agents.openai_config import OpenAITarget
from fixloop.agents.structured import FinalText, without_refs
from fixloop.extras.testing.chat_server import (
    SCRIPTED_KEY,
    ChatServer,
    ChatTurn,
    call,
    failure,
    say,
    slow,
)
from fixloop.schemas.results import FixerResult

REPORT = {"files_changed": ["app.py"], "summary": "fixed: it", "concerns": None}
ENV = {"OPENAI_API_KEY": SCRIPTED_KEY}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("x = 1\n")
    return root


def request(cwd: Path, **changes: Any) -> AgentRequest:
    fields: dict[str, Any] = {
        "role": "fixer",
        "system_prompt": "# Fixer\nYou fix one finding.",
        "task": "fix it",
        "tools": ("Read", "Edit", "Write", "Bash"),
        "model": "opus",
        "output_schema": "FixerResult",
        "cwd": cwd,
        "writable": ("app.py",),
        "key": "fixer/CR-01/iteration-1",
    }
    fields.update(changes)
    return AgentRequest(**fields)


def backend(server: ChatServer, **target: Any) -> OpenAIBackend:
    values: dict[str, Any] = {
        "provider": "custom",
        "base_url": server.base_url,
        "model": "scripted-model",
        "key_variable": "OPENAI_API_KEY",
    }
    values.update(target)
    return OpenAIBackend(OpenAITarget(**values), environ=ENV, max_retries=1)


def test_a_fix_edits_the_file_and_answers_with_the_schema(repo: Path) -> None:
    edit = {"file_path": "app.py", "old_string": "1", "new_string": "2"}
    turns = [call("Read", {"file_path": "app.py"}), call("Edit", edit), call(SUBMIT, REPORT)]
    with ChatServer(turns) as server:
        outcome = backend(server, price_input=1.0, price_output=2.0).dispatch(request(repo))
    assert outcome.ok and isinstance(outcome.output, FixerResult), outcome.detail
    assert (repo / "app.py").read_text() == "x = 2\n"
    usage = outcome.usage
    assert (usage.turns, usage.input_tokens, usage.output_tokens) == (3, 300, 60)
    assert usage.cost_usd == pytest.approx((300 * 1.0 + 60 * 2.0) / 1e6)
    first = server.requests[0]
    assert first.call_key == "fixer/CR-01/iteration-1" and first.model == "scripted-model"
    assert first.system.startswith("# Fixer") and SUBMIT in first.system
    submit = first.tool(SUBMIT)
    assert submit is not None and set(submit["parameters"]["properties"]) == {"output"}
    assert first.messages[1] == {"role": "user", "content": "fix it"}


def test_an_answer_that_does_not_validate_is_sent_back_then_inconclusive(repo: Path) -> None:
    bad = call(SUBMIT, {"summary": "no files"})
    with ChatServer([bad, bad, bad]) as server:
        outcome = backend(server).dispatch(request(repo))
    assert outcome.reason is StopReason.MALFORMED and not outcome.ok
    assert "does not match FixerResult" in outcome.detail
    assert "does not match" in server.requests[1].tool_results()[-1]


def test_a_corrected_answer_counts(repo: Path) -> None:
    with ChatServer([call(SUBMIT, "{not json"), call(SUBMIT, {"output": REPORT})]) as server:
        outcome = backend(server).dispatch(request(repo))
    assert outcome.ok, outcome.detail
    assert "not JSON" in server.requests[1].tool_results()[-1]


def test_prose_is_no_answer_but_a_fenced_json_text_is(repo: Path) -> None:
    with ChatServer([say("I fixed it, trust me."), say("Really.")]) as server:
        prose = backend(server).dispatch(request(repo))
    assert prose.reason is StopReason.MISSING and "only prose" in prose.detail
    assert server.requests[1].messages[-1]["content"] == f"Call {SUBMIT} with your result."
    with ChatServer([say(f"```json\n{json.dumps(REPORT)}\n```")]) as server:
        fenced = backend(server).dispatch(request(repo))
    assert fenced.ok, fenced.detail


def test_a_role_without_a_schema_answers_with_its_last_text(repo: Path) -> None:
    with ChatServer([say("verified")]) as server:
        outcome = backend(server).dispatch(request(repo, output_schema=None))
    assert outcome.ok and outcome.output == FinalText("verified")
    assert SUBMIT not in server.requests[0].tool_names


def test_hostile_tool_calls_are_refused_and_the_loop_goes_on(repo: Path, tmp_path: Path) -> None:
    turns = [
        call("Write", {"file_path": "../outside.txt", "content": "pwned"}),
        call("Edit", {"file_path": "other.py", "old_string": "a", "new_string": "b"}),
        call("Read", {"file_path": "/etc/passwd"}),
        call("Agent", {"prompt": "do it for me"}),
        call("Read", "{not json"),
        call(SUBMIT, REPORT),
    ]
    reviewer = request(repo, tools=("Read", "Grep", "Glob"), writable=())
    with ChatServer(turns) as server:
        outcome = backend(server).dispatch(reviewer)
    assert outcome.ok, outcome.detail  # a refused call does not end a model's turn
    assert not (tmp_path / "outside.txt").exists()
    results = [json.loads(text) for text in server.requests[-1].tool_results()]
    assert [r["ok"] for r in results] == [False] * 5
    assert "not among this role's tools" in results[0]["message"]
    assert "not JSON" in results[4]["error"]
    assert [(d.tool, d.path) for d in outcome.denied] == [
        ("Write", "../outside.txt"),
        ("Edit", "other.py"),
    ]
    assert {"Read", "Grep", "Glob", SUBMIT} == set(server.requests[0].tool_names)


def test_the_turn_limit_stops_the_loop(repo: Path) -> None:
    reading = [call("Read", {"file_path": "app.py"})] * 5
    with ChatServer(reading) as server:
        outcome = backend(server).dispatch(request(repo, max_turns=3))
    assert outcome.reason is StopReason.TURN_LIMIT and outcome.status is OutcomeStatus.INCONCLUSIVE
    assert len(server.requests) == 3 and outcome.usage.turns == 3


def test_the_token_budget_stops_the_loop(repo: Path) -> None:
    reading = [call("Read", {"file_path": "app.py"}, prompt_tokens=1000)] * 5
    with ChatServer(reading) as server:
        outcome = backend(server, call_token_budget=2500).dispatch(request(repo))
    assert outcome.reason is StopReason.TOKEN_BUDGET
    assert outcome.detail == "the call used 3060 tokens of its budget of 2500"
    assert len(server.requests) == 3


def test_what_the_run_s_token_budget_has_left_caps_the_call(repo: Path) -> None:
    reading = [call("Read", {"file_path": "app.py"}, prompt_tokens=1000)] * 5
    with ChatServer(reading) as server:
        capped = request(repo, max_tokens=1500)  # as `RunBudget` lowers it
        outcome = backend(server, call_token_budget=10**6).dispatch(capped)
    assert outcome.reason is StopReason.TOKEN_BUDGET
    assert outcome.detail == "the call used 2040 tokens of its budget of 1500"
    assert len(server.requests) == 2


def test_a_cost_cap_without_prices_is_refused_before_any_request(repo: Path) -> None:
    with ChatServer([call(SUBMIT, REPORT)]) as server:
        outcome = backend(server).dispatch(request(repo, max_cost_usd=1.0))
    assert outcome.reason is StopReason.CALL_BUDGET and "price-input" in outcome.detail
    assert server.requests == []


def test_a_run_cost_budget_stops_the_call_and_starts_no_other(repo: Path) -> None:
    expensive = ChatTurn(tool_calls=(("Read", {"file_path": "app.py"}),), prompt_tokens=600_000)
    with ChatServer([expensive] * 5) as server:
        priced = backend(server, price_input=1.0, price_output=1.0, call_token_budget=10**9)
        budgeted = BudgetedBackend(priced, RunBudget(max_cost_usd=1.0))
        first = budgeted.dispatch(request(repo))
        second = budgeted.dispatch(request(repo, key="fixer/CR-02/iteration-1"))
    assert first.reason is StopReason.CALL_BUDGET and "reached its cap $1.0000" in first.detail
    assert len(server.requests) == 2, "the second turn passed the cap; no third was asked"
    assert second.reason is StopReason.RUN_BUDGET


def test_the_wall_time_bounds_the_request(repo: Path) -> None:
    with ChatServer([slow(call(SUBMIT, REPORT), 3.0)] * 2) as server:
        outcome = backend(server).dispatch(request(repo, timeout_s=0.5))
    assert outcome.reason is StopReason.TIMEOUT, outcome.detail
    assert not outcome.ok


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (
            401,
            "Incorrect API key provided",
            "401 from {url}: the key in OPENAI_API_KEY was refused",
        ),
        (429, "Rate limit reached", "rate limited (429) by {url}, still after 1 retries"),
        (500, "boom", "{url} failed (500), still after 1 retries: boom"),
        (503, "overloaded", "{url} failed (503), still after 1 retries: overloaded"),
        (404, "model not found", "404 from {url}: no model 'scripted-model' there"),
        (400, "tools are not supported", "refused the request (400): tools are not supported"),
    ],
)
def test_a_server_error_is_one_clear_line(
    repo: Path, status: int, message: str, expected: str
) -> None:
    with ChatServer([failure(status, message)] * 3) as server:
        outcome = backend(server).dispatch(request(repo))
        url = server.base_url
    assert outcome.reason is StopReason.BACKEND_ERROR
    assert expected.format(url=url) in outcome.detail
    assert "\n" not in outcome.detail and SCRIPTED_KEY not in outcome.detail
    retried = 2 if status in (429, 500, 503) else 1  # the SDK retries these, once here
    assert len(server.requests) == retried


def test_a_server_that_cannot_be_reached_is_one_line(repo: Path) -> None:
    with ChatServer() as server:
        url = server.base_url
    target = OpenAITarget("custom", url, "m", None)
    outcome = OpenAIBackend(target, environ={}, max_retries=0).dispatch(request(repo))
    assert outcome.reason is StopReason.BACKEND_ERROR
    assert outcome.detail.startswith(f"openai: cannot reach {url}")


def test_a_role_cannot_unlist_the_secret_files_it_may_not_read(repo: Path) -> None:
    """The attack: rewrite the worktree's settings to an empty `secret-files`, then read `.env`.
    The backend holds the project's list from where the run started."""
    (repo / ".env").write_text("DB_PASSWORD=hunter2hunter2\n")
    turns = [
        call("Write", {"file_path": "fixloop.toml", "content": "secret-files = []\n"}),
        call("Read", {"file_path": ".env"}),
        call(SUBMIT, REPORT),
    ]
    with ChatServer(turns) as server:
        outcome = backend(server).dispatch(request(repo, writable=None))
    assert outcome.ok, outcome.detail
    assert (repo / "fixloop.toml").read_text() == "secret-files = []\n"
    [wrote, read] = [json.loads(text) for text in server.requests[-1].tool_results()]
    assert wrote["ok"] and not read["ok"] and "secret file" in read["message"]
    assert "hunter2" not in json.dumps([r.body for r in server.requests])


def test_a_refused_key_stays_refused_without_more_requests(repo: Path) -> None:
    with ChatServer([failure(401, "Incorrect API key")] * 3) as server:
        shared = backend(server)
        first = shared.dispatch(request(repo))
        second = shared.dispatch(request(repo, key="fixer/CR-02/iteration-1"))
    assert first.reason is StopReason.BACKEND_ERROR and second.detail == first.detail
    assert len(server.requests) == 1


def test_the_role_s_model_alias_picks_the_model_sent(repo: Path) -> None:
    with ChatServer([call(SUBMIT, REPORT)]) as server:
        mapped = backend(server, models={"sonnet": "small-model"})
        assert mapped.dispatch(request(repo, model="sonnet")).ok
    assert server.requests[0].model == "small-model"


@pytest.mark.parametrize("schema", ["FixerResult", "ReviewOutput", "ImplResult"])
def test_the_answer_s_parameters_are_plain_json_schema(repo: Path, schema: str) -> None:
    """No `$ref` or `$defs`: what every OpenAI-compatible server's function parameters take."""
    with ChatServer([say("no answer"), say("still none")]) as server:
        backend(server).dispatch(request(repo, output_schema=schema))
    submit = server.requests[0].tool(SUBMIT)
    assert submit is not None
    text = json.dumps(submit["parameters"])
    assert "$ref" not in text and "$defs" not in text


def test_a_recursive_schema_keeps_its_refs() -> None:
    tree = {
        "$defs": {"Node": {"type": "object", "properties": {"kids": {"$ref": "#/$defs/Node"}}}},
        "$ref": "#/$defs/Node",
    }
    assert without_refs(tree) is tree


def test_each_turn_is_told_to_the_live_display_with_its_tokens_and_cost(repo: Path) -> None:
    edit = {"file_path": "app.py", "old_string": "1", "new_string": "2"}
    turns = [call("Read", {"file_path": "app.py"}), call("Edit", edit), call(SUBMIT, REPORT)]
    seen: list[Usage] = []
    with ChatServer(turns) as server:
        chosen = backend(server, price_input=1.0, price_output=2.0)
        outcome = chosen.dispatch(request(repo, on_progress=seen.append))
    assert outcome.ok, outcome.detail
    assert [(u.turns, u.input_tokens, u.output_tokens) for u in seen] == [
        (1, 100, 20),
        (2, 200, 40),
        (3, 300, 60),
    ]
    assert seen[-1].cost_usd == outcome.usage.cost_usd > seen[0].cost_usd > 0
