"""The openai backend: a role call as an agent loop against any OpenAI-compatible Chat Completions
server (OpenAI, DeepSeek, Gemini, Qwen, vLLM, Ollama, llama.cpp), with fixloop's own tools.

The model only asks; fixloop runs every tool itself, under the rules every backend keeps:

- the role's rendered document is the system prompt, the task the first user message;
- the tools are the role's own (`role_tools.py`: Read, Write, Edit, Glob, Grep, Bash as its
  frontmatter lists them, under the call's write scope and the run's sandbox) and the tools the
  workflow lends the call (`toolbox.py`, by their plain names, when the role lists them), plus
  `submit_result`, whose parameters are the role's output schema: the one way to answer;
- an answer is held to the schema (`structured.py`); one that does not validate is sent back
  once or twice as the tool's error, then the call is inconclusive (`malformed_output`). A final
  text that is the JSON of a valid answer counts too; prose does not;
- budgets, each an inconclusive outcome naming it: turns (`turn_limit`: the role's maxTurns,
  else the project's `max-turns`, else 50), tokens (`token_budget`: input and output tokens of
  every turn of the call, 150,000 by default), cost (`call_budget`: the call's cap, which a run
  budget lowers to what the run has left; a cap without prices cannot be kept and is refused
  before any request), wall time (`timeout`: the call's timeout bounds every request and
  command);
- every request carries the call's key (`X-Fixloop-Call`), for a gateway's logs and the
  scripted test server; the key never leaves this process but in the Authorization header.

Every failure (401, 429, 5xx, a refused request, a server that cannot be reached) is one line in
an inconclusive outcome; `dispatch` does not raise for them.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import openai
from pydantic import BaseModel

from fixloop.agents.backend import (
    CALL_HEADER,
    AgentOutcome,
    AgentRequest,
    OutcomeStatus,
    StopReason,
    Usage,
)
from fixloop.agents.openai_config import OpenAITarget
from fixloop.agents.openai_errors import describe_error
from fixloop.agents.role_tools import RoleTools
from fixloop.agents.structured import FinalText, OutputFormat, parse_answer, without_refs
from fixloop.agents.toolbox import TOOL_SERVER, Toolbox, ToolSpec, qualified
from fixloop.secret_files import SecretFiles

SUBMIT = "submit_result"
MAX_ANSWER_RETRIES = 2
REQUEST_TIMEOUT_S = 600.0
MAX_RETRIES = 2
TOOL_NOTE = (
    "\n\n---\nYou work through function calls: the tools above are the functions offered to "
    "you (file paths may be relative to your working directory, {cwd}). {answer}"
)
ANSWER_NOTE = (
    f"When you are done, call {SUBMIT} once with your result as its arguments; that call is "
    "your answer."
)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _function(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.input_schema),
        },
    }


def lent_granted(request: AgentRequest) -> Toolbox | None:
    """The call's lent toolbox when the role lists its tools (`mcp__fixloop__…`), else None."""
    if request.toolbox is None:
        return None
    wanted = {"*", f"mcp__{TOOL_SERVER}", f"mcp__{TOOL_SERVER}__*"}
    listed = set(request.tools)
    names = {spec.name for spec in request.toolbox.specs()}
    if listed & wanted or any(qualified(name) in listed for name in names):
        return request.toolbox
    return None


