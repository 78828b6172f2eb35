"""The claude backend through the real Claude Code CLI, with only the model scripted on loopback.

Everything here is real except the model: claude-agent-sdk starts the bundled CLI, the CLI calls
our `MessagesServer`, runs the scripted tool calls in a real git worktree, and our backend turns
the result into an `AgentOutcome`.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage

from fixloop.agents.backend import AgentRequest, OutcomeStatus, StopReason, Usage
from fixloop.agents.budget import BudgetedBackend, RunBudget
from fixloop.agents.claude import (
    MAX_BUFFER_BYTES,
    ClaudeBackend,
    FinalText,
    OutputFormat,
    parse_structured,
)
from fixloop.agents.claude_sandbox import sandbox_settings
from fixloop.agents.dispatch import Dispatcher, build_request
from fixloop.documents.pack import Pack, default_pack_root, load_pack
from fixloop.events import Event, EventKind, EventStream
from fixloop.extras.testing.claude_cli import bundled_cli
from fixloop.extras.testing.messages_server import (
    MessagesServer,
    Turn,
    error,
    slow,
    structured,
    text,
    tool_use,
)
from fixloop.extras.testing.replay import ScriptReplay
from fixloop.process_table import processes
from fixloop.schemas.results import FixerResult, FixReport, ScopeExpansionRequest

RENDER_VARS = Path(__file__).resolve().parent.parent / "documents" / "goldens" / "render"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """A real repository with one commit, and a real linked worktree on a temp branch."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "src" / "other.py").write_text("VALUE = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "initial")
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "fixloop/test", str(tree))
    return tree


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def fixer_request(pack: Pack, worktree: Path, **overrides: Any) -> AgentRequest:
    finding = {"id": "CR-01", "title": "add subtracts", "file": "src/calc.py", "line": 2}
    request = build_request(
        pack,
        "fixer",
        {"finding": finding, "files": ["src/calc.py"], "worktree": str(worktree)},
        "Fix finding CR-01 in src/calc.py.",
        worktree,
        writable=["src/calc.py"],
        key="fixer/CR-01/round-1",
    )
    fields = {**request.__dict__, **overrides}
    return AgentRequest(**fields)


def run(script: list[Turn], request: AgentRequest, **backend: Any) -> tuple[Any, MessagesServer]:
    with MessagesServer(script) as server:
        outcome = ClaudeBackend(env=server.env(), **backend).dispatch(request)
    return outcome, server


FIXED: dict[str, Any] = {"files_changed": ["src/calc.py"], "summary": "add returns a + b"}


