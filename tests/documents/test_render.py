"""Rendered prompts of the shipped agents against golden files.

Regenerate after an intended change: `.venv/bin/python -m pytest tests/documents/test_render.py
--update-goldens`, then read `git diff tests/documents/goldens`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT, Golden

from fixloop.diagnostics import FixloopError
from fixloop.documents.inputs import InputError, coerce_inputs
from fixloop.documents.pack import load_pack
from fixloop.documents.render import render_template, template_variables
from fixloop.documents.source import parse_document

GOLDENS = Path(__file__).parent / "goldens" / "render"
PACK, _ = load_pack(REPO_ROOT, REPO_ROOT)


def test_every_agent_has_a_golden_input_file() -> None:
    assert sorted(p.name.removesuffix(".vars.json") for p in GOLDENS.glob("*.vars.json")) == sorted(
        PACK.agents
    )


@pytest.mark.parametrize("name", sorted(PACK.agents))
def test_rendered_prompt_matches_golden(name: str, golden: Golden) -> None:
    agent = PACK.agents[name]
    raw = json.loads((GOLDENS / f"{name}.vars.json").read_text())
    values = coerce_inputs(agent.spec.fixloop.inputs, raw, from_text=False)
    golden.check(GOLDENS / f"{name}.txt", render_template(agent.source, values))


def _doc(body: str) -> object:
    return parse_document(f"---\nname: a\n---\n\n{body}", Path("agents/a.md"))


def test_missing_input_names_document_and_variable() -> None:
    source = parse_document("---\nname: a\n---\n\nHello {{ who }} and {{ what }}\n", Path("a.md"))
    with pytest.raises(FixloopError) as caught:
        render_template(source, {"who": "x"})
    assert caught.value.diagnostics[0].format() == "a.md:5:1: render: missing input 'what'"


def test_objects_and_lists_render_as_json_not_python() -> None:
    source = parse_document("{{ finding }}|{{ files }}|{{ flag }}", Path("a.md"))
    text = render_template(source, {"finding": {"ok": True}, "files": ["a"], "flag": True})
    assert text == '{\n  "ok": true\n}|[\n  "a"\n]|True'


def test_template_syntax_error_is_located() -> None:
    source = parse_document("---\nname: a\n---\nline\n{{ broken \n", Path("a.md"))
    with pytest.raises(FixloopError) as caught:
        template_variables(source)
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.path, diagnostic.rule) == ("a.md", "template")
    assert diagnostic.line >= 5


def test_values_are_data_not_templates() -> None:
    source = parse_document("{{ title }}", Path("a.md"))
    assert render_template(source, {"title": "{{ 7*7 }} $(rm -rf ~)"}) == "{{ 7*7 }} $(rm -rf ~)"


def test_coerce_inputs_types_and_patterns() -> None:
    fixer = PACK.agents["fixer"].spec.fixloop.inputs
    with pytest.raises(InputError, match="'finding': expected object as JSON"):
        coerce_inputs(
            fixer, {"finding": "{not json", "files": "[]", "worktree": "w"}, from_text=True
        )
    with pytest.raises(InputError, match="'ghost': not a declared input"):
        coerce_inputs(fixer, {"ghost": "1"}, from_text=True)
    with pytest.raises(InputError, match="'finding': required object input is missing"):
        coerce_inputs(fixer, {"files": "[]", "worktree": "w"}, from_text=True)
    with pytest.raises(InputError, match="'files': expected list, got dict"):
        coerce_inputs(fixer, {"finding": "{}", "files": "{}", "worktree": "w"}, from_text=True)