@dataclass
class _Call:
    """One role call in progress: the conversation, what it spent, what it was refused."""

    request: AgentRequest
    target: OpenAITarget
    own: RoleTools
    lent: Toolbox | None
    fmt: OutputFormat | None
    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    bad_answers: int = 0
    served_model: str = ""  # the `model` of the server's last answer
    nudged: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def deadline(self) -> float | None:
        limit = self.request.timeout_s
        return None if limit is None else self.started + limit

    def usage(self) -> Usage:
        return Usage(
            turns=self.turns,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.target.cost(self.input_tokens, self.output_tokens),
            duration_s=time.monotonic() - self.started,
        )

    def stop(self, reason: StopReason, detail: str) -> AgentOutcome:
        return AgentOutcome(
            OutcomeStatus.INCONCLUSIVE,
            None,
            reason,
            detail,
            self.usage(),
            tuple(self.own.denied),
            self.served_model,
        )

    def done(self, output: BaseModel) -> AgentOutcome:
        return AgentOutcome(
            OutcomeStatus.OK,
            output,
            usage=self.usage(),
            denied=tuple(self.own.denied),
            served_model=self.served_model,
        )

    def tools(self) -> list[dict[str, Any]]:
        specs = [*self.own.specs(), *(self.lent.specs() if self.lent is not None else ())]
        functions = [_function(spec) for spec in specs]
        if self.fmt is not None:
            schema = without_refs(self.fmt.schema)
            functions.append(_function(ToolSpec(SUBMIT, "Your result; ends your turn.", schema)))
        return functions

    def budget_spent(self) -> AgentOutcome | None:
        """The budget that stops the call before its next request, if one does."""
        request, target = self.request, self.target
        max_turns = request.max_turns or target.max_turns
        if self.turns >= max_turns:
            detail = f"stopped at the turn limit ({max_turns}) after {self.turns} turns"
            return self.stop(StopReason.TURN_LIMIT, detail)
        used = self.input_tokens + self.output_tokens
        allowed = target.call_token_budget
        if request.max_tokens is not None:  # the run's token budget has less left
            allowed = min(allowed, request.max_tokens)
        if used >= allowed:
            detail = f"the call used {used} tokens of its budget of {allowed}"
            return self.stop(StopReason.TOKEN_BUDGET, detail)
        cap = request.max_cost_usd
        if cap is not None and not target.priced:
            detail = (
                f"a cost cap (${cap:.4f}) cannot be kept without prices: set price-input and "
                "price-output (USD per million tokens) under [openai] in fixloop.toml"
            )
            return self.stop(StopReason.CALL_BUDGET, detail)
        cost = self.usage().cost_usd
        if cap is not None and cost >= cap:
            detail = f"call cost ${cost:.4f} reached its cap ${cap:.4f}"
            return self.stop(StopReason.CALL_BUDGET, detail)
        deadline = self.deadline
        if deadline is not None and time.monotonic() >= deadline:
            return self.stop(StopReason.TIMEOUT, f"no result within {request.timeout_s:.1f}s")
        return None

    def answer_tool(self, call_id: str, name: str, raw_arguments: str) -> AgentOutcome | None:
        """Run one tool call and append its result; an outcome when it was the final answer."""
        problem: str | None
        try:
            arguments = json.loads(raw_arguments or "{}")
        except json.JSONDecodeError as exc:
            arguments, problem = None, f"the arguments are not JSON: {exc.msg}"
        else:
            problem = None if isinstance(arguments, dict) else "the arguments are not an object"
        if name == SUBMIT and self.fmt is not None:
            if problem is None:
                assert self.request.output_schema is not None
                try:
                    return self.done(parse_answer(self.request.output_schema, self.fmt, arguments))
                except ValueError as exc:
                    problem = str(exc)
            self.bad_answers += 1
            if self.bad_answers > MAX_ANSWER_RETRIES:
                return self.stop(StopReason.MALFORMED, problem.splitlines()[0])
            self._tool_result(call_id, json.dumps({"ok": False, "error": problem}))
            return None
        if problem is not None:
            self._tool_result(call_id, json.dumps({"ok": False, "error": problem}))
            return None
        assert isinstance(arguments, dict)
        lent = self.lent
        if lent is not None and name in {spec.name for spec in lent.specs()}:
            reply = lent.call(name, arguments)
        else:
            reply = self.own.call(name, arguments)
        self._tool_result(call_id, reply.text)
        return None

    def _tool_result(self, call_id: str, text: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def answer_text(self, text: str) -> AgentOutcome | None:
        """A final text: the answer of a role without a schema, or the JSON of one; None when
        the model is asked once more for submit_result."""
        if self.fmt is None:
            return self.done(FinalText(text))
        assert self.request.output_schema is not None
        stripped = text.strip()
        fenced = _FENCE.match(stripped)
        candidate = fenced[1] if fenced else stripped
        try:
            return self.done(parse_answer(self.request.output_schema, self.fmt, candidate))
        except ValueError as exc:
            problem = str(exc)
        if not self.nudged:
            self.nudged = True
            self.messages.append({"role": "user", "content": f"Call {SUBMIT} with your result."})
            return None
        if problem.startswith("output is not JSON"):
            said = f": {stripped.splitlines()[0][:120]!r}" if stripped else ""
            return self.stop(StopReason.MISSING, f"the role gave no result, only prose{said}")
        return self.stop(StopReason.MALFORMED, problem.splitlines()[0])


class OpenAIBackend:
    """Dispatches role calls to an OpenAI-compatible server. Thread-safe: calls share a client."""

    name = "openai"

    def __init__(
        self,
        target: OpenAITarget,
        *,
        environ: Mapping[str, str] | None = None,
        max_retries: int = MAX_RETRIES,
        secret_files: SecretFiles | None = None,
    ) -> None:
        """`secret_files`: the project's (`secret-files` in its settings), read once where the
        run starts, never from a worktree a role may have written."""
        self.target = target
        self.secret_files = secret_files or SecretFiles()
        self._environ = environ
        self.max_retries = max_retries
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        # A refused key (401, 403) stays refused: later calls say so without a request.
        self.refused: str | None = None

    def preflight(self, calls: Sequence[str] = ()) -> None:
        """Nothing to ask a server: the target was resolved (key present, URL and model named)
        when the backend was made, and a request would cost money."""
        del calls

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                environ = os.environ if self._environ is None else self._environ
                self._client = openai.OpenAI(
                    api_key=self.target.api_key(environ),
                    base_url=self.target.base_url,
                    max_retries=self.max_retries,
                    timeout=REQUEST_TIMEOUT_S,
                )
            return self._client

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        if not request.cwd.is_dir():
            detail = f"the worktree {request.cwd} does not exist"
            return AgentOutcome.inconclusive(StopReason.BACKEND_ERROR, detail)
        if self.refused is not None:
            return AgentOutcome.inconclusive(StopReason.BACKEND_ERROR, self.refused)
        fmt = OutputFormat.for_schema(request.output_schema) if request.output_schema else None
        own = RoleTools(request, self.secret_files)
        call = _Call(request, self.target, own, lent_granted(request), fmt)
        own.deadline = call.deadline
        answer = ANSWER_NOTE if fmt is not None else "Your last message is your answer."
        system = request.system_prompt + TOOL_NOTE.format(cwd=request.cwd, answer=answer)
        call.messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": request.task},
        ]
        tools = call.tools()
        while True:
            outcome = call.budget_spent() or self._turn(call, tools)
            if outcome is not None:
                return outcome

    def _turn(self, call: _Call, tools: list[dict[str, Any]]) -> AgentOutcome | None:
        """One model request and the tool calls it asked for; an outcome once the call ends."""
        request = call.request
        deadline = call.deadline
        timeout = REQUEST_TIMEOUT_S
        if deadline is not None:
            timeout = max(min(timeout, deadline - time.monotonic()), 0.1)
        try:
            response = self.client().chat.completions.create(
                model=self.target.model_for(request.model),
                messages=call.messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                extra_headers={CALL_HEADER: quote(request.key or request.role, safe="/")},
                timeout=timeout,
            )
        except openai.OpenAIError as exc:
            if deadline is not None and time.monotonic() >= deadline:
                # The SDK's retries of a slow server ran past the call's time: that is it.
                return call.stop(StopReason.TIMEOUT, f"no result within {request.timeout_s}s")
            reason, detail = describe_error(exc, self.target, self.max_retries)
            if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
                self.refused = detail
            return call.stop(reason, detail)
        call.turns += 1
        call.served_model = str(getattr(response, "model", "") or "")[:200]
        if response.usage is not None:
            call.input_tokens += response.usage.prompt_tokens or 0
            call.output_tokens += response.usage.completion_tokens or 0
        request.progress(call.usage())  # a live display shows the turn, its tokens and cost
        if not response.choices:
            return call.stop(StopReason.CRASH, "the server answered with no choices")
        message = response.choices[0].message
        tool_calls = [c for c in message.tool_calls or [] if c.type == "function"]
        call.messages.append(_assistant(message.content, tool_calls))
        if not tool_calls:
            return call.answer_text(message.content or "")
        for tool_call in tool_calls:
            function = tool_call.function
            outcome = call.answer_tool(tool_call.id, function.name, function.arguments)
            if outcome is not None:
                return outcome
        return None


def _assistant(content: str | None, tool_calls: Sequence[Any]) -> dict[str, Any]:
    """The model's message as it goes back in the conversation."""
    # The API's form: no content beside tool calls is null, not "" (some servers refuse "").
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if not tool_calls:
        message["content"] = content or ""
    else:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in tool_calls
        ]
    return message


__all__ = ["SUBMIT", "OpenAIBackend", "lent_granted"]
