"""The claude backend: one role call through claude-agent-sdk and the real Claude Code CLI.

What a call gets, and why:
- the role's rendered document as the whole system prompt, its frontmatter tools as the only tools
  (auto-approved), its model and turn limit, the worktree as cwd;
- `setting_sources=[]`: the user's and the project's Claude settings (hooks, permissions, MCP
  servers) must not change what a pipeline does;
- the role's output schema as a JSON-schema output format, validated again with pydantic here,
  because upstream structured output is known to arrive as a string or wrapped in `{"output": …}`;
  anything that does not validate is inconclusive;
- a PreToolUse hook enforcing the write scope (`scope.py`) and a permission callback that refuses
  whatever the role was not given: it runs headless, so nothing may wait for a human;
- the tools a workflow lends the call (`toolbox.py`) as an in-process MCP server, and with them
  the built-in tools they replace refused by that hook;
- Bash in the CLI's sandbox where the machine has one (`claude_sandbox.py`): read-only outside the
  worktree;
- a child environment without `CLAUDECODE` (a nested CLI refuses or hangs with it) and an output
  buffer large enough for big tool results;
- at a call's deadline its CLI gets SIGTERM at once: the SDK's close would first wait 5 s for it
  to exit on its own (to finish its session file, which fixloop never reads), which a CLI stopped
  mid-request never does. It is this process's child marked in its environment (`CALL_MARK`).

Every failure of the model or the CLI becomes an inconclusive `AgentOutcome` with a one-line
detail; `dispatch` does not raise for them.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
import warnings
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    CanUseToolShadowedWarning,
    ClaudeAgentOptions,
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
    query,
)
from pydantic import BaseModel

from fixloop.agents.backend import (
    CALL_HEADER,
    AgentOutcome,
    AgentRequest,
    DeniedWrite,
    OutcomeStatus,
    StopReason,
    Usage,
)
from fixloop.agents.claude_preflight import check_claude_login, find_cli, login_hint
from fixloop.agents.claude_sandbox import (
    bash_sandbox_available,
    sandbox_litter_removed,
    sandbox_settings,
)
from fixloop.agents.claude_tools import tool_server
from fixloop.agents.scope import WRITE_TOOLS, WriteScope
from fixloop.agents.structured import FinalText, OutputFormat, parse_answer
from fixloop.agents.toolbox import TOOL_SERVER
from fixloop.documents.tools import parse_tool
from fixloop.process_table import marked_by_environment, signal_process

# Tool results (a whole file, a long test log) arrive as one JSON line; the SDK's 1 MiB default
# turns a large one into a hard error.
MAX_BUFFER_BYTES = 64 * 1024 * 1024
STDERR_LINES = 20


CUSTOM_HEADERS_ENV = "ANTHROPIC_CUSTOM_HEADERS"
CALL_MARK = "FIXLOOP_CLAUDE_CALL"  # `CALL_MARK=<call id>` in a call's CLI environment
INPUT_TOKEN_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def call_headers(request: AgentRequest, env: Mapping[str, str]) -> str:
    """The CLI's extra request headers: the user's own, plus the call's key.

    The key (`fixer/CR-01/iteration-1`) tags every model request of the call, for a gateway's
    logs and for the scripted test server, which answers by key as the scripted backend does. It
    is percent-encoded: a finding id is user data and must not break out of its header line.
    """
    own = env.get(CUSTOM_HEADERS_ENV, os.environ.get(CUSTOM_HEADERS_ENV, "")).strip()
    tag = f"{CALL_HEADER}: {quote(request.key or request.role, safe='/')}"
    return f"{own}\n{tag}" if own else tag


@dataclass
class _Call:
    """What one call produced while it ran."""

    scope: WriteScope
    # Tools the role was given whole (`Edit`, not `Bash(git diff:*)`).
    granted: frozenset[str] = frozenset()
    # Built-in tools the call's toolbox stands in for: refused, whatever the role lists.
    replaced: frozenset[str] = frozenset()
    denied: list[DeniedWrite] = field(default_factory=list)
    mark: str = field(default_factory=lambda: uuid.uuid4().hex)  # its CLI's `CALL_MARK`
    expired: bool = False  # set by the watchdog thread, read once the call's loop ended
    result: ResultMessage | None = None
    last_text: str = ""
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    # What the call has used so far, for live progress; the result's own figures are the record.
    so_far: Usage = field(default_factory=Usage)
    served_model: str = ""  # the model the call's own last turn came from, as the CLI says

    async def pre_tool_use(
        self, hook_input: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        del tool_use_id, context
        tool = str(hook_input.get("tool_name", ""))
        tool_input = hook_input.get("tool_input") or {}
        arguments = tool_input if isinstance(tool_input, dict) else {}
        denial = self.scope.check(tool, arguments)
        if tool in self.replaced:
            reason = f"{tool} is not available in this call; use the mcp__{TOOL_SERVER}__ tools"
            denial = DeniedWrite(tool, str(arguments.get(WRITE_TOOLS.get(tool, ""), "")), reason)
        if denial is None:
            return {}
        self.denied.append(denial)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": f"fixloop scope: {denial.reason}",
            }
        }

    async def can_use_tool(
        self, tool: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        # Reached by calls the tool list did not pre-approve: a Bash command outside the role's
        # `Bash(git diff:*)` patterns, or a granted tool the CLI still asks about (it always asks
        # before writing under a `.claude/` folder, where workflows keep their worktrees).
        # Headless: decide now, never wait for a human.
        del context
        denial = self.scope.check(tool, tool_input)
        if denial is not None:
            self.denied.append(denial)
            return PermissionResultDeny(message=f"fixloop scope: {denial.reason}")
        if tool in self.granted:
            return PermissionResultAllow()
        return PermissionResultDeny(
            message=f"fixloop: {tool} with this input is not among the tools this role was given"
        )

    def expire(self) -> None:
        """The call's deadline passed: SIGTERM to its CLI, this process's child marked `mark`.
        The stream then ends however it ends (an error, a cancellation); the call timed out."""
        self.expired = True
        for info in marked_by_environment(f"{CALL_MARK}={self.mark}"):
            if info.ppid == os.getpid():
                signal_process(info, signal.SIGTERM)

    def observe(self, message: object, request: AgentRequest | None = None) -> None:
        if isinstance(message, ResultMessage):
            self.result = message
        elif isinstance(message, AssistantMessage):
            texts = [block.text for block in message.content if isinstance(block, TextBlock)]
            if texts:
                self.last_text = "\n".join(texts)
            if message.parent_tool_use_id is None and message.model:
                self.served_model = str(message.model)[:200]
            raw, was = message.usage or {}, self.so_far
            self.so_far = Usage(  # a subagent's turn is not one of the call's own
                was.turns + int(message.parent_tool_use_id is None),
                was.input_tokens + sum(int(raw.get(key) or 0) for key in INPUT_TOKEN_KEYS),
                was.output_tokens + int(raw.get("output_tokens") or 0),
            )
            if request is not None:  # the cost is known only at the end, from the result
                request.progress(self.so_far)


def parse_structured(name: str, fmt: OutputFormat, result: ResultMessage) -> BaseModel:
    """The role's output from a result message; raises ValueError when nothing validates."""
    raw: object = result.structured_output
    if raw is None:
        # Without a StructuredOutput call the final text is the only candidate; prose is not.
        answer = (result.result or "").strip()
        try:
            raw = json.loads(answer)
        except json.JSONDecodeError:
            said = f": {answer.splitlines()[0][:120]!r}" if answer else ""
            raise LookupError(f"the role gave no structured output, only prose{said}") from None
    return parse_answer(name, fmt, raw)


