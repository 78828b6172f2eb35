"""A small, valid pack written to a temporary folder; tests break one thing at a time."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

MANIFEST = {
    "name": "mini",
    "version": "1.0.0",
    "description": "A tiny pack for tests.",
    "author": {"name": "tests"},
}

AGENT = """---
name: {name}
description: Fixes one finding.
tools: Read, Edit, Bash(git diff:*)
model: sonnet
color: green
fixloop:
  inputs:
    finding: {{type: object, description: The finding.}}
    worktree: {{type: string}}
  output: FixerResult
---

# Role

Fix the finding.

<inputs>
finding: {{{{ finding }}}}
worktree: {{{{ worktree }}}}
</inputs>
"""

COMMAND = """---
description: Fix findings.
argument-hint: "<findings.json>"
fixloop:
  workflow: fix
  agents: [fixer]
---

Read ${CLAUDE_PLUGIN_ROOT}/workflows/fix.md and dispatch mini:fixer for $ARGUMENTS.
"""

WORKFLOW = """---
name: fix
description: Fix things.
agents: [fixer]
---

## Stage {#stage}

```bash
git add -- "$FILE"
```
"""


class PackBuilder:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def manifest(self, data: Mapping[str, object]) -> None:
        text = json.dumps(data, indent=2)
        self.write("plugin.json", text)
        self.write(".claude-plugin/plugin.json", text)


@pytest.fixture
def mini_pack(tmp_path: Path) -> PackBuilder:
    builder = PackBuilder(tmp_path / "pack")
    builder.manifest(MANIFEST)
    builder.write("fixloop.toml", 'profile = "fixloop"\n')  # a fixloop-style pack: house rules
    builder.write("agents/fixer.md", AGENT.format(name="fixer"))
    builder.write("commands/fix.md", COMMAND)
    builder.write("workflows/fix.md", WORKFLOW)
    return builder
