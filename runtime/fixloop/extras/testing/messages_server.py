"""A scripted Anthropic Messages API on loopback, for driving the real Claude Code CLI offline.

Point the CLI at it (`ANTHROPIC_BASE_URL`, see `MessagesServer.env()`) and it answers each model
call with the next scripted `Turn`, streamed as the documented server-sent events
(`message_start`, `content_block_start/delta/stop`, `message_delta`, `message_stop`). Everything
but the model stays real: the CLI runs the scripted tool calls against the real filesystem, and the
server records every request it got (system prompt, tools, messages) so a test can assert what the
model was actually sent.

    with MessagesServer([tool_use("Read", {"file_path": "a.py"}), text("done")]) as server:
        ...run the CLI with server.env()...
    assert "You fix one finding" in server.requests[0].system

The script is either a list of turns, played in order to the *conversation* requests, or a
callable choosing a turn from the request (for calls whose order is not fixed). Requests the CLI
makes for itself (token counting, a quick title or safety check with no tools) are answered without
consuming the script, and recorded too. A conversation request after the script ran out gets an
HTTP 500 error and is counted in `unscripted`, so a test fails loudly instead of hanging.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fixloop.extras.testing.responders import Conversations, RecordedRequest, Responder
from fixloop.extras.testing.turns import (
    STRUCTURED_OUTPUT_TOOL,
    TextBlock,
    ToolUseBlock,
    Turn,
    error,
    slow,
    structured,
    text,
    tool_use,
    tool_uses,
)

JsonObject = dict[str, Any]


def _is_conversation(body: JsonObject) -> bool:
    """The calls a script answers: the agent loop sends its tools; side calls send none."""
    return bool(body.get("tools"))


def _side_answer(body: JsonObject) -> Turn:
    # The CLI's own side calls (titles, topic checks) must not eat scripted turns; a neutral,
    # short answer keeps it moving.
    del body
    return text("ok", input_tokens=1, output_tokens=1)


class MessagesServer:
    """The scripted server; a context manager that listens on 127.0.0.1 on an ephemeral port."""

    def __init__(
        self,
        script: Sequence[Turn] | Responder = (),
        *,
        model: str = "claude-sonnet-4-5",
    ) -> None:
        self._script: list[Turn] = [] if callable(script) else list(script)
        self._responder: Responder | None = script if callable(script) else None
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.unscripted = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> MessagesServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = _handler_for(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            # shutdown() waits up to one poll interval; tests open and close many servers.
            kwargs={"poll_interval": 0.05},
            name="fixloop-messages-server",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the messages server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment for a child CLI: talk to this server, send nothing anywhere else."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fixloop-scripted",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # Scripted errors must surface at once, not after the CLI's back-off retries.
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }

    # -- script ------------------------------------------------------------------------------

    def add(self, *turns: Turn) -> None:
        with self._lock:
            self._script.extend(turns)

    @property
    def remaining(self) -> int:
        """Scripted turns not played yet (a finished test usually expects 0)."""
        return len(self._script)

    @property
    def conversation(self) -> list[RecordedRequest]:
        """The requests that consumed a scripted turn, in order."""
        return [request for request in self.requests if request.scripted]

    def _answer(self, method: str, path: str, headers: Mapping[str, str], body: JsonObject) -> Turn:
        scripted = _is_conversation(body) and path.startswith("/v1/messages")
        recorded = RecordedRequest(method, path, dict(headers), body, scripted)
        with self._lock:
            self.requests.append(recorded)
            if not scripted:
                return _side_answer(body)
            if self._responder is not None:
                return self._responder(recorded)
            if self._script:
                return self._script.pop(0)
            self.unscripted += 1
        return error(500, "api_error", "fixloop MessagesServer: the script has no turn left")

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fixloop{next(self._ids):06d}"


# -- HTTP ------------------------------------------------------------------------------------


def _events(server: MessagesServer, turn: Turn, model: str) -> Iterator[tuple[str, JsonObject]]:
    usage_start = {"input_tokens": turn.input_tokens, "output_tokens": 1}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": server._next_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage_start,
            },
        },
    )
    for index, block in enumerate(turn.blocks):
        if isinstance(block, TextBlock):
            start: JsonObject = {"type": "text", "text": ""}
            delta: JsonObject = {"type": "text_delta", "text": block.text}
        else:
            tool_id = block.id or server._next_id("toolu")
            start = {"type": "tool_use", "id": tool_id, "name": block.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.input)}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": turn.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _message(server: MessagesServer, turn: Turn, model: str) -> JsonObject:
    content: list[JsonObject] = []
    for block in turn.blocks:
        if isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        else:
            tool_id = block.id or server._next_id("toolu")
            content.append(
                {"type": "tool_use", "id": tool_id, "name": block.name, "input": dict(block.input)}
            )
    return {
        "id": server._next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
    }


def _handler_for(server: MessagesServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            """Silent: the recorded requests are the log."""

        def do_GET(self) -> None:
            server._answer("GET", self.path, dict(self.headers), {})
            self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            if "count_tokens" in self.path:
                server._answer("POST", self.path, dict(self.headers), body)
                self._json(200, {"input_tokens": 100})
                return
            turn = server._answer("POST", self.path, dict(self.headers), body)
            if turn.delay_s:
                time.sleep(turn.delay_s)
            model = str(body.get("model") or server.model)
            if turn.error_status is not None:
                detail = {"type": turn.error_type, "message": turn.error_message}
                self._json(turn.error_status, {"type": "error", "error": detail})
            elif body.get("stream"):
                self._stream(_events(server, turn, model))
            else:
                self._json(200, _message(server, turn, model))

        def _json(self, status: int, payload: JsonObject) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", server._next_id("req"))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: Iterator[tuple[str, JsonObject]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.send_header("request-id", server._next_id("req"))
            self.end_headers()
            for name, data in events:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


__all__ = [
    "STRUCTURED_OUTPUT_TOOL",
    "Conversations",
    "MessagesServer",
    "RecordedRequest",
    "Responder",
    "TextBlock",
    "ToolUseBlock",
    "Turn",
    "error",
    "slow",
    "structured",
    "text",
    "tool_use",
    "tool_uses",
]