def _usage(result: ResultMessage | None, duration_s: float) -> Usage:
    if result is None:
        return Usage(duration_s=duration_s)
    raw = result.usage or {}
    input_tokens = sum(int(raw.get(key) or 0) for key in INPUT_TOKEN_KEYS)
    return Usage(
        turns=result.num_turns,
        input_tokens=input_tokens,
        output_tokens=int(raw.get("output_tokens") or 0),
        cost_usd=float(result.total_cost_usd or 0.0),
        duration_s=duration_s,
    )


def _login() -> str:
    return login_hint(find_cli(None), os.environ)


def _granted(tools: tuple[str, ...]) -> frozenset[str]:
    entries = [parse_tool(entry) for entry in tools]
    return frozenset(e.name for e in entries if e is not None and e.pattern is None)


def _inconclusive(reason: StopReason, detail: str, usage: Usage, call: _Call) -> AgentOutcome:
    return AgentOutcome(
        OutcomeStatus.INCONCLUSIVE,
        None,
        reason,
        detail,
        usage,
        tuple(call.denied),
        call.served_model,
    )


def _result_outcome(request: AgentRequest, call: _Call, usage: Usage) -> AgentOutcome:
    result = call.result
    if result is None:
        tail = f": {call.stderr[-1]}" if call.stderr else ""
        return _inconclusive(StopReason.MISSING, f"the CLI gave no result{tail}", usage, call)
    subtype = result.subtype
    if subtype == "error_max_turns":
        detail = f"stopped at the turn limit ({request.max_turns}) after {result.num_turns} turns"
        return _inconclusive(StopReason.TURN_LIMIT, detail, usage, call)
    if subtype == "error_max_budget_usd":
        detail = f"call cost ${usage.cost_usd:.4f} reached its cap ${request.max_cost_usd or 0:.4f}"
        return _inconclusive(StopReason.CALL_BUDGET, detail, usage, call)
    if subtype == "error_max_structured_output_retries":
        said = "; ".join(result.errors or []) or subtype
        return _inconclusive(StopReason.MALFORMED, said.splitlines()[0], usage, call)
    if subtype != "success" or result.is_error:
        said = "; ".join(result.errors or []) or (result.result or "").strip() or subtype
        first = said.splitlines()[0]
        what = "the model call failed" if subtype == "success" else f"the CLI ended with {subtype}"
        needs_login = result.api_error_status == 401 or any(
            words in first.lower() for words in ("not logged in", "api key")
        )
        hint = f" (set ANTHROPIC_API_KEY, or {_login()})" if needs_login else ""
        return _inconclusive(StopReason.BACKEND_ERROR, f"{what}: {first}{hint}", usage, call)
    if request.output_schema is None:
        answer = FinalText(result.result or call.last_text)
        return AgentOutcome(
            OutcomeStatus.OK,
            answer,
            usage=usage,
            denied=tuple(call.denied),
            served_model=call.served_model,
        )
    fmt = OutputFormat.for_schema(request.output_schema)
    try:
        output = parse_structured(request.output_schema, fmt, result)
    except LookupError as exc:
        return _inconclusive(StopReason.MISSING, str(exc), usage, call)
    except ValueError as exc:
        return _inconclusive(StopReason.MALFORMED, str(exc), usage, call)
    return AgentOutcome(
        OutcomeStatus.OK,
        output,
        usage=usage,
        denied=tuple(call.denied),
        served_model=call.served_model,
    )