@pytest.mark.cli
def test_a_fixer_reads_edits_and_checks_a_real_worktree(pack: Pack, worktree: Path) -> None:
    calc = worktree / "src" / "calc.py"
    script = [
        tool_use("Read", {"file_path": str(calc)}),
        tool_use(
            "Edit",
            {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b"},
        ),
        tool_use("Bash", {"command": "git diff --stat -- src/calc.py"}),
        structured({"output": FIXED}, input_tokens=2000, output_tokens=300),
    ]
    request = fixer_request(pack, worktree)

    outcome, server = run(script, request)

    assert outcome.ok, outcome.detail
    assert outcome.output == FixerResult(FixReport.model_validate(FIXED))
    assert calc.read_text() == "def add(a, b):\n    return a + b\n"
    assert git(worktree, "diff", "--name-only") == "src/calc.py\n"
    assert outcome.denied == ()
    # usage, cost, turns and duration come from the CLI's result
    assert outcome.usage.turns >= 4
    assert outcome.usage.input_tokens >= 2300 and outcome.usage.output_tokens >= 360
    assert outcome.usage.cost_usd > 0
    assert outcome.usage.duration_s > 0
    assert server.remaining == 0 and server.unscripted == 0

    first = server.conversation[0]
    assert request.system_prompt in first.system, "the rendered role document is the prompt"
    assert "Fix finding CR-01 in src/calc.py." in first.user_texts()[-1]
    assert {"Read", "Edit", "Write", "Bash", "Grep", "Glob", "StructuredOutput"} <= set(
        first.tool_names
    )
    assert "Agent" not in first.tool_names and "WebFetch" not in first.tool_names
    assert first.model.startswith("claude-opus"), "the role's frontmatter model is used"
    results = server.conversation[-1].tool_results()
    assert "src/calc.py" in str(results[2]["content"]), "git diff really ran in the worktree"


@pytest.mark.cli
def test_an_edit_outside_the_assigned_files_is_denied_and_recorded(
    pack: Pack, worktree: Path
) -> None:
    other = worktree / "src" / "other.py"
    outside = worktree.parent / "outside.txt"
    (worktree / "src" / "link.py").symlink_to(outside)
    script = [
        tool_use("Edit", {"file_path": str(other), "old_string": "1", "new_string": "2"}),
        tool_use("Write", {"file_path": str(outside), "content": "escaped"}),
        tool_use("Write", {"file_path": "src/link.py", "content": "through a link"}),
        tool_use("Write", {"file_path": ".git", "content": "gitdir: /elsewhere"}),
        structured(
            {
                "output": {
                    "needs_scope_expansion": True,
                    "additional_files": ["src/other.py"],
                    "justification": "the constant lives there",
                }
            }
        ),
    ]

    outcome, server = run(script, fixer_request(pack, worktree))

    assert outcome.ok, outcome.detail
    assert isinstance(outcome.output, FixerResult)
    assert isinstance(outcome.output.root, ScopeExpansionRequest)
    assert other.read_text() == "VALUE = 1\n"
    assert not outside.exists()
    assert (worktree / ".git").read_text().startswith("gitdir: ")
    assert [(d.tool, d.path) for d in outcome.denied] == [
        ("Edit", "src/other.py"),
        ("Write", str(outside)),
        ("Write", "src/link.py"),  # a symlink that leads out
        ("Write", ".git"),
    ]
    assert "not among the files assigned" in outcome.denied[0].reason
    assert "outside the worktree" in outcome.denied[1].reason
    results = server.conversation[-1].tool_results()
    assert all(result.get("is_error") for result in results[:4])
    assert "scope-expansion request" in str(results[0]["content"]), "the model is told why"


@pytest.mark.cli
def test_a_bash_command_outside_the_roles_patterns_is_refused(pack: Pack, worktree: Path) -> None:
    verifier = pack.agent("verifier").spec
    request = AgentRequest(
        role="verifier",
        system_prompt="You verify.",
        task="verify",
        tools=tuple(verifier.tools),
        model="sonnet",
        output_schema=None,
        cwd=worktree,
    )
    script = [
        tool_use("Bash", {"command": "touch created-by-verifier"}),
        tool_use("Bash", {"command": "git diff -- src/calc.py"}),
        text("verified"),
    ]

    outcome, server = run(script, request)

    assert outcome.ok and outcome.output == FinalText("verified")
    assert not (worktree / "created-by-verifier").exists()
    refused, allowed = server.conversation[-1].tool_results()
    assert refused.get("is_error") and "not among the tools" in str(refused["content"])
    assert not allowed.get("is_error")
    assert "Edit" not in server.conversation[0].tool_names, "a verifier has no edit tools"


@pytest.mark.cli
def test_output_that_keeps_failing_the_schema_is_malformed(pack: Pack, worktree: Path) -> None:
    wrong = structured({"output": {"files_changed": "src/calc.py"}})

    outcome, server = run([wrong] * 5, fixer_request(pack, worktree))

    assert outcome.status is OutcomeStatus.INCONCLUSIVE
    assert outcome.reason is StopReason.MALFORMED
    assert "structured output" in outcome.detail and "files_changed" in outcome.detail
    assert outcome.output is None
    assert server.remaining == 0, "the CLI gave the model its retries, then gave up"


@pytest.mark.cli
def test_a_final_answer_in_prose_is_missing_output(pack: Pack, worktree: Path) -> None:
    outcome, server = run([text("I fixed it, trust me.")] * 2, fixer_request(pack, worktree))

    assert outcome.status is OutcomeStatus.INCONCLUSIVE
    assert outcome.reason is StopReason.MISSING
    assert "only prose: 'I fixed it, trust me.'" in outcome.detail
    assert "StructuredOutput" in server.conversation[1].user_texts()[-1], "the CLI insisted once"


@pytest.mark.cli
def test_the_turn_limit_stops_the_call(pack: Pack, worktree: Path) -> None:
    read = tool_use("Read", {"file_path": str(worktree / "src" / "calc.py")})

    outcome, _ = run(
        [read] * 5 + [structured({"output": FIXED})], fixer_request(pack, worktree, max_turns=2)
    )

    assert outcome.reason is StopReason.TURN_LIMIT
    assert "turn limit (2)" in outcome.detail


@pytest.mark.cli
def test_the_call_cost_cap_stops_the_call(pack: Pack, worktree: Path) -> None:
    expensive = tool_use(
        "Read", {"file_path": str(worktree / "src" / "calc.py")}, input_tokens=400_000
    )

    outcome, _ = run(
        [expensive] * 3 + [structured({"output": FIXED})],
        fixer_request(pack, worktree, max_cost_usd=0.01),
    )

    assert outcome.reason is StopReason.CALL_BUDGET
    assert "reached its cap $0.0100" in outcome.detail
    assert outcome.usage.cost_usd > 0.01


@pytest.mark.cli
def test_a_spent_run_budget_starts_no_cli(pack: Pack, worktree: Path) -> None:
    budget = RunBudget(max_cost_usd=0.02)
    costly = tool_use("Read", {"file_path": str(worktree / "src" / "calc.py")}, input_tokens=50_000)
    with MessagesServer([costly, costly, structured({"output": FIXED})]) as server:
        backend = BudgetedBackend(ClaudeBackend(env=server.env()), budget)
        first = backend.dispatch(fixer_request(pack, worktree, max_cost_usd=5.0))
        second = backend.dispatch(fixer_request(pack, worktree, key="fixer/CR-02/round-1"))

    # The running call's own cap was lowered to what the run had left, so it stopped there...
    assert first.reason is StopReason.CALL_BUDGET
    assert "reached its cap $0.0200" in first.detail
    # ...and once the run is spent, the next call is never started.
    assert second.reason is StopReason.RUN_BUDGET
    assert "fixer/CR-02/round-1: not started: run cost budget spent" in second.detail
    assert budget.stopped_by is not None and budget.stopped_by.kind.value == "cost"
    assert len(server.conversation) == 1, "the refused call never reached the model"


@pytest.mark.cli
def test_an_api_error_is_a_backend_error_with_its_message(pack: Pack, worktree: Path) -> None:
    outcome, _ = run(
        [error(529, "overloaded_error", "scripted overload")], fixer_request(pack, worktree)
    )

    assert outcome.reason is StopReason.BACKEND_ERROR
    assert "529" in outcome.detail and "scripted overload" in outcome.detail


@pytest.mark.cli
def test_a_rejected_key_says_how_to_authenticate(pack: Pack, worktree: Path) -> None:
    refusal = error(401, "authentication_error", "invalid x-api-key")

    outcome, _ = run([refusal], fixer_request(pack, worktree))

    assert outcome.reason is StopReason.BACKEND_ERROR
    assert outcome.detail.startswith("the model call failed: ")
    assert "ANTHROPIC_API_KEY" in outcome.detail


@pytest.mark.cli
def test_no_key_at_all_is_a_clear_error_offline(
    pack: Pack, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    nowhere = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "DISABLE_TELEMETRY": "1"}

    outcome = ClaudeBackend(env=nowhere).dispatch(fixer_request(pack, worktree))

    assert outcome.reason is StopReason.BACKEND_ERROR
    assert "Not logged in" in outcome.detail and "ANTHROPIC_API_KEY" in outcome.detail


@pytest.mark.cli
def test_a_call_past_its_timeout_is_stopped(pack: Pack, worktree: Path) -> None:
    script = [slow(structured({"output": FIXED}), 60.0)]

    outcome, server = run(script, fixer_request(pack, worktree, timeout_s=3.0))

    assert outcome.reason is StopReason.TIMEOUT
    assert "no result within 3.0s" in outcome.detail
    assert outcome.output is None
    # Usually the model is mid-answer when the deadline hits; on a loaded machine the CLI may
    # still be starting. Either way no second model turn happens.
    assert len(server.conversation) <= 1
    # The CLI the deadline stopped was waited for: no child of this process is left running it.
    cli = str(bundled_cli())
    assert [p.argv for p in processes() if p.ppid == os.getpid() and p.argv[:1] == (cli,)] == []


@pytest.mark.cli
def test_a_missing_cli_is_a_clear_backend_error(pack: Pack, worktree: Path) -> None:
    outcome, server = run([], fixer_request(pack, worktree), cli_path="/nonexistent/claude")

    assert outcome.reason is StopReason.BACKEND_ERROR
    assert "Claude Code CLI not found" in outcome.detail
    assert server.requests == []


@pytest.mark.cli
def test_a_missing_worktree_is_refused_before_starting(pack: Pack, tmp_path: Path) -> None:
    outcome, _ = run([], fixer_request(pack, tmp_path / "gone", cwd=tmp_path / "gone"))

    assert outcome.reason is StopReason.BACKEND_ERROR
    assert "does not exist" in outcome.detail


@pytest.mark.cli
def test_an_oversized_message_line_is_a_crash_not_a_traceback(pack: Pack, worktree: Path) -> None:
    calc = str(worktree / "src" / "calc.py")
    script = [tool_use("Read", {"file_path": calc}), structured({"output": FIXED})]

    outcome, _ = run(script, fixer_request(pack, worktree), max_buffer_bytes=2_000)

    assert outcome.reason is StopReason.CRASH
    assert outcome.output is None
    assert MAX_BUFFER_BYTES >= 16 * 1024 * 1024, "the default is raised well above the SDK's 1 MiB"


@pytest.mark.cli
def test_an_inherited_claudecode_variable_does_not_reach_the_child(
    pack: Pack, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    with MessagesServer([structured({"output": FIXED})]) as server:
        backend = ClaudeBackend(env={**server.env(), "CLAUDECODE": "1"})
        outcome = backend.dispatch(fixer_request(pack, worktree, timeout_s=60.0))

    assert "CLAUDECODE" not in backend.env
    assert outcome.ok, outcome.detail


@pytest.mark.cli
def test_user_and_project_settings_do_not_leak_in(
    pack: Pack, worktree: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "user-home"
    (home / ".claude").mkdir(parents=True)
    deny_all = {"permissions": {"deny": ["Read", "Edit"]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(deny_all))
    (worktree / ".claude").mkdir()
    (worktree / ".claude" / "settings.json").write_text(json.dumps(deny_all))
    monkeypatch.setenv("HOME", str(home))
    calc = worktree / "src" / "calc.py"
    script = [
        tool_use(
            "Edit",
            {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b"},
        ),
        structured({"output": FIXED}),
    ]

    outcome, _ = run(script, fixer_request(pack, worktree))

    assert outcome.ok, outcome.detail
    assert "a + b" in calc.read_text(), "settings that deny Edit were not loaded"


def structured_result(output: object, text_answer: str = "") -> ResultMessage:
    return ResultMessage(
        subtype="success",
        duration_ms=1,
        duration_api_ms=1,
        is_error=False,
        num_turns=1,
        session_id="s",
        result=text_answer,
        structured_output=output,
    )


@pytest.mark.parametrize(
    "output",
    [
        {"output": FIXED},  # as asked: wrapped
        FIXED,  # the wrapper dropped
        json.dumps({"output": FIXED}),  # a JSON string instead of an object (upstream flake)
    ],
)
def test_structured_output_variants_that_still_validate(output: object) -> None:
    fmt = OutputFormat.for_schema("FixerResult")

    parsed = parse_structured("FixerResult", fmt, structured_result(output))

    assert parsed == FixerResult(FixReport.model_validate(FIXED))


def test_an_object_schema_also_accepts_the_upstream_output_wrapper() -> None:
    review = {"schema_version": "v1", "findings": [], "checks_run": ["ruff"]}
    fmt = OutputFormat.for_schema("ReviewOutput")

    with_wrapper = parse_structured("ReviewOutput", fmt, structured_result({"output": review}))

    assert with_wrapper.model_dump(exclude_none=True)["findings"] == []


@pytest.mark.parametrize(
    ("output", "text_answer", "error", "problem"),
    [
        ({"output": {"summary": "no files"}}, "", ValueError, "does not match FixerResult"),
        ("{not json", "", ValueError, "not JSON"),
        (None, "", LookupError, "no structured output"),
        (None, "Done!", LookupError, "only prose: 'Done!'"),
    ],
)
def test_structured_output_that_does_not_validate_is_refused(
    output: object, text_answer: str, error: type[Exception], problem: str
) -> None:
    fmt = OutputFormat.for_schema("FixerResult")

    with pytest.raises(error, match=problem):
        parse_structured("FixerResult", fmt, structured_result(output, text_answer))


def test_a_union_schema_is_wrapped_into_an_object() -> None:
    fixer = OutputFormat.for_schema("FixerResult")
    review = OutputFormat.for_schema("ReviewOutput")

    assert fixer.wrapped and fixer.schema["type"] == "object"
    assert fixer.schema["required"] == ["output"]
    assert "$defs" in fixer.schema and "$defs" not in fixer.schema["properties"]["output"]
    assert not review.wrapped
    assert fixer.option() == {"type": "json_schema", "schema": fixer.schema}


ROLES = ("wave-runner", "executor", "verifier", "reviewer", "fixer", "fix-loop")


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.cli
def test_each_role_is_sent_its_rendered_document(
    pack: Pack, worktree: Path, role: str, record_property: Any
) -> None:
    variables = json.loads((RENDER_VARS / f"{role}.vars.json").read_text())
    request = build_request(pack, role, variables, f"Run as {role}.", worktree)
    with MessagesServer([text("stopping here")]) as server:
        outcome = ClaudeBackend(env=server.env()).dispatch(request)

    sent = server.conversation[0].system
    assert request.system_prompt in sent
    record_property("system_prompt_chars", len(sent))
    print(f"{role}: role prompt {len(request.system_prompt)} chars, sent {len(sent)} chars")
    assert not outcome.ok, "a role with a schema that answers in prose is not a pass"


@pytest.mark.cli
def test_a_worktree_under_a_claude_folder_is_still_editable_within_scope(
    pack: Pack, tmp_path: Path
) -> None:
    """The CLI asks before any write under `.claude/`, where workflows keep their worktrees;
    headless, the permission callback answers: granted tool, in scope, so allowed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "other.py").write_text("VALUE = 1\n")
    git(repo, "add", "calc.py", "other.py")
    git(repo, "commit", "-q", "-m", "initial")
    tree = repo / ".claude" / "worktrees" / "rf-01"
    git(repo, "worktree", "add", "-q", "-b", "fixloop/rf-01", str(tree))
    request = AgentRequest(
        role="fixer",
        system_prompt="You fix.",
        task="fix",
        tools=("Read", "Edit"),
        model="sonnet",
        output_schema="FixerResult",
        cwd=tree,
        writable=("calc.py",),
    )
    script = [
        tool_use("Read", {"file_path": "calc.py"}),
        tool_use("Read", {"file_path": "other.py"}),
        tool_use("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        tool_use("Edit", {"file_path": "other.py", "old_string": "1", "new_string": "2"}),
        structured({"output": {"files_changed": ["calc.py"], "summary": "fixed"}}),
    ]

    outcome, _ = run(script, request)

    assert outcome.ok, outcome.detail
    assert "a + b" in (tree / "calc.py").read_text()
    assert (tree / "other.py").read_text() == "VALUE = 1\n"
    assert [(d.tool, d.path) for d in outcome.denied] == [("Edit", "other.py")]


def stand_in_cli(tmp_path: Path, body: str, mode: int = 0o755) -> Path:
    """A program in the CLI's place that fails the way a broken install or a crash would."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("body", "reason", "detail"),
    [
        pytest.param(
            "read line\necho 'panic: out of cheese' >&2\nexit 3\n",
            StopReason.CRASH,
            "Claude Code exited with 3 (stderr: panic: out of cheese)",
            id="process error",
        ),
        pytest.param(
            "",
            StopReason.BACKEND_ERROR,
            "Permission denied",
            id="not executable",
        ),
        pytest.param(
            'echo \'{"type": "system", "subtype": "init"\'\nsleep 1\n',
            StopReason.CRASH,
            "unreadable output from Claude Code",
            id="JSON decode error",
        ),
    ],
)
def test_a_failing_cli_is_an_inconclusive_outcome_not_a_traceback(
    pack: Pack, worktree: Path, body: str, reason: StopReason, detail: str
) -> None:
    cli = stand_in_cli(worktree.parent, body, 0o755 if body else 0o644)

    outcome = ClaudeBackend(cli_path=cli).dispatch(fixer_request(pack, worktree))

    assert outcome.status is OutcomeStatus.INCONCLUSIVE
    assert outcome.reason is reason
    assert detail in outcome.detail
    assert "\n" not in outcome.detail


@pytest.mark.cli
def test_the_trace_records_usage_cost_turns_and_duration(
    pack: Pack, worktree: Path, tmp_path: Path
) -> None:
    calc = str(worktree / "src" / "calc.py")
    script = ScriptReplay(
        {
            "fixer": {
                "edits": [{"path": calc, "old": "a - b", "new": "a + b"}],
                "output": FIXED,
            }
        }
    )
    finding = {"id": "CR-01", "title": "add subtracts"}
    inputs = {"finding": finding, "files": ["src/calc.py"], "worktree": str(worktree)}
    with MessagesServer(script) as server:
        seen: list[Event] = []
        dispatcher = Dispatcher(pack, ClaudeBackend(env=server.env()), EventStream(seen.append))
        outcome = dispatcher.call("fixer", inputs, "Fix CR-01.", worktree, writable=["src/calc.py"])

    assert outcome.ok, outcome.detail
    # The call's record is its one `agent` event (the live display's progress events aside).
    (event,) = [event.to_json() for event in seen if event.kind is EventKind.AGENT]
    assert event["key"] == "fixer" and event["outcome"] == "ok"
    assert event["turns"] == outcome.usage.turns >= 3
    assert event["cost_usd"] == outcome.usage.cost_usd > 0
    assert event["input_tokens"] > 0 and event["output_tokens"] > 0
    assert event["elapsed_s"] > 0


@pytest.mark.cli
def test_parallel_calls_from_threads_each_get_their_own_answer(tmp_path: Path) -> None:
    trees = []
    for name in ("task-1", "task-2", "task-3"):
        tree = tmp_path / name
        tree.mkdir()
        (tree / "app.py").write_text(f"NAME = 'old {name}'\n")
        trees.append(tree)
    script = ScriptReplay(
        {
            f"executor/{tree.name}": {
                "edits": [{"path": "app.py", "old": "old", "new": "new"}],
                "output": {"id": tree.name, "status": "done", "filesModified": ["app.py"]},
            }
            for tree in trees
        }
    )

    def execute(tree: Path) -> Any:
        request = AgentRequest(
            role="executor",
            system_prompt="You implement one task.",
            task=f"Do {tree.name}.",
            tools=("Read", "Edit"),
            model="sonnet",
            output_schema="ImplResult",
            cwd=tree,
            writable=("app.py",),
            key=f"executor/{tree.name}",
        )
        return backend.dispatch(request)

    with MessagesServer(script) as server:
        backend = ClaudeBackend(env=server.env())
        with ThreadPoolExecutor(max_workers=3) as pool:
            outcomes = list(pool.map(execute, trees))

    assert [o.ok for o in outcomes] == [True, True, True], [o.detail for o in outcomes]
    assert [o.output.id for o in outcomes] == ["task-1", "task-2", "task-3"]
    for tree in trees:
        assert (tree / "app.py").read_text() == f"NAME = 'new {tree.name}'\n"
    assert script.unplayed() == []


needs_sandbox = pytest.mark.needs("bwrap", "socat")  # the CLI's bash sandbox


@pytest.mark.cli
@needs_sandbox
def test_sandboxed_bash_cannot_write_outside_the_worktree(pack: Pack, worktree: Path) -> None:
    outside = worktree.parent / "escaped.txt"
    script = [
        tool_use("Bash", {"command": f"echo inside > notes.txt; echo out > {outside}; true"}),
        tool_use("Bash", {"command": "python3 -c 'print(6 * 7)'"}),
        structured({"output": FIXED}),
    ]

    outcome, server = run(script, fixer_request(pack, worktree), sandbox_bash=True)

    assert outcome.ok, outcome.detail
    assert (worktree / "notes.txt").read_text() == "inside\n"
    assert not outside.exists()
    refused, ran = server.conversation[-1].tool_results()
    assert "Read-only file system" in str(refused["content"])
    assert "42" in str(ran["content"]), "ordinary commands still run in the sandbox"
    assert not (worktree / ".claude").exists(), "the sandbox's scratch folder was cleaned up"


@pytest.mark.cli
@needs_sandbox
def test_the_sandbox_leaves_an_existing_claude_folder_alone(pack: Pack, worktree: Path) -> None:
    (worktree / ".claude").mkdir()
    (worktree / ".claude" / "settings.json").write_text("{}")
    script = [tool_use("Bash", {"command": "echo hi > notes.txt"}), structured({"output": FIXED})]

    outcome, _ = run(script, fixer_request(pack, worktree), sandbox_bash=True)

    assert outcome.ok, outcome.detail
    assert sorted(p.name for p in (worktree / ".claude").iterdir()) == ["settings.json"]


def test_the_sandbox_is_strict_and_does_not_approve_commands_by_itself() -> None:
    settings = sandbox_settings()

    assert settings["enabled"] is True
    assert settings["allowUnsandboxedCommands"] is False
    assert settings["autoAllowBashIfSandboxed"] is False


@pytest.mark.cli
def test_each_turn_is_told_to_the_live_display_as_it_happens(pack: Pack, worktree: Path) -> None:
    calc = worktree / "src" / "calc.py"
    script = [
        tool_use("Read", {"file_path": str(calc)}),
        tool_use(
            "Edit",
            {"file_path": str(calc), "old_string": "return a - b", "new_string": "return a + b"},
        ),
        structured({"output": FIXED}, input_tokens=2000, output_tokens=300),
    ]
    seen: list[Usage] = []
    outcome, _ = run(script, fixer_request(pack, worktree, on_progress=seen.append))
    assert outcome.ok, outcome.detail
    turns = [usage.turns for usage in seen]
    assert turns == sorted(turns) and turns[-1] >= 3, turns  # one more per assistant turn
    tokens = [usage.input_tokens + usage.output_tokens for usage in seen]
    assert tokens == sorted(tokens) and tokens[-1] >= 2000, tokens
    assert tokens[-1] <= outcome.usage.input_tokens + outcome.usage.output_tokens
