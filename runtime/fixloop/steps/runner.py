"""Run one step of a workflow document: its bash, in a repository, traced, outputs parsed.

    result = run_step(pack.workflow("git-protocol"), "setup-worktree", cwd=repo,
                      inputs={"RUN_ID": run.id}, run=run)
    if not result.ok: ...           # exit code != 0, timed out, unreadable or undeclared outputs
    worktree = result.outputs["WORKTREE"]

How a step runs:
- Its ```bash blocks are joined, in document order, into one script run by one
  `bash --noprofile --norc` under `set -euo pipefail` (see `steps/script.py`).
- Inputs are checked against what the step takes: its interface (a ```yaml step block right
  under its heading: any other input is refused, a required one must be there) or, without one,
  the workflow's `inputs:`; types and `pattern`s come from the frontmatter (`steps/interface.py`;
  a problem is a FixloopError at the document line). They reach bash ONLY as environment variables,
  so a value holding `$(…)`, quotes or newlines stays data. Inputs may not shadow variables that
  change how bash or git behave (PATH, IFS, GIT_DIR, …) or the runtime's own `FIXLOOP_*`.
- The runtime also sets `FIXLOOP_OUTPUT` (the file a step writes `NAME=value` lines to; see
  `steps/outputs.py`), `FIXLOOP_RUN_ID` and `FIXLOOP_RUN_DIR` (when a run is given),
  `FIXLOOP_SANDBOX` (when the run chose a sandbox: its launcher, which the library's
  `fixloop_sandboxed CMD ARG…` calls; see docs/sandboxes.md),
  `FIXLOOP_WORKFLOW`, `FIXLOOP_STEP`, `FIXLOOP_PACK` (the pack root), `FIXLOOP_LIB` (the shared
  step library a step sources with `. "$FIXLOOP_LIB/fixloop.sh"`: the document's own
  `workflows/lib/` when its pack ships one, else the bundled pack's) and `FIXLOOP_PYTHON` (this
  interpreter, for the library's Python scripts).
- stdin is /dev/null; stdout and stderr are captured, each capped (head and tail are kept).
- On timeout the step's whole process group is killed (it runs in its own session).
- A step whose fence info says `lock=repository` runs under the repository lock
  (`steps/locking.py`).
- With a run, one `step` event (start, end, duration, exit code, outputs, commands run, the last
  command when it failed) is appended to the run's `events.jsonl`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from fixloop import hostgit, processes
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.documents.blocks import MarkdownDocument, Step
from fixloop.documents.pack import WorkflowDoc, default_pack_root
from fixloop.events import Event, EventKind
from fixloop.gitrepo import state_dir_of
from fixloop.steps import SANDBOX_LAUNCHER
from fixloop.steps.interface import coerce_step_inputs, declared_outputs
from fixloop.steps.locking import LOCK_MARKER, repository_lock
from fixloop.steps.outputs import OutputError, parse_outputs, undeclared_outputs
from fixloop.steps.result import StepResult
from fixloop.steps.script import CrashPoint, Script, compose, crash_point, read_trace


class StepRun(Protocol):
    """What a step needs of the run it belongs to (`fixloop.runs.run.Run` is one)."""

    id: str
    state_dir: Path

    @property
    def dir(self) -> Path: ...

    @property
    def lock_fd(self) -> int | None: ...

    def entering(self, workflow: str, step: str) -> None: ...

    def emit(self, event: Event) -> None: ...


OUTPUT_CAP_BYTES = 1 << 20
_RAN_CHARS = 200  # of each command's first line, in the step event
LOCK_TIMEOUT_S = 120.0

# Variables an input must never set: they would change what bash or git do, or lie to the runtime.
_RESERVED = frozenset(
    {
        "PATH",
        "IFS",
        "HOME",
        "SHELL",
        "SHELLOPTS",
        "BASHOPTS",
        "BASH_ENV",
        "ENV",
        "CDPATH",
        "PS4",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "GLOBIGNORE",
        "PROMPT_COMMAND",
    }
)
_STRIPPED_PREFIXES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_PREFIX",
    "FIXLOOP_",
)


_PARSED: dict[tuple[str, str], MarkdownDocument] = {}
_RUNS_OF: Counter[tuple[str, str]] = Counter()  # runs of each step in this process (crash switch)


def _markdown(workflow: WorkflowDoc) -> MarkdownDocument:
    # Parsing a document costs more than running a short step; a document's text names it.
    key = (str(workflow.source.path), workflow.source.text)
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()
        _PARSED[key] = workflow.markdown()
    return _PARSED[key]


def find_step(workflow: WorkflowDoc, name: str) -> Step:
    markdown = _markdown(workflow)
    step = markdown.step(name)
    display = workflow.source.display
    if step is None:
        known = ", ".join(s.name for s in markdown.steps) or "none"
        raise FixloopError(
            Diagnostic(display, 1, 1, "unknown-step", f"no step {name!r} (steps: {known})")
        )
    if not any(block.lang == "bash" for block in step.blocks):
        raise FixloopError(
            Diagnostic(display, step.line, 1, "no-bash", f"step {name!r} has no ```bash block")
        )
    return step


def step_library(workflow: WorkflowDoc) -> Path:
    """The shared step library for `workflow`: its own pack's, else the bundled pack's."""
    own = workflow.source.path.resolve().parent / "lib"
    return own if (own / "fixloop.sh").is_file() else default_pack_root() / "workflows" / "lib"


def step_inputs(workflow: WorkflowDoc, step: str, values: Mapping[str, str]) -> dict[str, str]:
    """A run's workflow-wide `values`, narrowed to the inputs `step` takes (see `interface.py`)."""
    found = find_step(workflow, step)
    taken = found.interface.input_names if found.interface else tuple(workflow.spec.inputs)
    return {key: value for key, value in values.items() if key in taken}


