from __future__ import annotations

from pathlib import Path

from fixloop.documents.blocks import StepStyle, parse_markdown
from fixloop.documents.source import parse_document

HEADING_STYLE = """---
name: wf
---

# Workflow

## Set up the worktree {#setup}

```bash
git worktree add -b "$b" "$wt" "$base"
```

### Notes

~~~sh
# not a heading
```
still inside the tilde fence
~~~

## Prose only

```python
print("no step owns me")
```

## Clean up {#cleanup}

```bash
rm -f "$sentinel"
```
"""

XML_STYLE = """# Foreign pack

<step name="setup_worktree">
```bash
git worktree add "$wt"
```
</step>

Between steps.

```bash
echo orphan
```

<step name="cleanup">
**Cleanup tail**
```bash
git worktree remove "$wt"
```
</step>
"""


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_blocks_carry_exact_file_lines_and_owning_step() -> None:
    doc = parse_markdown(parse_document(HEADING_STYLE, Path("wf.md")))
    lines = _lines(HEADING_STYLE)
    assert [b.step for b in doc.blocks] == ["setup", "setup", None, "cleanup"]
    for block in doc.blocks:
        assert lines[block.fence_line - 1].lstrip().startswith(("```", "~~~"))
        assert lines[block.end_line - 1].lstrip().startswith(("```", "~~~"))
        assert lines[block.content_line - 1] == block.content.splitlines()[0]
    assert lines[doc.blocks[0].content_line - 1] == 'git worktree add -b "$b" "$wt" "$base"'


def test_fences_inside_fences_and_headings_inside_code_are_opaque() -> None:
    doc = parse_markdown(parse_document(HEADING_STYLE, Path("wf.md")))
    tilde = doc.blocks[1]
    assert tilde.lang == "sh"
    assert "still inside the tilde fence" in tilde.content
    assert [h.title for h in doc.headings] == [
        "Workflow",
        "Set up the worktree",
        "Notes",
        "Prose only",
        "Clean up",
    ]


def test_sections_and_steps() -> None:
    doc = parse_markdown(parse_document(HEADING_STYLE, Path("wf.md")))
    assert doc.blocks[1].section == ("Workflow", "Set up the worktree", "Notes")
    setup = doc.step("setup")
    assert setup is not None
    assert setup.title == "Set up the worktree"
    assert len(setup.blocks) == 2
    assert doc.step("missing") is None
    assert [b.lang for b in doc.shell_blocks] == ["bash", "sh", "bash"]


def test_xml_style_steps_and_fences_directly_after_tags() -> None:
    doc = parse_markdown(parse_document(XML_STYLE, Path("x.md")), StepStyle.XML)
    assert [s.name for s in doc.steps] == ["setup_worktree", "cleanup"]
    assert [b.step for b in doc.blocks] == ["setup_worktree", None, "cleanup"]
    assert "git worktree remove" in doc.blocks[2].content


def test_unclosed_fence_is_reported_as_unclosed() -> None:
    text = "## Step {#s}\n\n```bash\necho never closed\n"
    doc = parse_markdown(parse_document(text, Path("u.md")))
    (block,) = doc.blocks
    assert not block.closed
    assert block.step == "s"
