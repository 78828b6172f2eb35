"""What one step takes and writes, as the runtime enforces it.

A step with an interface (a ```` ```yaml step```` block, `documents/interface.py`) takes exactly
the inputs it lists: any other is refused, a required one that is missing is refused before bash
runs, and it may write only the outputs it lists. A step without one takes the workflow's
`inputs:` and may write any of its `outputs:`, as before interfaces existed. Types, patterns and
defaults always come from the frontmatter.

`runner.step_inputs` serves callers that hold a run's values for the whole workflow (review-fix's
REVIEW_PATH, PADDED_PHASE, …): it keeps the ones a step takes. Values meant for one step are
passed as they are, so a misspelt or misplaced one is still refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.blocks import Step
from fixloop.documents.inputs import InputError, coerce_inputs
from fixloop.documents.pack import WorkflowDoc
from fixloop.documents.specs import InputSpec


def checked_interface(workflow: WorkflowDoc, step: Step) -> None:
    """Refuse to run a step whose interface is malformed or names what the workflow lacks."""
    if step.interface_problems:
        raise FixloopError(step.interface_problems)
    interface = step.interface
    if interface is None:
        return
    display = workflow.source.display
    spec = workflow.spec
    for names, defined, kind in (
        ((*interface.inputs, *interface.optional), set(spec.inputs), "input"),
        (interface.outputs, set(spec.outputs), "output"),
    ):
        for declared in names:
            if declared.name not in defined:
                raise FixloopError(
                    Diagnostic(
                        display,
                        declared.line,
                        declared.col,
                        "interface-undefined",
                        f"step {step.name!r}: {kind} {declared.name} is not defined in the "
                        "frontmatter",
                    )
                )


def accepted_inputs(workflow: WorkflowDoc, step: Step) -> dict[str, InputSpec]:
    """The inputs `step` takes, each required as its interface says (the frontmatter's spec
    otherwise)."""
    interface = step.interface
    if interface is None:
        return dict(workflow.spec.inputs)
    specs = workflow.spec.inputs
    return {
        name: specs[name].model_copy(update={"required": name in interface.required_names})
        for name in interface.input_names
        if name in specs
    }


def coerce_step_inputs(
    workflow: WorkflowDoc, step: Step, inputs: Mapping[str, str]
) -> dict[str, Any]:
    """`inputs` checked against what `step` takes and typed; a FixloopError (exit 2) naming the
    step and the document line otherwise."""
    checked_interface(workflow, step)
    source = workflow.source
    accepted = accepted_inputs(workflow, step)
    interface = step.interface
    if interface is not None:
        takes = ", ".join(interface.input_names) or "none"
        where = f"its interface, line {interface.line}"
        for key in inputs:
            if key not in accepted:
                raise FixloopError(
                    Diagnostic(
                        source.display,
                        interface.line,
                        1,
                        "input",
                        f"input {key!r}: step {step.name!r} does not take it ({where}, takes: "
                        f"{takes})",
                    )
                )
        for name in interface.input_names:
            if accepted[name].required and name not in inputs:
                raise FixloopError(
                    Diagnostic(
                        source.display,
                        interface.line,
                        1,
                        "input",
                        f"input {name!r}: step {step.name!r} requires it ({where}) and it is "
                        "missing",
                    )
                )
    try:
        return coerce_inputs(accepted, inputs, from_text=True)
    except InputError as exc:
        raise FixloopError(source.diagnostic("input", str(exc), "inputs", exc.key)) from None


def declared_outputs(workflow: WorkflowDoc, step: Step) -> tuple[str, ...]:
    """The outputs `step` may write."""
    if step.interface is None:
        return tuple(workflow.spec.outputs)
    return step.interface.output_names
