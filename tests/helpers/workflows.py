"""Workflow documents written by a test, loaded exactly as the runtime loads them."""

from __future__ import annotations

from pathlib import Path

from fixloop.documents.pack import WorkflowDoc, validate_spec
from fixloop.documents.source import load_document
from fixloop.documents.specs import WorkflowSpec


def write_workflow(folder: Path, text: str, name: str = "demo") -> WorkflowDoc:
    """Write `text` to `folder/workflows/NAME.md` and load it; fails the test if it is invalid."""
    path = folder / "workflows" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    source = load_document(path, base=folder)
    spec, problems = validate_spec(WorkflowSpec, source, "frontmatter")
    assert spec is not None, [p.format() for p in problems]
    return WorkflowDoc(spec, source)