async def aclose(stream: AsyncIterator[object]) -> None:
    # `async for` does not close a generator it leaves early; closing ends the CLI subprocess.
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        await closer()


def _error_outcome(exc: Exception, call: _Call, usage: Usage) -> AgentOutcome:
    tail = f" (stderr: {call.stderr[-1]})" if call.stderr else ""
    if isinstance(exc, CLINotFoundError):
        reason, detail = StopReason.BACKEND_ERROR, f"Claude Code CLI not found: {exc}"
    elif isinstance(exc, CLIConnectionError):
        reason, detail = StopReason.BACKEND_ERROR, f"could not start Claude Code: {exc}{tail}"
    elif isinstance(exc, CLIJSONDecodeError):
        reason, detail = StopReason.CRASH, f"unreadable output from Claude Code: {exc}"
    elif isinstance(exc, ProcessError):
        reason, detail = StopReason.CRASH, f"Claude Code exited with {exc.exit_code}{tail}"
    else:
        reason, detail = StopReason.BACKEND_ERROR, f"{type(exc).__name__}: {exc}{tail}"
    return _inconclusive(reason, detail.splitlines()[0], usage, call)


def configured_servers(path: str | None) -> dict[str, Any]:
    """The `mcpServers` of an MCP config file (Claude Code's format); {} without one."""
    if not path:
        return {}
    try:
        servers = json.loads(Path(path).read_text(encoding="utf-8")).get("mcpServers")
    except (OSError, ValueError, AttributeError):
        return {}
    return dict(servers) if isinstance(servers, dict) else {}


