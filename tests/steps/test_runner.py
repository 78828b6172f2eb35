"""run_step against real bash: inputs as environment, strict mode, timeouts, caps, outputs."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.workflows import write_workflow

from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import WorkflowDoc
from fixloop.runs.run import Run
from fixloop.sandboxes import SandboxChoice
from fixloop.sandboxes.launcher import RunSandbox, write_launcher
from fixloop.steps.runner import run_step

DOC = """\
---
name: demo
description: Steps for runner tests.
inputs:
  TITLE: {type: string, required: false, description: Any text.}
  PHASE: {type: string, required: false, pattern: '^[0-9]+(\\.[0-9]+)?$'}
  COUNT: {type: integer, required: false, default: 2}
  FLAG: {type: boolean, required: false}
  NEEDED: {type: string, required: false}
  DEPTH: {type: string, required: false}
outputs:
  TITLE: The title input, as the step saw it.
  COUNT: The count input.
  FLAG: The flag input, or unset.
  SHARED: A variable set in the step's first block.
  MOVED: yes when the first block's cd held in the second.
  LEAK: A FIXLOOP_ variable from the caller's environment, or absent.
  BODY: The title, as a multi-line value.
---

# Demo

## Echo the title {#echo}

```bash
printf 'TITLE=%s\\n' "$TITLE" >> "$FIXLOOP_OUTPUT"
printf 'COUNT=%s\\nFLAG=%s\\n' "$COUNT" "${FLAG:-unset}" >> "$FIXLOOP_OUTPUT"
```

## Two blocks, one shell {#two-blocks}

```bash
shared="set in block one"
start="$PWD"
cd "$(mktemp -d)"
```

Prose between the blocks is not run.

```python
raise SystemExit("a python block is documentation, never run")
```

```bash
moved=no
if [ "$PWD" != "$start" ]; then moved=yes; fi
printf 'SHARED=%s\\nMOVED=%s\\n' "$shared" "$moved" >> "$FIXLOOP_OUTPUT"
printf 'LEAK=%s\\n' "${FIXLOOP_LEAK:-absent}" >> "$FIXLOOP_OUTPUT"
```

## Unset variable {#unset}

```bash
echo "about to read"
echo "$NEEDED"
echo "never reached"
```

## Pipe failure {#pipefail}

```bash
false | cat
echo "never reached"
```

## Multi-line output {#multiline}

```bash
printf 'BODY<<FIXLOOP_EOF\\n%s\\nFIXLOOP_EOF\\n' "$TITLE" >> "$FIXLOOP_OUTPUT"
```

## Bad output {#bad-output}

```bash
echo "not an assignment" >> "$FIXLOOP_OUTPUT"
```

## A typo in an output name {#typo}

```bash
printf 'TITLE=%s\\n' "$TITLE" >> "$FIXLOOP_OUTPUT"
printf 'TITEL=%s\\n' "$TITLE" >> "$FIXLOOP_OUTPUT"
```

## The same output twice {#twice}

```bash
printf 'TITLE=draft\\n' >> "$FIXLOOP_OUTPUT"
printf 'TITLE<<FIXLOOP_EOF\\nfinal\\nFIXLOOP_EOF\\n' >> "$FIXLOOP_OUTPUT"
```

## Sleep with a child {#sleepy}

```bash
sleep 300 &
echo "$!" > "$DEPTH"
sleep 300
```

## Loud {#loud}

```bash
head -c 3000000 /dev/zero | tr '\\0' 'x'
echo
echo "the end"
```

## Stdin {#stdin}

```bash
if read -r line; then echo "read: $line"; else echo "stdin is empty"; fi
```

## Prose only {#prose}