def _environment_values(
    workflow: WorkflowDoc, step: Step, inputs: Mapping[str, str]
) -> dict[str, str]:
    source = workflow.source
    for key in inputs:
        if key in _RESERVED or key.startswith(_STRIPPED_PREFIXES) or not key.isidentifier():
            raise FixloopError(
                source.diagnostic(
                    "input",
                    f"input {key!r}: not allowed as an environment variable name",
                    "inputs",
                    key,
                )
            )
    values = coerce_step_inputs(workflow, step, inputs)
    env: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, str) and "\0" in value:
            raise FixloopError(
                source.diagnostic(
                    "input",
                    f"input {key!r}: holds a NUL byte, which no environment variable can",
                    "inputs",
                    key,
                )
            )
        if isinstance(value, bool):
            env[key] = "true" if value else "false"
        elif isinstance(value, str):
            env[key] = value
        else:
            env[key] = json.dumps(value)
    return env


def _base_environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_STRIPPED_PREFIXES) and key not in {"BASH_ENV", "ENV", "CDPATH"}
    }


@dataclass(frozen=True)
class _Prepared:
    """A step ready to start: its script, its environment, and the files it reports through."""

    workflow: WorkflowDoc
    step: str  # as the caller named it
    found: Step
    script: Script
    env: dict[str, str]
    armed: CrashPoint | None  # the crash switch, when it is set for this run of this step
    output_file: Path
    trace_file: Path

    @property
    def needs_lock(self) -> bool:
        return any(LOCK_MARKER in block.info.split() for block in self.found.blocks)


def run_step(
    workflow: WorkflowDoc,
    step: str,
    *,
    cwd: Path,
    inputs: Mapping[str, str],
    run: StepRun | None = None,
    timeout_s: float = 300.0,
    output_cap: int = OUTPUT_CAP_BYTES,
) -> StepResult:
    """Run `step` of `workflow` in `cwd`. Raises FixloopError for bad input; never for a failing
    step, which comes back as a StepResult whose `ok` is False."""
    with tempfile.TemporaryDirectory(prefix="step-", dir=run.dir if run else None) as scratch:
        prepared = _prepare(workflow, step, cwd, inputs=inputs, run=run, scratch=Path(scratch))
        if run is not None:
            run.entering(workflow.name, step)
        started_at = time.time()
        done = _execute(prepared, cwd, run, timeout_s, output_cap)
        result = _collect(prepared, done)
    if run is not None:
        run.emit(step_event(result, started_at))
    return result


def _prepare(
    workflow: WorkflowDoc,
    step: str,
    cwd: Path,
    *,
    inputs: Mapping[str, str],
    run: StepRun | None,
    scratch: Path,
) -> _Prepared:
    """The script, the environment (inputs checked) and the output and trace files of a step."""
    found = find_step(workflow, step)
    env = _base_environment() | _environment_values(workflow, found, inputs)
    # The step's git reads configuration from its own folder and from the trees it names; an
    # agent may have written to either, so none of what they configure runs (`fixloop.hostgit`).
    trees = [cwd, *(Path(env[key]) for key in ("REPO", "WORKTREE") if env.get(key))]
    if run is not None:
        hostgit.pin_run_worktrees(run.state_dir)
    env = hostgit.environment(trees, base=env)
    crash = crash_point(os.environ)
    _RUNS_OF[workflow.name, step] += 1
    occurrence = _RUNS_OF[workflow.name, step]
    matches = crash is not None and crash.matches(workflow.name, step, occurrence)
    armed = crash if matches else None
    script = compose((b for b in found.blocks if b.lang == "bash"), workflow.source.display)
    output_file, trace_file = scratch / "output", scratch / "trace"
    output_file.touch()
    trace_file.touch()
    env |= {
        "FIXLOOP_OUTPUT": str(output_file),
        "FIXLOOP_TRACE": str(trace_file),
        "FIXLOOP_WORKFLOW": workflow.name,
        "FIXLOOP_STEP": step,
        "FIXLOOP_PACK": str(workflow.source.path.resolve().parent.parent),
        "FIXLOOP_LIB": str(step_library(workflow)),
        "FIXLOOP_PYTHON": sys.executable,
        "FIXLOOP_RUNTIME_PID": str(os.getpid()),
    }
    if run is not None:
        env |= {"FIXLOOP_RUN_ID": run.id, "FIXLOOP_RUN_DIR": str(run.dir)}
        if (launcher := run.dir / SANDBOX_LAUNCHER).is_file():
            env["FIXLOOP_SANDBOX"] = str(launcher)
    if armed is not None:
        env["FIXLOOP_CRASH_AFTER"] = str(armed.after)
    return _Prepared(workflow, step, found, script, env, armed, output_file, trace_file)


