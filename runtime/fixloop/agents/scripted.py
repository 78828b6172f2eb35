"""A scripted model: plays a fixed script instead of calling a real model.

It ships in the library so that tests, the demo, and users testing their own documents drive the
real loops (real git, real files, real bash steps) with only the model replaced. It obeys the same
contract as a real backend: it edits real files in the request's worktree, and its output is
validated with `fixloop.schemas.registry.parse_output`, so a malformed or schema-invalid output is
*inconclusive*, never a pass.

Script format (a YAML or JSON file, or the same data as Python dicts). The top level maps a call
key (`AgentRequest.key`, by convention `role/finding-id/phase`, e.g. `fixer/3/round-1`,
`verifier/3/pre-gate`) to one entry, or to a list of entries played one per call::

    fixer/3/round-1:
      edits:                                    # applied in order, before the output is returned
        - {path: src/auth.py, content: "..."}   # write the whole file (creates it if needed)
        - {path: src/auth.py, old: "a", new: "b"}  # replace exactly one occurrence of `old`
        - {path: src/old.py, delete: true}      # remove the file
      bash:                                     # optional: shell commands, run after the edits
        - sed -i 's/a/b/' src/other.py
      output: {files_changed: [src/auth.py], summary: "fixed: ...", concerns: null}
      cost_usd: 0.01                            # optional, charged to a run budget
      input_tokens: 900                         # optional, too (and output_tokens)
    verifier/3/round-1:
      output: '{"schema_version": "v1", ...}'   # a string is decoded as JSON, like a real answer
    verifier/3/round-2:
      fail: crash          # crash | timeout | malformed (returns `raw`, or text that is not JSON)
                           # | backend (the API failed: `raw` says how, e.g. "529 overloaded")
    issue-fixer/ISSUE/attempt-1:                # a call the workflow lent tools (`toolbox.py`)
      tools:                                    # played first, in order, against those tools
        - {name: read_file, input: {path: calc.py}}
        - {name: edit_file, input: {path: calc.py, version: "@last", old: "<", new: "<="}}
        - {name: run_tests, input: {}}
      output: {id: ISSUE, status: done, filesModified: [calc.py], notes: "..."}

Rules, all failing closed:
- A call whose key is not in the script (or whose list is used up) is inconclusive (`missing`).
- An edit path the safe-path rule refuses (`fixloop.steps.paths`: absolute, `..`, `.git`, through
  a symbolic link, a link leading out) is refused and recorded as a denied write; so is a path
  outside the request's `writable` files. A refused edit is not made; the call's output is still
  returned, because a real model's denied tool call does not end its turn either.
- `old` that is not found exactly once makes the call inconclusive (`crash`): a real model's edit
  tool fails the same way.
- `tools` play a model's calls of the tools its workflow lent it, before any `edits`: each answer
  (an error too) goes back to the script's "model", as a real model reads a tool result; a
  `version: "@last"` is the version the last answer about that path reported. A script with
  `tools` for a call that was lent none is inconclusive (`crash`). Each tool call is a turn.
- `bash` commands play a model's shell tool calls: each runs as `bash -c` in the worktree (stdin
  empty, output discarded), in order, after the edits, in the run's sandbox when the run chose
  one (`AgentRequest.sandbox`: then, under bwrap or docker, a write outside the worktree fails);
  one running past 60 s times the call out.
  Like a real shell command they are NOT checked against `writable` and never recorded as
  denied: they are how a script shows a workflow a write no refusal saw. A command's exit status
  does not end the call (a failed tool call does not end a real model's turn either).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fixloop.agents.backend import (
    AgentOutcome,
    AgentRequest,
    DeniedWrite,
    OutcomeStatus,
    StopReason,
    Usage,
)
from fixloop.agents.toolbox import latest_versions, with_version
from fixloop.diagnostics import Diagnostic, FixloopError, display_path
from fixloop.documents.files import read_text
from fixloop.documents.located_yaml import load_located
from fixloop.documents.spec_errors import spec_diagnostics
from fixloop.sandboxes.launcher import working_tree_of
from fixloop.schemas.registry import parse_output
from fixloop.steps.paths import unsafe_reason

SHELL_TIMEOUT_S = 60.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedEdit(_Strict):
    path: Annotated[str, Field(min_length=1)]
    content: str | None = None
    old: Annotated[str, Field(min_length=1)] | None = None
    new: str | None = None
    delete: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptedEdit:
        kinds = [
            self.content is not None,
            self.old is not None or self.new is not None,
            self.delete,
        ]
        if sum(kinds) != 1:
            raise ValueError("an edit has exactly one of: content, old+new, delete")
        if (self.old is None) != (self.new is None):
            raise ValueError("a replacement needs both old and new")
        return self


class ScriptedToolCall(_Strict):
    name: Annotated[str, Field(min_length=1)]
    input: dict[str, Any] = Field(default_factory=dict)


class ScriptedReply(_Strict):
    tools: list[ScriptedToolCall] = Field(default_factory=list)
    edits: list[ScriptedEdit] = Field(default_factory=list)
    bash: list[str] = Field(default_factory=list)
    output: Any = None
    fail: Literal["crash", "timeout", "malformed", "backend"] | None = None
    raw: str | None = None  # the text a `malformed` reply returns, or a `backend` failure's
    cost_usd: Annotated[float, Field(ge=0.0)] = 0.0
    input_tokens: Annotated[int, Field(ge=0)] = 0
    output_tokens: Annotated[int, Field(ge=0)] = 0

    @model_validator(mode="after")
    def _output_or_failure(self) -> ScriptedReply:
        if self.fail is None and self.output is None:
            raise ValueError("a reply needs `output` or `fail`")
        if self.fail is not None and self.output is not None:
            raise ValueError("a reply has either `output` or `fail`, not both")
        return self


Script = Mapping[str, Any]


def parse_script(data: object, origin: str = "<script>") -> dict[str, list[ScriptedReply]]:
    """Validate script data; every problem is a FixloopError naming `origin` and the call key."""
    if not isinstance(data, Mapping):
        raise FixloopError(Diagnostic(origin, 1, 1, "script", "a script maps call keys to replies"))
    script: dict[str, list[ScriptedReply]] = {}
    for key, value in data.items():
        listed = isinstance(value, list)
        replies = []
        for index, entry in enumerate(value if listed else [value]):
            try:
                replies.append(ScriptedReply.model_validate(entry))
            except ValidationError as exc:
                at: tuple[str | int, ...] = (str(key), index) if listed else (str(key),)
                problems = spec_diagnostics(
                    exc,
                    model=ScriptedReply,
                    data=entry,
                    display=origin,
                    rule="script",
                    key_lines={},
                    prefix=at,
                )
                raise FixloopError(problems[0]) from None
        script[str(key)] = replies
    return script


def read_script(path: Path) -> tuple[object, str]:
    """The raw data of a YAML or JSON script file (YAML is a superset of JSON), and its name.

    Read as every file a user gives (a regular file only, bounded: a FIFO would block for ever,
    /dev/zero never end), then by the one bounded YAML loader.
    """
    shown = display_path(path)
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else exc.strerror or str(exc)
        raise FixloopError(Diagnostic(shown, 1, 1, "script", reason)) from None
    return load_located(text, display=shown, rule="script").data, shown


def resolve_inside(root: Path, relative: str) -> Path | str:
    """`root/relative`, resolved, when the safe-path rule (`steps.paths`) allows it; else why."""
    reason = unsafe_reason(root, relative)
    if reason is not None:
        return reason
    return (root / relative).resolve()


class ScriptedBackend:
    """A `Backend` that plays `script`; `calls` records every request it received, in order."""

    name = "scripted"

    def __init__(self, script: Script, *, origin: str = "<script>") -> None:
        self._replies = parse_script(script, origin)
        self.origin = origin
        self.calls: list[AgentRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> ScriptedBackend:
        data, shown = read_script(path)
        if not isinstance(data, Mapping):
            raise FixloopError(
                Diagnostic(shown, 1, 1, "script", "a script maps call keys to replies")
            )
        return cls(data, origin=shown)

    def preflight(self, calls: Sequence[str] = ()) -> None:
        """Before a run changes anything: the script answers every call it will start with.

        `calls` are the keys a workflow knows up front (the first call of each item); a script
        that lacks one was written for another input, and would only turn each of them into an
        inconclusive call and a report of nothing. The file itself was read and checked when
        the backend was made (`from_file`)."""
        missing = [key for key in dict.fromkeys(calls) if not self._replies.get(key)]
        if missing:
            problem = f"no reply for {', '.join(missing)} (the calls this run starts with)"
            raise FixloopError(Diagnostic(self.origin, 1, 1, "script", problem))

    def unplayed(self) -> list[str]:
        """Keys with replies left: a test can assert the run made every call it scripted."""
        return sorted(key for key, replies in self._replies.items() if replies)

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        self.calls.append(request)
        queue = self._replies.get(request.key)
        if not queue:
            return AgentOutcome.inconclusive(
                StopReason.MISSING, f"{request.key or request.role}: no scripted reply"
            )
        reply = queue.pop(0)
        usage = Usage(
            turns=1 + len(reply.tools),
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost_usd=reply.cost_usd,
        )
        denied: list[DeniedWrite] = []
        if reply.tools and request.toolbox is None:
            detail = f"{request.key or request.role}: the script calls tools, but none were lent"
            return AgentOutcome.inconclusive(StopReason.CRASH, detail, usage)
        request.progress(Usage(turns=1))
        _play_tools(reply, request)
        for edit in reply.edits:
            problem = _apply(edit, request, denied)
            if problem is not None:
                outcome = AgentOutcome.inconclusive(StopReason.CRASH, problem, usage)
                return _with_denied(outcome, denied)
        for command in reply.bash:
            if not _shell(command, request):
                outcome = AgentOutcome.inconclusive(StopReason.TIMEOUT, f"bash: {command}", usage)
                return _with_denied(outcome, denied)
        if reply.fail == "crash":
            outcome = AgentOutcome.inconclusive(StopReason.CRASH, "scripted crash", usage)
        elif reply.fail == "timeout":
            outcome = AgentOutcome.inconclusive(StopReason.TIMEOUT, "scripted timeout", usage)
        elif reply.fail == "backend":
            said = reply.raw or "scripted backend failure"
            outcome = AgentOutcome.inconclusive(StopReason.BACKEND_ERROR, said, usage)
        else:
            raw = (
                (reply.raw or "I could not finish.") if reply.fail == "malformed" else reply.output
            )
            outcome = _validated(request, raw, usage)
        return _with_denied(outcome, denied)


def _play_tools(reply: ScriptedReply, request: AgentRequest) -> None:
    """Call the lent tools as the script says, reading versions from their answers."""
    versions: dict[str, str] = {}
    for done, call in enumerate(reply.tools, 1):
        assert request.toolbox is not None
        answer = request.toolbox.call(call.name, with_version(call.input, versions))
        latest_versions([answer.text], versions)
        request.progress(Usage(turns=1 + done))  # each tool call is a turn


def _shell(command: str, request: AgentRequest) -> bool:
    """Run one of the script's shell commands, in the run's sandbox when it chose one; False
    when it ran past its time."""
    if request.sandbox is not None:
        worktree = working_tree_of(request.cwd)
        done = request.sandbox.run(
            ["bash", "-c", command], cwd=request.cwd, worktree=worktree, timeout_s=SHELL_TIMEOUT_S
        )
        return not done.timed_out
    try:
        subprocess.run(
            ["bash", "-c", command],
            cwd=request.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=SHELL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return True


def _with_denied(outcome: AgentOutcome, denied: list[DeniedWrite]) -> AgentOutcome:
    if not denied:
        return outcome
    return AgentOutcome(
        outcome.status,
        outcome.output,
        outcome.reason,
        outcome.detail,
        outcome.usage,
        tuple(denied),
    )


def _validated(request: AgentRequest, raw: object, usage: Usage) -> AgentOutcome:
    if request.output_schema is None:
        return AgentOutcome.inconclusive(
            StopReason.BACKEND_ERROR, f"{request.role}: the role declares no output schema", usage
        )
    try:
        output = parse_output(request.output_schema, raw)
    except (ValueError, ValidationError) as exc:
        text = raw if isinstance(raw, str) else json.dumps(raw, default=str)
        detail = f"{request.output_schema}: {str(exc).splitlines()[0]} (got {text[:200]!r})"
        return AgentOutcome.inconclusive(StopReason.MALFORMED, detail, usage)
    return AgentOutcome(OutcomeStatus.OK, output, usage=usage)


def _apply(edit: ScriptedEdit, request: AgentRequest, denied: list[DeniedWrite]) -> str | None:
    """Make one edit; a refused path is recorded in `denied`; a failed edit returns its reason."""
    tool = "Write" if edit.content is not None else "Edit" if edit.old is not None else "Bash"
    target = resolve_inside(request.cwd, edit.path)
    if isinstance(target, str):
        denied.append(DeniedWrite(tool, edit.path, target))
        return None
    relative = target.relative_to(request.cwd.resolve()).as_posix()
    allowed = {PurePosixPath(path).as_posix() for path in request.writable or ()}
    if request.writable is not None and relative not in allowed:
        denied.append(DeniedWrite(tool, edit.path, "not among the files this call may write"))
        return None
    if edit.delete:
        target.unlink(missing_ok=True)
        return None
    if edit.content is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(edit.content, encoding="utf-8")
        return None
    old, new = edit.old or "", edit.new or ""
    if not target.is_file():
        return f"edit {edit.path}: no such file"
    text = target.read_text(encoding="utf-8")
    if text.count(old) != 1:
        return f"edit {edit.path}: `old` found {text.count(old)} times, expected exactly once"
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return None
