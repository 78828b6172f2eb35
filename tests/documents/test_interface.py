"""Step interfaces: the `yaml step` block under a step's heading, read and checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Golden
from tests.helpers.workflows import write_workflow

from fixloop.documents.blocks import parse_markdown
from fixloop.documents.interface import parse_interface
from fixloop.documents.interface_rules import workflow_interface_diagnostics
from fixloop.documents.source import parse_document

DATA = Path(__file__).parent / "data"
GOLDENS = Path(__file__).parent / "goldens"


def test_a_step_carries_its_interface_with_the_lines_of_its_names() -> None:
    source = parse_document((DATA / "interfaces.md").read_text(), DATA / "interfaces.md", DATA)
    good = parse_markdown(source).step("good")
    assert good is not None and good.interface is not None
    interface = good.interface
    assert interface.input_names == ("RUN_ID", "PATHS_FILE", "TAG")
    assert interface.required_names == {"RUN_ID", "PATHS_FILE"}
    assert interface.output_names == ("COMMIT",)
    assert interface.one_line() == "in: RUN_ID, PATHS_FILE, [TAG]  out: COMMIT"
    [first, second] = interface.inputs
    assert (first.line, first.col) == (second.line, 10)
    assert source.text.splitlines()[first.line - 1].startswith("inputs: [RUN_ID")
    assert good.has_bash and good.interface_problems == ()


def test_steps_without_a_block_have_no_interface() -> None:
    source = parse_document((DATA / "interfaces.md").read_text(), DATA / "interfaces.md", DATA)
    markdown = parse_markdown(source)
    for name in ("bare", "prose"):
        step = markdown.step(name)
        assert step is not None and step.interface is None and step.interface_problems == ()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", None),
        ("inputs: []\noutputs:\n", None),
        ("[A, B]\n", "expected a mapping of inputs, optional, outputs"),
        ("inputs: [A\n", "invalid YAML"),
        ("input: [A]\n", "input: not an interface key"),
        ("inputs: A\n", "inputs: expected a list of names"),
        ("inputs: [1a]\n", "inputs: '1a' is not a name"),
        ("inputs: [{A: 1}]\n", "is not a name"),
        ("inputs: [A]\noptional: [A]\n", "optional: A is already listed at line 11"),
        ("inputs: [A]\noutputs: [A]\n", None),  # an input and an output may share a name
    ],
)
def test_malformed_blocks_are_located(content: str, message: str | None) -> None:
    interface, problems = parse_interface(content, 10, "w.md")
    if message is None:
        assert problems == [] and interface is not None
        return
    assert interface is None
    [problem] = problems
    assert problem.path == "w.md" and problem.rule == "step-interface" and problem.line >= 10
    assert message in problem.message


def test_the_interface_problems_of_a_document(tmp_path: Path, golden: Golden) -> None:
    workflow = write_workflow(tmp_path, (DATA / "interfaces.md").read_text(), name="interfaces")
    found = sorted(workflow_interface_diagnostics(workflow, workflow.markdown()))
    golden.check(GOLDENS / "interfaces.txt", "".join(d.format() + "\n" for d in found))


def test_documents_without_interfaces_are_not_asked_for_them(tmp_path: Path) -> None:
    workflow = write_workflow(
        tmp_path,
        "---\nname: old\ndescription: Written before interfaces.\ninputs:\n"
        "  X: {type: string}\noutputs:\n  Y: y\n---\n\n"
        '## Step {#step}\n\n```bash\necho "$X"\n```\n',
        name="old",
    )
    assert list(workflow_interface_diagnostics(workflow, workflow.markdown())) == []


def test_the_shipped_pack_declares_every_step_interface() -> None:
    from tests.conftest import REPO_ROOT

    from fixloop.documents.pack import load_pack

    pack, _ = load_pack(REPO_ROOT)
    for name in ("git-protocol", "review-fix", "fix-findings"):
        workflow = pack.workflow(name)
        steps = workflow.markdown().steps
        assert all(step.interface is not None for step in steps if step.has_bash), name
        assert list(workflow_interface_diagnostics(workflow, workflow.markdown())) == [], name
