"""The review-fix document as a program: its steps are valid bash that read only what is set.

GSD's own document tests compared text and missed a step exporting `REVIEW_PATH` while its script
read `FIX_REPORT_PATH`. Here each step's bash is parsed (tree-sitter-bash): every variable it
expands must be assigned in the step, be a declared input of the document, or be one the runtime
sets; and `bash -n` must accept it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest
import tree_sitter_bash
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import pack
from tree_sitter import Language, Node, Parser

from fixloop.cli.main import main
from fixloop.documents.blocks import Step

RUNTIME = {"FIXLOOP_OUTPUT", "FIXLOOP_RUN_ID", "FIXLOOP_RUN_DIR", "FIXLOOP_STEP", "TMPDIR"}
RUNTIME |= {"FIXLOOP_LIB", "FIXLOOP_PYTHON"}  # the step library and its interpreter
STEPS = {
    "parse-findings",
    "check-review-status",
    "resume-interrupted",
    "fix-one-finding",
    "syntax-check",
    "write-fix-report",
    "auto-re-review",
    "backup-iteration",
    "check-fix-report",
}


def _bash(step: Step) -> str:
    return "".join(block.content for block in step.blocks if block.lang == "bash")


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _text(node: Node | None) -> str:
    return node.text.decode() if node is not None and node.text is not None else ""


def _variables(script: str) -> tuple[set[str], set[str]]:
    """(expanded, assigned) variable names of a bash script."""
    tree = Parser(Language(tree_sitter_bash.language())).parse(script.encode())
    expanded: set[str] = set()
    assigned: set[str] = set()
    for node in _walk(tree.root_node):
        if node.type in ("simple_expansion", "expansion"):
            expanded |= {_text(c) for c in node.children if c.type == "variable_name"}
        elif node.type == "variable_assignment":
            assigned.add(_text(node.child_by_field_name("name")))
        elif node.type == "for_statement":
            assigned.add(_text(node.child_by_field_name("variable")))
        elif node.type == "command" and _text(node.child_by_field_name("name")) == "read":
            words = [c for c in node.children if c.type == "word"]
            assigned |= {_text(words[-1])} if words else set()
    return {name for name in expanded if not name.isdigit()}, assigned


def test_the_document_has_its_steps() -> None:
    flow = pack().workflow("review-fix")
    assert {step.name for step in flow.markdown().steps} == STEPS


def test_every_step_reads_only_assigned_declared_or_runtime_variables() -> None:
    flow = pack().workflow("review-fix")
    declared = set(flow.spec.inputs)
    unknown: dict[str, set[str]] = {}
    for step in flow.markdown().steps:
        expanded, assigned = _variables(_bash(step))
        missing = expanded - assigned - declared - RUNTIME
        if missing:
            unknown[step.name] = missing
    assert unknown == {}


def test_the_checker_sees_what_a_misnamed_variable_looks_like() -> None:
    expanded, assigned = _variables('x="$REVIEW_PATH"\nprintf %s "$FIX_REPORT_PATHS" "$x"\n')
    assert expanded - assigned == {"REVIEW_PATH", "FIX_REPORT_PATHS"}


def test_every_step_is_valid_bash() -> None:
    for step in pack().workflow("review-fix").markdown().steps:
        script = _bash(step)
        if script:
            done = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
            assert done.returncode == 0, f"{step.name}: {done.stderr}"


def test_every_output_a_step_writes_is_declared() -> None:
    flow = pack().workflow("review-fix")
    written = {
        match.group(1)
        for step in flow.markdown().steps
        for match in re.finditer(
            r"(?:printf '|fixloop_output )([A-Z][A-Z0-9_]*)(?:=|<<| )", _bash(step)
        )
    }
    assert written == set(flow.spec.outputs)


REPORT = "---\nphase: 02-cart\n{status}iteration: 1\n---\n\n# Phase 02: Code Review Fix Report\n"


@pytest.mark.parametrize(
    ("frontmatter", "reported"),
    [
        ("status: all_fixed\n", "all_fixed"),
        ('status: "partial"\n', "partial"),
        ("status: none_fixed\r\n", "none_fixed"),
        ("status: fixed_everything\n", None),  # not one of the three
        ("", None),  # no status at all
    ],
)
def test_check_fix_report_passes_only_a_valid_status(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str], frontmatter: str, reported: str | None
) -> None:
    """The step the document runs before it commits REVIEW-FIX.md, run as `fixloop step run`:
    a report without a valid status fails it (exit 1), so it is not committed."""
    report = user_repo.path / "REVIEW-FIX.md"
    report.write_text(REPORT.format(status=frontmatter), encoding="utf-8")
    argv = ["step", "run", "review-fix", "check-fix-report", "--repo", str(user_repo.path)]
    code = main([*argv, "--input", "FIX_REPORT_PATH=REVIEW-FIX.md"])
    out, err = capsys.readouterr()
    if reported is None:
        assert code == 1 and "REVIEW-FIX.md has no valid status" in err
        assert "REPORT_STATUS" not in out
    else:
        assert code == 0 and out.splitlines() == [f"REPORT_STATUS={reported}"], (out, err)
