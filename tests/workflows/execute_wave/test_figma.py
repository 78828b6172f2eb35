"""Figma's MCP tools reach the roles of design tasks when the user has such a server configured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.workflows.execute_wave.conftest import Wave
from tests.workflows.execute_wave.scripts import implement, score, scores

from fixloop.agents.backend import AgentRequest
from fixloop.agents.claude import ClaudeBackend, _Call
from fixloop.agents.scope import WriteScope
from fixloop.diagnostics import FixloopError

FIGMA_TOOLS = ("mcp__figma__get_design_context", "mcp__figma__get_screenshot")
SERVE = 'exec python3 -m http.server "$PORT" --bind "$HOST"'


def figma_task(wave: Wave) -> None:
    wave.write_tasks(
        {
            "tasks": [
                {"id": 1, "name": "login page", "figmaUrl": "https://www.figma.com/design/k/x"},
                {"id": 2, "name": "logic"},
            ],
            "devServerCommand": SERVE,
        }
    )


def test_without_a_figma_server_a_figma_only_task_is_refused_up_front(wave: Wave) -> None:
    figma_task(wave)
    with pytest.raises(FixloopError) as caught:
        wave.run({})
    assert "task 1: figmaUrl: no Figma MCP server is configured" in str(caught.value)
    assert caught.value.exit_code == 2 and not (wave.repo.path / ".git/fixloop").exists()


@pytest.mark.slow
def test_the_projects_figma_server_is_handed_to_design_roles_only(wave: Wave) -> None:
    config = wave.repo.path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"figma": {"type": "http", "url": "http://x"}}}))
    figma_task(wave)
    script = {
        "executor/1/implement": implement(1, {"page.html": "<p>login</p>"}),
        "executor/2/implement": implement(2, {"src/two.py": "x = 2\n"}),
        "verifier/1/verify": score(1, scores("design", 9), kind="design"),
        "reviewer/2/verify": score(2, scores("logic", 9)),
    }
    result = wave.run(script)
    assert result.exit_code == 0, result.to_json()
    assert wave.backend is not None
    calls = {call.key: call for call in wave.backend.calls}
    for key in ("executor/1/implement", "verifier/1/verify"):
        assert set(FIGMA_TOOLS) <= set(calls[key].tools), key
        assert calls[key].mcp_config == str(config.resolve())
    for key in ("executor/2/implement", "reviewer/2/verify"):
        assert not any(tool.startswith("mcp__") for tool in calls[key].tools)
        assert calls[key].mcp_config is None
    prompt = calls["verifier/1/verify"].system_prompt
    assert "the Figma design https://www.figma.com/design/k/x" in prompt


def test_the_claude_backend_passes_the_server_and_its_tools_to_claude_code(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"figma": {"type": "http", "url": "http://x"}}}))
    request = AgentRequest(
        role="executor",
        system_prompt="x",
        task="y",
        tools=("Read", "Edit", *FIGMA_TOOLS),
        model="opus",
        output_schema="ImplResult",
        cwd=tmp_path,
        mcp_config=str(config),
    )
    backend = ClaudeBackend(sandbox_bash=False)
    options = backend._options(request, _Call(WriteScope.create(tmp_path)))
    assert options.mcp_servers == {"figma": {"type": "http", "url": "http://x"}}
    assert set(FIGMA_TOOLS) <= set(options.allowed_tools)
    assert options.tools == ["Edit", "Read"]
