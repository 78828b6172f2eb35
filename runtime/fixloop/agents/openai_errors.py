"""An OpenAI-compatible server's failure as one line a user can act on.

The SDK retries a rate limit (429), a server error (5xx) and a dropped connection itself (with
back-off, `max_retries` times); what reaches here failed for good. Each line names the server,
the status and what to do: a 401 names the variable the key came from (never the key), a 404
the model and the URL form, a 400 that mentions tools what a local server needs for them.
"""

from __future__ import annotations

import openai

from fixloop.agents.backend import StopReason
from fixloop.agents.openai_config import OpenAITarget

MAX_MESSAGE_CHARS = 300
TOOL_HINT = (
    "the server must support tool calling (vLLM: --enable-auto-tool-choice "
    "--tool-call-parser NAME; llama.cpp: --jinja; Ollama: a model with tool support)"
)


def _said(exc: openai.APIError) -> str:
    """The server's own message, first line, bounded (a body can be a whole HTML page)."""
    message = exc.message
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
    first = (message or "").strip().splitlines()
    return first[0][:MAX_MESSAGE_CHARS] if first else ""


def describe_error(
    exc: openai.OpenAIError, target: OpenAITarget, retries: int
) -> tuple[StopReason, str]:
    """The stop reason and the one line for `exc`, raised by a request to `target`."""
    where = target.base_url
    if isinstance(exc, openai.APITimeoutError):
        return StopReason.TIMEOUT, f"openai: {where} did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return StopReason.BACKEND_ERROR, f"openai: cannot reach {where}: {cause}".splitlines()[0]
    if not isinstance(exc, openai.APIStatusError):
        return StopReason.BACKEND_ERROR, f"openai: {type(exc).__name__}: {exc}".splitlines()[0]
    status, said = exc.status_code, _said(exc)
    tail = f": {said}" if said else ""
    if status in (401, 403):
        key = (
            f"the key in {target.key_variable} was refused"
            if target.key_variable
            else "it wants a key (set OPENAI_API_KEY, or name the variable with --api-key-env)"
        )
        line = f"openai: {status} from {where}: {key}{tail}"
    elif status == 429:
        line = f"openai: rate limited (429) by {where}, still after {retries} retries{tail}"
    elif status >= 500:
        line = f"openai: {where} failed ({status}), still after {retries} retries{tail}"
    elif status == 404:
        line = (
            f"openai: 404 from {where}: no model {target.model!r} there, or the base URL is not "
            f"the API's (it usually ends in /v1){tail}"
        )
    elif status in (400, 422) and "tool" in said.lower():
        line = f"openai: {where} refused the request ({status}){tail}; {TOOL_HINT}"
    else:
        line = f"openai: {where} refused the request ({status}){tail}"
    return StopReason.BACKEND_ERROR, line


__all__ = ["TOOL_HINT", "describe_error"]