class ClaudeBackend:
    """Dispatches a role call to Claude Code. Thread-safe: each call runs its own event loop."""

    name = "claude"

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        cli_path: Path | str | None = None,
        max_buffer_bytes: int = MAX_BUFFER_BYTES,
        sandbox_bash: bool | None = None,
    ) -> None:
        """`sandbox_bash`: run Bash in the CLI's sandbox (None: whenever the machine can)."""
        self.env = {key: value for key, value in (env or {}).items() if key != "CLAUDECODE"}
        # Whole-tool allow entries do skip the permission callback; scope is enforced by the
        # PreToolUse hook, which always runs, so the SDK's advice is already followed.
        warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)
        self.cli_path = cli_path
        self.max_buffer_bytes = max_buffer_bytes
        self.sandbox_bash = bash_sandbox_available() if sandbox_bash is None else sandbox_bash

    def preflight(self, calls: Sequence[str] = ()) -> None:
        """The CLI is there and logged in, or has a key; see `claude_preflight`. Costs nothing."""
        del calls  # a real model answers any call
        check_claude_login(self.cli_path, self.env)

    def _options(self, request: AgentRequest, call: _Call) -> ClaudeAgentOptions:
        entries = [parse_tool(entry) for entry in request.tools]
        # MCP tools come from their server, not from the CLI's list of built-in tools.
        base_tools = sorted(
            {e.name for e in entries if e is not None and not e.name.startswith("mcp__")}
        )
        write_matcher = "|".join(sorted({*WRITE_TOOLS, *call.replaced}))
        toolbox = request.toolbox
        servers = configured_servers(request.mcp_config)  # the user's (Figma's, say)
        if toolbox is not None:
            servers[TOOL_SERVER] = tool_server(toolbox)
        return ClaudeAgentOptions(
            system_prompt=request.system_prompt,
            tools=base_tools,
            allowed_tools=list(request.tools),
            permission_mode="default",
            mcp_servers=servers,
            can_use_tool=call.can_use_tool,
            hooks={"PreToolUse": [HookMatcher(matcher=write_matcher, hooks=[call.pre_tool_use])]},
            model=None if request.model == "inherit" else request.model,
            max_turns=request.max_turns,
            max_budget_usd=request.max_cost_usd,
            cwd=str(request.cwd),
            setting_sources=[],
            # The SDK drops an inherited CLAUDECODE; `self.env` was cleaned of it too.
            env={
                **self.env,
                CUSTOM_HEADERS_ENV: call_headers(request, self.env),
                CALL_MARK: call.mark,
            },
            output_format=(
                OutputFormat.for_schema(request.output_schema).option()
                if request.output_schema
                else None
            ),
            max_buffer_size=self.max_buffer_bytes,
            sandbox=sandbox_settings() if self.sandbox_bash else None,
            cli_path=self.cli_path,
            stderr=call.stderr.append,
        )

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        if not request.cwd.is_dir():
            detail = f"the worktree {request.cwd} does not exist"
            return AgentOutcome.inconclusive(StopReason.BACKEND_ERROR, detail)
        call = _Call(
            WriteScope.create(request.cwd, request.writable),
            _granted(request.tools),
            request.toolbox.replaces if request.toolbox is not None else frozenset(),
        )
        started = time.monotonic()
        litter = sandbox_litter_removed(request.cwd) if self.sandbox_bash else nullcontext()
        answered = False  # the run ended on its own, not by an error (a result may be in)
        try:
            with litter:
                anyio.run(self._run, request, call)
            answered = call.result is not None
        except TimeoutError:
            call.expired = True
        except (ClaudeSDKError, OSError) as exc:
            usage = _usage(call.result, time.monotonic() - started)
            # ResultError comes after the error result was already seen: the result says more.
            # A CLI the watchdog stopped ends in an error too: the call timed out.
            if call.result is None and not call.expired:
                return _error_outcome(exc, call, usage)
        if call.expired and not answered:  # a result in as the deadline passed still counts
            usage = _usage(call.result, time.monotonic() - started)
            detail = f"no result within {request.timeout_s or 0:.1f}s"
            return _inconclusive(StopReason.TIMEOUT, detail, usage, call)
        return _result_outcome(request, call, _usage(call.result, time.monotonic() - started))

    async def _run(self, request: AgentRequest, call: _Call) -> None:
        stream = query(prompt=request.task, options=self._options(request, call))
        limit = request.timeout_s
        deadline = anyio.fail_after(limit) if limit is not None else nullcontext()
        # The watchdog stops the CLI at the deadline itself: the cancellation `fail_after`
        # delivers reaches the SDK's close first, which would wait for the CLI (module docstring).
        watchdog = threading.Timer(limit, call.expire) if limit is not None else None
        try:
            if watchdog is not None:
                watchdog.start()
            with deadline:
                async for message in stream:
                    call.observe(message, request)
        finally:
            if watchdog is not None:
                watchdog.cancel()
                watchdog.join()
            await aclose(stream)


__all__ = ["MAX_BUFFER_BYTES", "ClaudeBackend", "FinalText", "OutputFormat", "parse_structured"]
