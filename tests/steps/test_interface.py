"""The runtime holds a step to its interface: what it takes, must be given, and writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.workflows import write_workflow

from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import WorkflowDoc
from fixloop.steps.runner import run_step, step_inputs

DOC = """\
---
name: shaped
description: Steps with interfaces, and one without.
inputs:
  NAME: {type: string, description: Who.}
  MARK: {type: string, required: false, description: A file the step touches when bash runs.}
  TAG: {type: string, required: false, default: baseline, pattern: '^[a-z]+$'}
outputs:
  GREETING: A greeting.
  OTHER: Declared by the workflow, not by the greet step.
---

## Greet {#greet}

```yaml step
inputs: [NAME, MARK]
optional: [TAG]
outputs: [GREETING]
```

```bash
: > "$MARK"
printf 'GREETING=hello %s at %s\\n' "$NAME" "$TAG" >> "$FIXLOOP_OUTPUT"
```

## Overreach {#overreach}

```yaml step
inputs: [NAME]
outputs: [GREETING]
```

```bash
printf 'GREETING=hi\\nOTHER=%s\\n' "$NAME" >> "$FIXLOOP_OUTPUT"
```

## Free {#free}

```bash
printf 'OTHER=%s\\n' "${NAME:-nobody}" >> "$FIXLOOP_OUTPUT"
```

## Broken {#broken}

```yaml step
inputs: [NAME, NAMEE]
```

```bash
true
```
"""


@pytest.fixture
def shaped(tmp_path: Path) -> WorkflowDoc:
    return write_workflow(tmp_path / "pack", DOC, name="shaped")


def test_a_step_gets_what_it_declares_and_its_defaults(shaped: WorkflowDoc, tmp_path: Path) -> None:
    mark = tmp_path / "ran"
    result = run_step(shaped, "greet", cwd=tmp_path, inputs={"NAME": "$(x)", "MARK": str(mark)})
    assert result.ok, result.describe_failure()
    assert result.outputs == {"GREETING": "hello $(x) at baseline"}
    assert mark.exists()


def test_an_input_the_step_does_not_take_is_refused_naming_the_interface(
    shaped: WorkflowDoc, tmp_path: Path
) -> None:
    with pytest.raises(FixloopError) as caught:
        run_step(shaped, "overreach", cwd=tmp_path, inputs={"NAME": "n", "TAG": "x"})
    [diagnostic] = caught.value.diagnostics
    assert caught.value.exit_code == 2
    assert diagnostic.format() == (
        "workflows/shaped.md:28:1: input: input 'TAG': step 'overreach' does not take it "
        "(its interface, line 28, takes: NAME)"
    )


def test_a_missing_required_input_is_refused_before_bash_runs(
    shaped: WorkflowDoc, tmp_path: Path
) -> None:
    mark = tmp_path / "ran"
    with pytest.raises(FixloopError) as caught:
        run_step(shaped, "greet", cwd=tmp_path, inputs={"MARK": str(mark)})
    assert caught.value.diagnostics[0].format() == (
        "workflows/shaped.md:15:1: input: input 'NAME': step 'greet' requires it "
        "(its interface, line 15) and it is missing"
    )
    assert not mark.exists()


def test_types_and_patterns_still_come_from_the_frontmatter(
    shaped: WorkflowDoc, tmp_path: Path
) -> None:
    inputs = {"NAME": "n", "MARK": str(tmp_path / "m"), "TAG": "Not-Lower"}
    with pytest.raises(FixloopError) as caught:
        run_step(shaped, "greet", cwd=tmp_path, inputs=inputs)
    message = caught.value.diagnostics[0].format()
    assert message.startswith("workflows/shaped.md:7:1: input: input 'TAG': 'Not-Lower' does not")


def test_an_output_outside_the_interface_fails_the_step(
    shaped: WorkflowDoc, tmp_path: Path
) -> None:
    result = run_step(shaped, "overreach", cwd=tmp_path, inputs={"NAME": "n"})
    assert result.exit_code == 0 and not result.ok
    assert result.error == (
        "workflows/shaped.md:28: step 'overreach' wrote output OTHER, which its interface does "
        "not declare under `outputs:` (declared: GREETING)"
    )
    assert result.outputs == {"GREETING": "hi"}


def test_a_step_without_an_interface_takes_the_workflows(
    shaped: WorkflowDoc, tmp_path: Path
) -> None:
    result = run_step(shaped, "free", cwd=tmp_path, inputs={"NAME": "x", "TAG": "abc"})
    assert result.ok and result.outputs == {"OTHER": "x"}
    with pytest.raises(FixloopError) as caught:  # the frontmatter's `required` holds here
        run_step(shaped, "free", cwd=tmp_path, inputs={})
    assert "input 'NAME': required string input is missing" in str(caught.value)


def test_a_broken_interface_is_refused_at_its_line(shaped: WorkflowDoc, tmp_path: Path) -> None:
    with pytest.raises(FixloopError) as caught:
        run_step(shaped, "broken", cwd=tmp_path, inputs={"NAME": "n"})
    assert caught.value.diagnostics[0].format() == (
        "workflows/shaped.md:46:16: interface-undefined: step 'broken': input NAMEE is not "
        "defined in the frontmatter"
    )


def test_run_wide_values_are_narrowed_to_what_a_step_takes(shaped: WorkflowDoc) -> None:
    values = {"NAME": "n", "MARK": "m", "TAG": "t", "UNKNOWN": "u"}
    assert step_inputs(shaped, "overreach", values) == {"NAME": "n"}
    assert step_inputs(shaped, "greet", values) == {"NAME": "n", "MARK": "m", "TAG": "t"}
    assert step_inputs(shaped, "free", values) == {"NAME": "n", "MARK": "m", "TAG": "t"}