Nothing to run here.
"""


@pytest.fixture
def demo(tmp_path: Path) -> WorkflowDoc:
    return write_workflow(tmp_path / "pack", DOC)


def _env_step(demo: WorkflowDoc, step: str, cwd: Path, **inputs: str) -> dict[str, str]:
    result = run_step(demo, step, cwd=cwd, inputs=inputs)
    assert result.ok, result.describe_failure()
    return result.outputs


def test_inputs_reach_bash_as_data_never_as_code(demo: WorkflowDoc, tmp_path: Path) -> None:
    hostile = "$(touch pwned) `touch pwned2` \"; touch pwned3; echo \" 'q'\nline two"
    result = run_step(demo, "multiline", cwd=tmp_path, inputs={"TITLE": hostile})
    assert result.ok, result.describe_failure()
    assert result.outputs["BODY"] == hostile
    assert not any(tmp_path.glob("pwned*"))


def test_typed_inputs_and_defaults_become_text(demo: WorkflowDoc, tmp_path: Path) -> None:
    outputs = _env_step(demo, "echo", tmp_path, TITLE="t", FLAG="yes")
    assert outputs == {"TITLE": "t", "COUNT": "2", "FLAG": "true"}


def test_blocks_run_in_one_shell_in_document_order(
    demo: WorkflowDoc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXLOOP_LEAK", "the runtime's own FIXLOOP_* never reach a step")
    result = run_step(demo, "two-blocks", cwd=tmp_path, inputs={})
    assert result.ok, result.describe_failure()
    assert result.outputs == {"SHARED": "set in block one", "MOVED": "yes", "LEAK": "absent"}


def test_an_unset_variable_stops_the_step(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "unset", cwd=tmp_path, inputs={})
    assert not result.ok
    assert "about to read" in result.stdout
    assert "never reached" not in result.stdout
    assert "NEEDED: unbound variable" in result.stderr
    assert result.last_command == 'echo "$NEEDED"'
    assert result.last_command_at == "workflows/demo.md:55"
    assert 'after `echo "$NEEDED"` (workflows/demo.md:55)' in result.describe_failure()


def test_a_failure_inside_a_pipeline_stops_the_step(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "pipefail", cwd=tmp_path, inputs={})
    assert result.exit_code == 1
    assert "never reached" not in result.stdout


def test_malformed_outputs_fail_the_step(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "bad-output", cwd=tmp_path, inputs={})
    assert result.exit_code == 0
    assert not result.ok
    assert result.error is not None and "line 1: expected NAME=value" in result.error


def test_an_undeclared_output_name_fails_the_step(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "typo", cwd=tmp_path, inputs={"TITLE": "t"})
    assert result.exit_code == 0
    assert not result.ok
    assert result.error == (
        f"{demo.source.display}: step 'typo' wrote output TITEL, which the workflow does not "
        "declare under `outputs:` (declared: BODY, COUNT, FLAG, LEAK, MOVED, SHARED, TITLE)"
    )
    assert result.describe_failure() == f"demo#typo: {result.error}"
    assert result.outputs == {"TITLE": "t"}  # the undeclared value is never handed on


def test_a_later_write_of_an_output_wins(demo: WorkflowDoc, tmp_path: Path) -> None:
    assert _env_step(demo, "twice", tmp_path) == {"TITLE": "final"}


def test_timeout_kills_the_whole_process_group(demo: WorkflowDoc, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = run_step(demo, "sleepy", cwd=tmp_path, inputs={"DEPTH": str(pid_file)}, timeout_s=0.5)
    assert result.timed_out and not result.ok
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        probe = subprocess.run(["ps", "-o", "stat=", "-p", str(child)], capture_output=True)
        if probe.returncode != 0 or probe.stdout.strip().startswith(b"Z"):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"background child {child} survived the timeout")


def test_output_is_capped_keeping_head_and_tail(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "loud", cwd=tmp_path, inputs={}, output_cap=10_000)
    assert result.ok
    assert len(result.stdout) < 11_000
    assert "bytes omitted" in result.stdout
    assert result.stdout.rstrip().endswith("the end")


def test_stdin_is_empty(demo: WorkflowDoc, tmp_path: Path) -> None:
    result = run_step(demo, "stdin", cwd=tmp_path, inputs={})
    assert result.stdout.strip() == "stdin is empty"


def _error(demo: WorkflowDoc, tmp_path: Path, step: str, **inputs: str) -> str:
    with pytest.raises(FixloopError) as caught:
        run_step(demo, step, cwd=tmp_path, inputs=inputs)
    assert len(caught.value.diagnostics) == 1
    return caught.value.diagnostics[0].format()


def test_input_that_breaks_its_pattern_is_located(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "echo", PHASE="02; rm -rf /")
    assert message.startswith("workflows/demo.md:6:1: input: input 'PHASE':")
    assert "does not match the declared pattern" in message


def test_input_of_the_wrong_type_is_located(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "echo", COUNT="many")
    assert message.startswith("workflows/demo.md:7:1: input: input 'COUNT':")


def test_undeclared_input_is_refused(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "echo", SURPRISE="x")
    assert "input 'SURPRISE': not a declared input" in message


@pytest.mark.parametrize("name", ["PATH", "BASH_ENV", "GIT_DIR", "FIXLOOP_OUTPUT", "IFS"])
def test_input_may_not_shadow_what_changes_bash_or_git(
    demo: WorkflowDoc, tmp_path: Path, name: str
) -> None:
    message = _error(demo, tmp_path, "echo", **{name: "x"})
    assert f"input {name!r}: not allowed as an environment variable name" in message


def test_a_nul_byte_in_an_input_is_refused(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "echo", TITLE="a\0b")
    assert "input 'TITLE': holds a NUL byte" in message


def test_unknown_step_lists_the_steps(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "nope")
    assert message.startswith("workflows/demo.md:1:1: unknown-step: no step 'nope' (steps: echo,")


def test_a_step_without_bash_is_an_error_at_its_heading(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error(demo, tmp_path, "prose")
    assert message.startswith("workflows/demo.md:")
    assert "no-bash: step 'prose' has no ```bash block" in message


def test_each_step_appends_one_event_to_the_run(demo: WorkflowDoc, user_repo: UserRepo) -> None:
    run = Run.start(user_repo.path, "demo")
    run_step(demo, "echo", cwd=user_repo.path, inputs={"TITLE": "x"}, run=run)
    run_step(demo, "unset", cwd=user_repo.path, inputs={}, run=run)
    run.finish("failed")
    events = [json.loads(line) for line in run.events_path.read_text().splitlines()]
    assert [e["event"] for e in events] == ["run-start", "step", "step", "run-end"]
    ok, failed = events[1], events[2]
    assert ok["step"] == "echo" and ok["ok"] and ok["exit_code"] == 0
    assert ok["outputs"] == {"TITLE": "x", "COUNT": "2", "FLAG": "unset"}
    assert ok["commands"] == 2 and ok["duration_s"] >= 0
    assert ok["started_at"] <= ok["ended_at"]
    assert failed["step"] == "unset" and not failed["ok"] and failed["exit_code"] == 1
    assert failed["last_command"] == 'echo "$NEEDED"'
    assert "unbound variable" in failed["stderr_tail"]


def test_a_missing_directory_is_a_clear_error(demo: WorkflowDoc, tmp_path: Path) -> None:
    message = _error_in(demo, tmp_path / "gone")
    assert message.endswith("step: cannot start bash here: No such file or directory")


def _error_in(demo: WorkflowDoc, cwd: Path) -> str:
    with pytest.raises(FixloopError) as caught:
        run_step(demo, "stdin", cwd=cwd, inputs={})
    return caught.value.diagnostics[0].format()


LIBRARY_DOC = """\
---
name: uses-lib
description: A step that sources the shared step library.
outputs:
  LIB: Where FIXLOOP_LIB pointed.
  PY: Whether FIXLOOP_PYTHON runs.
  LINES: A value with a newline, written by the library.
