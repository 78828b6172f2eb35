"""`fixloop step run WORKFLOW STEP --help` and `fixloop step list WORKFLOW`: step interfaces shown.

One step's interface names each input with its type, whether the step requires it, its default,
pattern and description (from the frontmatter), and each output with its description; a listing
gives every step's interface on one line.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Sequence
from typing import Any

from fixloop.documents.blocks import Step
from fixloop.documents.pack import WorkflowDoc
from fixloop.documents.specs import InputSpec
from fixloop.steps.interface import accepted_inputs, checked_interface, declared_outputs

WIDTH = 100
_INDENT = " " * 6


class StepHelp(argparse.Action):
    """`-h`/`--help`: after WORKFLOW and STEP, that step's interface; otherwise the usual help."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show this help (after WORKFLOW STEP: that step's interface)")
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, "workflow", None) and getattr(namespace, "step", None):
            setattr(namespace, self.dest, True)  # the handler shows the step, --pack known
            return
        parser.print_help()
        parser.exit()


def _where(workflow: WorkflowDoc, line: int) -> str:
    path = workflow.source.path
    return f"{path.parent.name}/{path.name}:{line}"


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=_INDENT, subsequent_indent=_INDENT) or []


def _input_line(name: str, spec: InputSpec) -> str:
    facts = [spec.type, "required" if spec.required else "optional"]
    if not spec.required and spec.default is not None:
        default = spec.default if isinstance(spec.default, str) else json.dumps(spec.default)
        facts.append(f"default: {default}")
    if spec.pattern is not None:
        facts.append(f"pattern: {spec.pattern}")
    return f"  {name} ({', '.join(facts)})"


def describe_step(workflow: WorkflowDoc, step: Step) -> str:
    """The interface of `step`, as `fixloop step run WORKFLOW STEP --help` prints it."""
    checked_interface(workflow, step)
    lines = [f"{workflow.name}#{step.name}: {step.title} ({_where(workflow, step.line)})", ""]
    if step.interface is None:
        lines += ["No interface declared: the step takes the workflow's inputs.", ""]
    inputs = accepted_inputs(workflow, step)
    lines.append("inputs:" if inputs else "inputs: none")
    for name, spec in inputs.items():
        lines.append(_input_line(name, spec))
        lines += _wrapped(spec.description)
    outputs = declared_outputs(workflow, step)
    lines.append("outputs:" if outputs else "outputs: none")
    for name in outputs:
        lines.append(f"  {name}")
        lines += _wrapped(workflow.spec.outputs.get(name, ""))
    lines.append("")
    if not step.has_bash:
        lines.append("This step has no bash: the assistant (or the runtime's Python) follows it.")
        return "\n".join(lines) + "\n"
    given = "".join(f" --input {name}=…" for name, spec in inputs.items() if spec.required)
    lines += ["run it:", f"  fixloop step run {workflow.name} {step.name} --repo .{given}"]
    return "\n".join(lines) + "\n"


def step_rows(workflow: WorkflowDoc) -> list[dict[str, Any]]:
    """Every step of `workflow` as `fixloop step list --json` lists it: its interface as data."""
    rows: list[dict[str, Any]] = []
    for step in workflow.markdown().steps:
        malformed = step.interface is None and bool(step.interface_problems)
        declared = step.interface is not None
        rows.append(
            {
                "id": step.name,
                "status": "malformed" if malformed else "declared" if declared else "undeclared",
                "title": step.title,
                "line": step.line,
                "bash": step.has_bash,
                "inputs": sorted(accepted_inputs(workflow, step)) if not malformed else [],
                "outputs": sorted(declared_outputs(workflow, step)) if not malformed else [],
            }
        )
    return rows


def list_steps(workflow: WorkflowDoc) -> str:
    """Every step of `workflow` with its interface on one line, as `fixloop step list` prints."""
    steps = workflow.markdown().steps
    width = max((len(step.name) for step in steps), default=0)
    lines = [f"{workflow.name}: {len(steps)} steps ({_where(workflow, 1)[:-2]})"]
    for step in steps:
        if step.interface is not None:
            shown = step.interface.one_line()
        elif step.interface_problems:
            shown = "(malformed interface: see `fixloop validate`)"
        else:
            shown = "(no interface: the workflow's inputs and outputs)"
        note = "" if step.has_bash else "  [no bash]"
        lines.append(f"  {step.name:<{width}}  {shown}{note}")
    return "\n".join(lines) + "\n"
