"""Pack rules for step interfaces (`fixloop validate`): every name resolves, none is left over.

- `step-interface`: a ```` ```yaml step```` block that does not parse, is misplaced (not right
  under its step's heading, a second one, or outside every step).
- `interface-undefined`: an interface names an input or output the frontmatter does not define.
- `interface-unused`: a frontmatter input or output that no step's interface declares.
- `interface-missing`: a step with a bash block but no interface.

The last two apply only to documents that declare at least one interface, so a pack written
before interfaces existed (or by someone else) is not asked for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from fixloop.diagnostics import Diagnostic
from fixloop.documents.blocks import MarkdownDocument, Step
from fixloop.documents.interface import RULE, is_interface_info
from fixloop.documents.pack import Pack, WorkflowDoc


def interface_diagnostics(pack: Pack) -> Iterable[Diagnostic]:
    for workflow in pack.workflows.values():
        yield from workflow_interface_diagnostics(workflow, workflow.markdown())


def workflow_interface_diagnostics(
    workflow: WorkflowDoc, markdown: MarkdownDocument
) -> Iterator[Diagnostic]:
    display = workflow.source.display
    for block in markdown.blocks:
        if block.step is None and is_interface_info(block.info):
            yield Diagnostic(
                display,
                block.fence_line,
                1,
                RULE,
                "a step interface outside every step; put it right under a step's heading",
            )
    for step in markdown.steps:
        yield from step.interface_problems
        yield from _undefined_names(workflow, step)
    if not any(step.interface or step.interface_problems for step in markdown.steps):
        return
    for step in markdown.steps:
        if step.has_bash and step.interface is None and not step.interface_problems:
            yield Diagnostic(
                display,
                step.line,
                1,
                "interface-missing",
                f"step {step.name!r} runs bash but declares no interface; put a ```yaml step "
                "block (inputs, optional, outputs) right under its heading",
            )
    yield from _unused_names(workflow, markdown.steps)


def _undefined_names(workflow: WorkflowDoc, step: Step) -> Iterator[Diagnostic]:
    interface = step.interface
    if interface is None:
        return
    spec = workflow.spec
    for kind, declared, defined in (
        ("takes input", (*interface.inputs, *interface.optional), spec.inputs),
        ("writes output", interface.outputs, spec.outputs),
    ):
        for name in declared:
            if name.name not in defined:
                section = "inputs" if "input" in kind else "outputs"
                yield Diagnostic(
                    workflow.source.display,
                    name.line,
                    name.col,
                    "interface-undefined",
                    f"step {step.name!r} {kind} {name.name}, which the frontmatter's "
                    f"`{section}:` does not define",
                )


def _unused_names(workflow: WorkflowDoc, steps: Iterable[Step]) -> Iterator[Diagnostic]:
    interfaces = [step.interface for step in steps if step.interface is not None]
    used = {
        "inputs": {name for i in interfaces for name in i.input_names},
        "outputs": {name for i in interfaces for name in i.output_names},
    }
    for kind, defined in (("inputs", workflow.spec.inputs), ("outputs", workflow.spec.outputs)):
        for name in defined:
            if name not in used[kind]:
                yield workflow.source.diagnostic(
                    "interface-unused",
                    f"{kind}.{name}: no step declares it in its interface",
                    kind,
                    name,
                )
