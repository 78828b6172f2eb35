"""A scripted OpenAI-compatible Chat Completions API on loopback, for the openai backend offline.

Point the backend at it (`--base-url`, see `ChatServer.base_url` and `env()`) and it answers each
`POST /v1/chat/completions` with the next scripted `ChatTurn`: text, tool calls, or an API error
(with `retry-after-ms`, so the SDK's retries of a 429 or 5xx do not wait). Everything but the
model stays real: the backend runs the tool calls against the real worktree, and the server
records every request (messages, tools, headers), so a test can assert what the model was sent.

    with ChatServer([call("Read", {"file_path": "a.py"}), say("done")]) as server:
        ...OpenAIBackend(target for server.base_url)...
    assert "# Fixer" in server.requests[0].system

The script is a list of turns, played in order, or a callable choosing a turn from the request
(`chat_replay.ChatReplay` plays a scripted-backend script by call key). A request after the
script ran out gets an HTTP 500 and is counted in `unscripted`, so a test fails loudly instead
of hanging.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from fixloop.agents.backend import CALL_HEADER

JsonObject = dict[str, Any]
SCRIPTED_KEY = "sk-fixloop-scripted-openai-key-0000"


@dataclass(frozen=True)
class ChatTurn:
    """One model answer: text and tool calls, or an API error; optionally after a delay."""

    content: str = ""
    tool_calls: tuple[tuple[str, Mapping[str, Any] | str], ...] = ()  # (name, arguments)
    prompt_tokens: int = 100
    completion_tokens: int = 20
    delay_s: float = 0.0
    error_status: int | None = None
    error_message: str = ""


def say(text: str, *, prompt_tokens: int = 100, completion_tokens: int = 20) -> ChatTurn:
    """A final text answer."""
    return ChatTurn(text, (), prompt_tokens, completion_tokens)


def call(name: str, arguments: Mapping[str, Any] | str, *, prompt_tokens: int = 100) -> ChatTurn:
    """One tool call (arguments as an object, or raw text to test malformed ones)."""
    return ChatTurn("", ((name, arguments),), prompt_tokens)


def calls(*named: tuple[str, Mapping[str, Any]]) -> ChatTurn:
    """Several tool calls in one answer."""
    return ChatTurn("", tuple(named))


def failure(status: int, message: str) -> ChatTurn:
    """An API error answer (401, 429, 500, …)."""
    return ChatTurn(error_status=status, error_message=message)


def slow(turn: ChatTurn, delay_s: float) -> ChatTurn:
    return ChatTurn(
        turn.content,
        turn.tool_calls,
        turn.prompt_tokens,
        turn.completion_tokens,
        delay_s,
        turn.error_status,
        turn.error_message,
    )


@dataclass(frozen=True)
class ChatRequest:
    """One request the server received, with what tests usually assert on."""

    path: str
    headers: Mapping[str, str]
    body: JsonObject

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[JsonObject]:
        return [m for m in self.body.get("messages", []) if isinstance(m, dict)]

    @property
    def system(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages if m["role"] == "system")

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("function", {}).get("name", "")) for t in self.body.get("tools", [])]

    def tool(self, name: str) -> JsonObject | None:
        for tool in self.body.get("tools", []):
            if tool.get("function", {}).get("name") == name:
                return dict(tool["function"])
        return None

    @property
    def call_key(self) -> str:
        for name, value in self.headers.items():
            if name.lower() == CALL_HEADER.lower():
                return unquote(value)
        return ""

    @property
    def answered(self) -> int:
        """Assistant turns already in the conversation: which turn of its call this is."""
        return sum(1 for message in self.messages if message.get("role") == "assistant")

    def tool_results(self) -> list[str]:
        """The tool results the backend sent back, oldest first."""
        return [str(m.get("content", "")) for m in self.messages if m.get("role") == "tool"]

    @property
    def retry(self) -> int:
        """How many times the SDK already sent this request (`x-stainless-retry-count`)."""
        said = next(
            (v for k, v in self.headers.items() if k.lower() == "x-stainless-retry-count"), "0"
        )
        return int(said) if said.isdigit() else 0

    def authorization(self) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == "authorization"), "")


ChatResponder = Callable[[ChatRequest], ChatTurn]


@dataclass
class ChatServer:
    """The scripted server; a context manager listening on 127.0.0.1 on an ephemeral port."""

    script: Sequence[ChatTurn] | ChatResponder = ()
    requests: list[ChatRequest] = field(default_factory=list)
    unscripted: int = 0
    # The model every answer names; None: the one asked for. A real server often names another
    # (an alias resolved to a dated version, a gateway's routing).
    served_model: str | None = None

    def __post_init__(self) -> None:
        self._turns = [] if callable(self.script) else list(self.script)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ChatServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fixloop-chat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the chat server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def env(self) -> dict[str, str]:
        """Environment for a child `fixloop … --backend openai`: this server, a scripted key."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": SCRIPTED_KEY}

    @property
    def remaining(self) -> int:
        return len(self._turns)

    def answer(self, request: ChatRequest) -> ChatTurn:
        with self._lock:
            self.requests.append(request)
            if callable(self.script):
                return self.script(request)
            if self._turns:
                return self._turns.pop(0)
            self.unscripted += 1
        return failure(500, "fixloop ChatServer: the script has no turn left")

    def completion(self, turn: ChatTurn, model: str) -> JsonObject:
        tool_calls = [
            {
                "id": f"call_{next(self._ids):06d}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for name, arguments in turn.tool_calls
        ]
        message: JsonObject = {"role": "assistant", "content": turn.content or None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {
            "id": f"chatcmpl-{next(self._ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": turn.prompt_tokens,
                "completion_tokens": turn.completion_tokens,
                "total_tokens": turn.prompt_tokens + turn.completion_tokens,
            },
        }


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            """Silent: the recorded requests are the log."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            turn = server.answer(ChatRequest(self.path, dict(self.headers), body))
            if turn.delay_s:
                time.sleep(turn.delay_s)
            if turn.error_status is not None:
                error = {"message": turn.error_message, "type": "scripted", "code": None}
                self._json(turn.error_status, {"error": error})
                return
            model = server.served_model or str(body.get("model", ""))
            self._json(200, server.completion(turn, model))

        def _json(self, status: int, payload: JsonObject) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("retry-after-ms", "1")  # the SDK's retries need not wait here
            self.end_headers()
            # A client that gave up (a timeout under test) has nothing to be told.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

    return Handler


__all__ = [
    "SCRIPTED_KEY",
    "ChatRequest",
    "ChatResponder",
    "ChatServer",
    "ChatTurn",
    "call",
    "calls",
    "failure",
    "say",
    "slow",
]
