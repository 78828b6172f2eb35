"""The ids of the rules that loading and validating a pack report, with what each means.

Kept apart from the rules themselves so that the checker can know every id (SARIF's rule list,
the ids a contract may not take, `select`/`ignore`) without importing the pack model.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

PACK_RULES: Mapping[str, str] = MappingProxyType(
    {
        "frontmatter": "frontmatter that does not parse or does not fit its document's keys",
        "manifest": "a plugin manifest that is missing, does not parse or does not fit",
        "manifest-drift": "copies of the manifest that disagree",
        "unknown-key": "a frontmatter key neither Claude Code nor fixloop knows",
        "duplicate-name": "two documents of one kind with the same name",
        "name-mismatch": "an agent whose name differs from its file name",
        "unknown-reference": "a reference to an agent, command, workflow or file that is not there",
        "relative-path": "a '../' path that breaks once Claude Code copies the plugin",
        "template-input": "declared inputs and the variables a body uses disagree",
        "template-syntax": "jinja2 statements in a body Claude Code reads raw",
        "template": "a body that is not a valid template",
        "unknown-schema": "an output schema fixloop does not know",
        "size-budget": "an agent document over its size budget",
        "encoding": "a document that is not UTF-8 text",
        "io": "a document that cannot be read",
        "render": "a prompt that cannot be rendered with the inputs given",
        "pack": "a pack that cannot be found",
        "unknown-agent": "an agent name the pack does not define",
        "unknown-workflow": "a workflow name the pack does not define",
        "hooks": "a hooks/hooks.json Claude Code refuses or partly ignores",
        "mcp": "an .mcp.json Claude Code refuses",
        "orphan-sidecar": "a .contracts.yaml file whose document is not next to it",
        "config": "fixloop.toml or [tool.fixloop] settings that do not load",
    }
)