---

## Use it {#use}

```bash
. "$FIXLOOP_LIB/fixloop.sh"
fixloop_output LIB "$FIXLOOP_LIB"
fixloop_output PY "$("$FIXLOOP_PYTHON" -c 'print("runs")')"
fixloop_output LINES "$(printf 'one\\ntwo')"
```
"""


def test_a_document_outside_any_pack_gets_the_bundled_library(tmp_path: Path) -> None:
    from fixloop.documents.pack import default_pack_root

    lone = write_workflow(tmp_path / "elsewhere", LIBRARY_DOC, name="uses-lib")
    result = run_step(lone, "use", cwd=tmp_path, inputs={})
    assert result.ok, result.describe_failure()
    assert result.outputs == {
        "LIB": str(default_pack_root() / "workflows" / "lib"),
        "PY": "runs",
        "LINES": "one\ntwo",
    }


def test_a_pack_that_ships_its_own_library_gets_it(tmp_path: Path) -> None:
    own = tmp_path / "pack" / "workflows" / "lib"
    own.mkdir(parents=True)
    (own / "fixloop.sh").write_text(
        'fixloop_output() { printf "%s=own\\n" "$1" >> "$FIXLOOP_OUTPUT"; }\n'
    )
    doc = write_workflow(tmp_path / "pack", LIBRARY_DOC, name="uses-lib")
    result = run_step(doc, "use", cwd=tmp_path, inputs={})
    assert result.ok, result.describe_failure()
    assert result.outputs == {"LIB": "own", "PY": "own", "LINES": "own"}


SANDBOXED_DOC = """\
---
name: sandboxed
description: A step that runs a command through the run's sandbox.
outputs:
  SANDBOX: The launcher the step was handed, or none.
  STEP: FIXLOOP_STEP as the sandboxed command saw it (a sandbox passes no such variable).
---

# Sandboxed

## Check {#check}

```bash
. "$FIXLOOP_LIB/fixloop.sh"
fixloop_output SANDBOX "${FIXLOOP_SANDBOX:-none}"
fixloop_output STEP "$(fixloop_sandboxed printenv FIXLOOP_STEP || echo unset)"
```
"""


def test_a_run_with_a_sandbox_launcher_hands_it_to_every_step(
    tmp_path: Path, user_repo: UserRepo
) -> None:
    doc = write_workflow(tmp_path / "pack", SANDBOXED_DOC)
    plain = Run.start(user_repo.path, "sandboxed")
    outputs = run_step(doc, "check", cwd=user_repo.path, inputs={}, run=plain).outputs
    assert outputs == {"SANDBOX": "none", "STEP": "check"}  # run directly, in the step's env
    plain.finish("done")
    run = Run.start(user_repo.path, "sandboxed")
    launcher = write_launcher(run.dir, RunSandbox(SandboxChoice("local", "asked for")))
    result = run_step(doc, "check", cwd=user_repo.path, inputs={}, run=run)
    assert result.ok, result.describe_failure()
    assert result.outputs == {"SANDBOX": str(launcher), "STEP": "unset"}
    run.finish("done")
