"""Dispatching one role: pack document + inputs → `AgentRequest` → backend → traced outcome.

The role's document is the prompt: its body is rendered with the call's inputs (checked against
the role's declared `fixloop.inputs` first, so a missing or mistyped input is an error naming the
document, never an empty string in a prompt). Tools, model and turn limit come from the role's
frontmatter; the output schema from `fixloop.output`. Every call emits one `agent` event, whatever
its outcome; the run's trace records it, so a run can be audited (and its spend recounted) later.
A backend that fails (`StopReason.BACKEND_ERROR`) raises `BackendFailed` after its event: the run
stops there instead of skipping every item for the same outage.

Around every call, git's instruction files of the tree it works in (`fixloop.gitguard`) are read
before and compared after: a turn that changed the repository's config, hooks or attributes, or
a worktree's git folder, has them put back, a warning, and an inconclusive outcome naming them
(the sandbox should have prevented it; under local, nothing else would).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fixloop.agents.backend import (
    AgentOutcome,
    AgentRequest,
    Backend,
    BackendFailed,
    StopReason,
    Usage,
)
from fixloop.agents.budget import BudgetedBackend, RunBudget
from fixloop.agents.toolbox import Toolbox
from fixloop.diagnostics import FixloopError
from fixloop.documents.inputs import InputError, coerce_inputs
from fixloop.documents.pack import Pack
from fixloop.documents.render import render_template
from fixloop.events import Event, EventKind, EventStream
from fixloop.gitguard import GitFiles
from fixloop.sandboxes.launcher import RunSandbox


def build_request(
    pack: Pack,
    role: str,
    inputs: Mapping[str, Any],
    task: str,
    cwd: Path,
    *,
    writable: Sequence[str] | None = None,
    key: str = "",
    timeout_s: float | None = None,
    max_cost_usd: float | None = None,
    extra_tools: Sequence[str] = (),
    mcp_config: str | None = None,
    toolbox: Toolbox | None = None,
    model: str | None = None,
) -> AgentRequest:
    """The request for `role` (on `model`, else its document's); raises FixloopError
    (file:line) when the inputs do not fit it."""
    agent = pack.agent(role)
    spec = agent.spec
    try:
        values = coerce_inputs(spec.fixloop.inputs, inputs, from_text=False)
    except InputError as exc:
        where = ("fixloop", "inputs", exc.key)  # an undeclared key falls back to `inputs:`
        problem = agent.source.diagnostic("inputs", f"{key or role}: {exc}", *where)
        raise FixloopError(problem) from None
    return AgentRequest(
        role=spec.name,
        system_prompt=render_template(agent.source, values),
        task=task,
        tools=(*spec.tools, *extra_tools),  # extra: an MCP server's, for this call only
        model=model or spec.model,
        output_schema=spec.fixloop.output,
        cwd=cwd,
        writable=None if writable is None else tuple(writable),
        max_turns=spec.max_turns,
        max_cost_usd=max_cost_usd,
        timeout_s=timeout_s,
        key=key or spec.name,
        mcp_config=mcp_config,
        toolbox=toolbox,
    )


@dataclass
class Dispatcher:
    """Sends role calls of one run to one backend, under the run's budget, into its events."""

    pack: Pack
    backend: Backend
    events: EventStream = field(default_factory=EventStream)
    budget: RunBudget | None = None
    timeout_s: float | None = None
    sandbox: RunSandbox | None = None  # set once the run chose it (`Workflow.start_run`)
    models: Mapping[str, str] = field(default_factory=dict)  # role → model, over the documents'

    def __post_init__(self) -> None:
        if self.budget is not None and not isinstance(self.backend, BudgetedBackend):
            self.backend = BudgetedBackend(self.backend, self.budget)

    def call(
        self,
        role: str,
        inputs: Mapping[str, Any],
        task: str,
        cwd: Path,
        *,
        writable: Sequence[str] | None = None,
        key: str = "",
        extra_tools: Sequence[str] = (),
        mcp_config: str | None = None,
        toolbox: Toolbox | None = None,
    ) -> AgentOutcome:
        request = build_request(
            self.pack,
            role,
            inputs,
            task,
            cwd,
            writable=writable,
            key=key,
            timeout_s=self.timeout_s,
            extra_tools=extra_tools,
            mcp_config=mcp_config,
            toolbox=toolbox,
            model=self.models.get(self.pack.agent(role).spec.name),
        )
        if self.sandbox is not None:
            request = replace(request, sandbox=self.sandbox)
        started = time.monotonic()
        request = replace(request, on_progress=self._progress_of(request, started))
        request.progress(Usage())  # the call begins: a live display shows it from now on
        guarded = GitFiles.of(cwd)
        outcome = self.backend.dispatch(request)
        changed = guarded.put_back() if guarded is not None else []
        if changed:
            named = ", ".join(changed)
            detail = f"the {request.role}'s turn changed {named}; put back"
            outcome = replace(
                AgentOutcome.inconclusive(StopReason.GIT_FILES, detail, outcome.usage),
                denied=outcome.denied,
            )
        self.events.emit(agent_event(request, outcome, time.monotonic() - started))
        if changed:
            self.events.emit(
                Event(
                    EventKind.WARNING,
                    f"{request.key}: {detail} (its sandbox should have kept git's files out of "
                    "reach); the call counts as inconclusive",
                )
            )
        if outcome.reason is StopReason.BACKEND_ERROR:
            # Not this call's problem but the backend's: the next call would meet it too.
            raise BackendFailed(request.key, outcome.detail)
        return outcome

    def _progress_of(self, request: AgentRequest, started: float) -> Callable[[Usage], None]:
        def progress(usage: Usage) -> None:
            data = {
                "key": request.key,
                "role": request.role,
                "model": request.model,
                "turns": usage.turns,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cost_usd": usage.cost_usd,
                "elapsed_s": round(time.monotonic() - started, 3),
            }
            self.events.emit(Event(EventKind.AGENT_PROGRESS, request.key, data=data))

        return progress


def agent_event(request: AgentRequest, outcome: AgentOutcome, elapsed_s: float) -> Event:
    usage = outcome.usage
    data: dict[str, Any] = {
        "key": request.key,
        "role": request.role,
        "model": request.model,
        "outcome": str(outcome.status),
        "reason": str(outcome.reason),
        "detail": outcome.detail,
        "turns": usage.turns,
        "cost_usd": usage.cost_usd,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "elapsed_s": round(elapsed_s, 3),
        "denied": [{"tool": d.tool, "path": d.path, "reason": d.reason} for d in outcome.denied],
    }
    if outcome.served_model:  # what answered, when the server said (an alias may resolve)
        data["served_model"] = outcome.served_model
    return Event(EventKind.AGENT, f"{request.role} {outcome.status}", data=data)