def _execute(
    prepared: _Prepared,
    cwd: Path,
    run: StepRun | None,
    timeout_s: float,
    cap: int,
) -> processes.Finished:
    """The step's bash, under the repository lock when its fence asks for it."""
    lock: AbstractContextManager[int | None] = (
        repository_lock(run.state_dir if run else state_dir_of(cwd), LOCK_TIMEOUT_S)
        if prepared.needs_lock
        else nullcontext()
    )
    name = f"{prepared.workflow.source.display}#{prepared.step}"
    with lock as lock_fd:
        # The step's shell inherits the run's lock and the repository lock: should the
        # runtime die alone, the run stays live (and the lock held) until its bash is done,
        # so recovery never races a step that is still running.
        held = tuple(fd for fd in (run.lock_fd if run else None, lock_fd) if fd is not None)
        argv = ["bash", "--noprofile", "--norc", "-c", prepared.script.text, name]
        try:
            return processes.run(
                argv, cwd=cwd, env=prepared.env, timeout_s=timeout_s, cap=cap, pass_fds=held
            )
        except OSError as exc:
            raise FixloopError(
                Diagnostic(str(cwd), 1, 1, "step", f"cannot start bash here: {exc.strerror or exc}")
            ) from None


def _collect(prepared: _Prepared, done: processes.Finished) -> StepResult:
    """What the step did: the commands its shell ran, its declared outputs, its exit."""
    workflow = prepared.workflow
    traced = read_trace(prepared.trace_file.read_bytes())
    _crash_after_shell(prepared.armed, len(traced))
    found, error = prepared.found, None
    try:
        text = prepared.output_file.read_text(encoding="utf-8", errors="replace")
        outputs = parse_outputs(text)
    except OutputError as exc:
        outputs, error = {}, str(exc)
    declared = declared_outputs(workflow, found)
    error = error or undeclared_outputs(
        outputs, declared, workflow.source.display, prepared.step, found.interface
    )
    if error is not None:  # what the step wrote is kept only where it was declared
        outputs = {name: value for name, value in outputs.items() if name in declared}
    sites = [prepared.script.document_line(c.line, c.source) for c in traced]
    return StepResult(
        workflow.name,
        prepared.step,
        done.returncode,
        outputs,
        done.stdout,
        done.stderr,
        done.duration_s,
        done.timed_out,
        [command.text for command in traced],
        error,
        sites[-1] if sites else None,
        sites,
    )


def _crash_after_shell(armed: CrashPoint | None, commands_run: int) -> None:
    # The shell's DEBUG trap kills before command K+1; after the last command only we can.
    if armed is not None and armed.after >= commands_run:
        os.kill(os.getpid(), signal.SIGKILL)


def _iso(timestamp: float) -> str:
    moment = datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
    return moment.replace("+00:00", "Z")


def step_event(result: StepResult, started_at: float) -> Event:
    data: dict[str, object] = {
        "started_at": _iso(started_at),
        "ended_at": _iso(time.time()),
        "duration_s": round(result.duration_s, 6),
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "ok": result.ok,
        "outputs": result.outputs,
        "commands": len(result.commands),
        # What ran, where the document says it (`fixloop runs show` lists it): first lines only.
        "ran": [
            {"at": site or "", "command": (command.splitlines() or [""])[0][:_RAN_CHARS]}
            for command, site in zip(result.commands, result.command_sites, strict=False)
        ],
    }
    if not result.ok:
        data["last_command"] = result.last_command
        data["last_command_at"] = result.last_command_at
        data["error"] = result.error
        data["stderr_tail"] = result.stderr[-2000:]
    return Event(EventKind.STEP, workflow=result.workflow, step=result.step, data=data)
