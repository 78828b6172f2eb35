"""The tool names, model aliases and keys fixloop judges by are the bundled CLI's own."""

from __future__ import annotations

import pytest

from fixloop.documents import claude_code_names
from fixloop.extras.testing.claude_code_facts import TARGET, read_facts, render

pytestmark = pytest.mark.cli


def test_the_committed_names_are_what_the_bundled_cli_holds() -> None:
    facts = read_facts()
    assert TARGET.read_text(encoding="utf-8") == render(facts), (
        "stale: run `python -m fixloop.extras.testing.claude_code_facts`"
    )
    assert {"TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "Read", "Bash"} <= facts.tools
    assert {"opus", "sonnet", "haiku", "opusplan"} <= facts.model_aliases
    assert {"name", "description", "tools", "model", "maxTurns"} <= facts.agent_keys
    assert {"argument-hint", "allowed-tools"} <= facts.frontmatter_keys
    assert facts.version == claude_code_names.CLAUDE_CODE_VERSION
