"""The seam between workflows and models.

A workflow hands a backend one `AgentRequest` (a role's rendered prompt, its tools and model, the
task, the worktree and the files it may write) and gets back an `AgentOutcome`. The outcome is
`ok` only when the role returned output that validates against its schema; anything else (crash,
malformed output, timeout, budget) is `inconclusive`, with a reason. Workflows never see a raw
model answer, so they cannot mistake a missing result for a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from fixloop.agents.toolbox import Toolbox
from fixloop.diagnostics import Diagnostic, FixloopError
from fixloop.sandboxes.launcher import RunSandbox

# Every model request of a call carries its key (`fixer/CR-01/iteration-1`, percent-encoded):
# for a gateway's logs, and for the scripted test servers, which answer by key.
CALL_HEADER = "X-Fixloop-Call"


class OutcomeStatus(StrEnum):
    OK = "ok"
    INCONCLUSIVE = "inconclusive"


class StopReason(StrEnum):
    """Why an outcome is inconclusive (or `NONE` when it is ok)."""

    NONE = "none"
    CRASH = "crash"
    MALFORMED = "malformed_output"
    MISSING = "missing_output"
    TIMEOUT = "timeout"
    TURN_LIMIT = "turn_limit"
    CALL_BUDGET = "call_budget"
    TOKEN_BUDGET = "token_budget"  # noqa: S105 - a reason, not a secret; the call's input and output tokens reached its cap
    RUN_BUDGET = "run_budget"
    BACKEND_ERROR = "backend_error"
    GIT_FILES = "changed_git_files"  # the turn wrote git's config, hooks or attributes


@dataclass(frozen=True)
class AgentRequest:
    role: str  # agent name, e.g. "fixer"
    system_prompt: str  # the role document rendered with its inputs
    task: str  # the user message: what to do now
    tools: tuple[str, ...]
    model: str
    output_schema: str | None  # schema name from fixloop.schemas.registry
    cwd: Path  # the worktree the role works in
    # Files the role may write (relative to cwd); None means anywhere inside cwd.
    writable: tuple[str, ...] | None = None
    max_turns: int | None = None
    max_cost_usd: float | None = None
    # Input and output tokens the call may use, all turns together (a run's token budget lowers
    # it to what the run has left); None: the backend's own cap.
    max_tokens: int | None = None
    timeout_s: float | None = None
    # Identifies this call in a script or trace, e.g. "fixer/CR-01/round-1".
    key: str = ""
    # Tools the workflow lends this call (`agents/toolbox.py`); None: the role's tools only.
    toolbox: Toolbox | None = field(default=None, compare=False, repr=False)
    # An MCP config file (`{"mcpServers": ...}`) whose servers the call may use (Figma's, for a
    # design task); their tools are among `tools`.
    mcp_config: str | None = None
    # The run's sandbox (`fixloop.sandboxes.launcher`): where the scripted model's shell
    # commands run. None: no run chose one (they run directly, as before).
    sandbox: RunSandbox | None = field(default=None, compare=False, repr=False)
    # Told the usage so far while the call runs (each turn, each tool call), for live progress;
    # a backend that cannot say leaves it uncalled. Set by the dispatcher.
    on_progress: Callable[[Usage], None] | None = field(default=None, compare=False, repr=False)

    def progress(self, usage: Usage) -> None:
        if self.on_progress is not None:
            self.on_progress(usage)


@dataclass(frozen=True)
class Usage:
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_s: float = 0.0


@dataclass(frozen=True)
class DeniedWrite:
    tool: str
    path: str
    reason: str


@dataclass(frozen=True)
class AgentOutcome:
    status: OutcomeStatus
    output: BaseModel | None = None
    reason: StopReason = StopReason.NONE
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    denied: tuple[DeniedWrite, ...] = ()
    # The model the server said answered (its last answer's `model`), which may differ from the
    # name asked for (an alias, a gateway's routing); "" when the backend is not told.
    served_model: str = ""

    @property
    def ok(self) -> bool:
        return self.status is OutcomeStatus.OK and self.output is not None

    @classmethod
    def inconclusive(
        cls, reason: StopReason, detail: str, usage: Usage | None = None
    ) -> AgentOutcome:
        return cls(OutcomeStatus.INCONCLUSIVE, None, reason, detail, usage or Usage())


class BackendFailed(FixloopError):
    """The backend itself failed (`StopReason.BACKEND_ERROR`: a rejected key, an outage, a rate
    limit, a CLI that does not start), not the model's work: every later call would fail the
    same way, so the run stops here, in one line naming the cause, exit 1. Raised by the
    dispatcher after the call's event is traced; a workflow puts back what the call may have
    left (fix-findings works in the user's tree) and lets it go on up."""

    def __init__(self, key: str, detail: str) -> None:
        self.key = key
        self.detail = detail
        message = (
            f"{key}: {detail}; the run stopped, nothing more was tried;"
            " run the same command again once the backend answers"
        )
        super().__init__(Diagnostic("--backend", 1, 1, "backend", message), exit_code=1)


class Backend(Protocol):
    """Runs one role call to completion. Implementations must not raise for model failures.

    A backend may also have `preflight(calls)`: called once before a run changes anything, it
    raises a FixloopError (one line, exit 2) when the backend cannot answer at all: no login or
    key for a real model, a script without replies for `calls` (the keys the run will start
    with, when the workflow knows them up front). It must not spend money."""

    name: str

    def dispatch(self, request: AgentRequest) -> AgentOutcome: ...


def preflight(backend: object, calls: Sequence[str] = ()) -> None:
    """Run `backend.preflight(calls)` when the backend has one (a backend of your own may not)."""
    check = getattr(backend, "preflight", None)
    if callable(check):
        check(calls)
