from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.packs import AGENT, MANIFEST, PackBuilder

from fixloop.diagnostics import Severity
from fixloop.documents.validate import validate_pack
from fixloop.schemas import registry


def _errors(builder: PackBuilder) -> list[str]:
    _, diagnostics = validate_pack(builder.root, builder.root, known_outputs=registry.is_known)
    return [d.format() for d in diagnostics if d.severity is Severity.ERROR]


def test_the_mini_pack_is_valid(mini_pack: PackBuilder) -> None:
    assert _errors(mini_pack) == []


def _replace(builder: PackBuilder, relative: str, old: str, new: str) -> None:
    path = builder.root / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("color: green", "color: teal", "agents/fixer.md:6:1: frontmatter: color: unknown value"),
        ("model: sonnet", "model: gpt-9", "agents/fixer.md:5:1: frontmatter: model: unknown model"),
        (
            "tools: Read, Edit",
            "tools: Read, Frobnicate",
            "agents/fixer.md:4:1: frontmatter: tools: 'Frobnicate': no such tool in Claude Code",
        ),
        (
            "description: Fixes one finding.\n",
            "",
            "agents/fixer.md:1:1: frontmatter: no description: it tells Claude Code when to use",
        ),
        ("name: fixer", "name: mini:fixer", "agents/fixer.md:2:1: frontmatter: name: must not"),
        (
            "color: green",
            "color: [green",
            "agents/fixer.md:7:8: frontmatter: invalid YAML",
        ),
        (
            "  output: FixerResult",
            "  output: NoSuchSchema",
            "agents/fixer.md:11:1: unknown-schema: fixloop.output: no schema named 'NoSuchSchema'",
        ),
        (
            "    worktree: {type: string}",
            "    worktree: {type: string}\n    unused: {type: string}",
            "agents/fixer.md:11:1: template-input: fixloop.inputs.unused: declared but never used",
        ),
        (
            "worktree: {{ worktree }}",
            "worktree: {{ worktree }} {{ branch }}",
            "agents/fixer.md:8:1: template-input: fixloop.inputs: the body uses 'branch'",
        ),
        (
            "    finding: {type: object, description: The finding.}",
            "    finding: {type: objet}",
            "agents/fixer.md:9:1: frontmatter: fixloop.inputs.finding.type: unknown value 'objet'",
        ),
        (
            "  output: FixerResult",
            "  outptu: FixerResult",
            "agents/fixer.md:11:1: frontmatter: fixloop: unknown key 'outptu' (did you mean 'outp",
        ),
        (
            "Fix the finding.",
            "Fix {% if x %}the{% endif %} finding.",
            "agents/fixer.md:16:1: template-syntax:",
        ),
    ],
)
def test_each_bad_agent_input_is_one_located_error(
    mini_pack: PackBuilder, old: str, new: str, expected: str
) -> None:
    _replace(mini_pack, "agents/fixer.md", old, new)
    errors = _errors(mini_pack)
    assert any(error.startswith(expected) for error in errors), errors


def test_duplicate_agent_name(mini_pack: PackBuilder) -> None:
    mini_pack.write("agents/fixer-copy.md", AGENT.format(name="fixer"))
    errors = _errors(mini_pack)
    # Documents load in name order, so the second definition is the one in fixer.md.
    assert (
        "agents/fixer.md:2:1: duplicate-name: name: agent 'fixer' is already defined in "
        "agents/fixer-copy.md" in errors
    ), errors


def test_command_naming_a_missing_agent_or_workflow(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "commands/fix.md", "agents: [fixer]", "agents: [fixer, ghost]")
    _replace(mini_pack, "commands/fix.md", "workflow: fix", "workflow: fixx")
    _replace(mini_pack, "commands/fix.md", "mini:fixer", "mini:fixr")
    errors = _errors(mini_pack)
    assert "commands/fix.md:5:1: unknown-reference: fixloop.workflow: no workflow named 'fixx'" in (
        errors
    )
    assert "commands/fix.md:6:1: unknown-reference: fixloop.agents: no agent named 'ghost'" in (
        errors
    )
    assert any(e.startswith("commands/fix.md:9:1: unknown-reference: 'mini:fixr'") for e in errors)


def test_workflow_naming_a_missing_agent(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "workflows/fix.md", "agents: [fixer]", "agents:\n  - fixer\n  - ghost")
    assert "workflows/fix.md:6:1: unknown-reference: agents: no agent named 'ghost'" in (
        _errors(mini_pack)
    )


def test_plugin_root_reference_to_a_missing_file(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "commands/fix.md", "workflows/fix.md", "workflows/gone.md")
    assert any("points to a file that is not in the pack" in e for e in _errors(mini_pack))


def test_manifest_drift_and_marketplace(mini_pack: PackBuilder) -> None:
    changed = dict(MANIFEST, version="2.0.0")
    mini_pack.write("plugin.json", json.dumps(changed))
    mini_pack.write(
        ".claude-plugin/marketplace.json",
        json.dumps(
            {
                "name": "m",
                "owner": {"name": "o"},
                "plugins": [{"name": "mini", "source": "./", "version": "1.0.0"}],
            }
        ),
    )
    errors = _errors(mini_pack)
    assert (
        ".claude-plugin/plugin.json:1:1: manifest-drift: differs from plugin.json "
        "(the source of truth)" in errors
    )
    _, everything = validate_pack(mini_pack.root, mini_pack.root)
    drift = [d for d in everything if "plugins[mini].version differs" in d.message]
    assert [d.severity for d in drift] == [Severity.WARNING]


def test_manifest_errors(mini_pack: PackBuilder) -> None:
    mini_pack.write("plugin.json", '{"name": "Bad Name",\n "version": 1}')
    errors = _errors(mini_pack)
    assert any(
        e.startswith("plugin.json:1:1: manifest: name: must not contain whitespace") for e in errors
    )
    assert any("manifest: required key 'description' is missing" in e for e in errors)
    mini_pack.write("plugin.json", '{"name": ')
    assert any(e.startswith("plugin.json:1:10: manifest: invalid JSON") for e in _errors(mini_pack))


def test_agent_size_budget(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "agents/fixer.md", "Fix the finding.", "Fix the finding.\n" * 250)
    assert any("size-budget" in e for e in _errors(mini_pack))


def test_unknown_top_level_key_is_only_a_warning(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "agents/fixer.md", "color: green", "color: green\ncolour: green")
    _, diagnostics = validate_pack(mini_pack.root, mini_pack.root)
    (warning,) = [d for d in diagnostics if d.rule == "unknown-key"]
    assert warning.severity is Severity.WARNING
    assert warning.line == 7


def test_the_shipped_pack_is_valid() -> None:
    root = Path(__file__).resolve().parents[2]
    _, diagnostics = validate_pack(root, root, known_outputs=registry.is_known)
    assert [d.format() for d in diagnostics] == []


def test_a_broken_agent_is_one_root_cause_not_a_cascade(mini_pack: PackBuilder) -> None:
    _replace(mini_pack, "agents/fixer.md", "color: green", "color: [green")
    pack, diagnostics = validate_pack(mini_pack.root, mini_pack.root)
    errors = [d.format() for d in diagnostics if d.severity is Severity.ERROR]
    assert errors == [
        "agents/fixer.md:7:8: frontmatter: invalid YAML: did not find expected ',' or ']'"
    ]
    # The command and the workflow name the agent three times: folded, counted, not listed.
    assert pack.folded == 3
