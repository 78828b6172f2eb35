"""The scripted Messages API, spoken to over real HTTP on loopback (no CLI needed here)."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import pytest

from fixloop.extras.testing.messages_server import (
    STRUCTURED_OUTPUT_TOOL,
    Conversations,
    MessagesServer,
    RecordedRequest,
    error,
    slow,
    structured,
    text,
    tool_use,
    tool_uses,
)

TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]


def post(
    server: MessagesServer, body: dict[str, Any], *, path: str = "/v1/messages?beta=true"
) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse a server-sent event stream into (event name, data) pairs."""
    parsed = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        parsed.append((fields["event"], json.loads(fields["data"])))
    return parsed


def conversation(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "stream": stream,
        "system": [{"type": "text", "text": "prefix"}, {"type": "text", "text": "You fix."}],
        "tools": TOOLS,
        "messages": list(messages) or [{"role": "user", "content": "fix CR-01"}],
    }


def test_a_text_turn_streams_the_documented_event_sequence() -> None:
    with MessagesServer([text("All fixed.", input_tokens=321, output_tokens=7)]) as server:
        status, kind, raw = post(server, conversation())

    assert status == 200 and kind == "text/event-stream"
    stream = events(raw)
    assert [name for name, _ in stream] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in stream)
    start = stream[0][1]["message"]
    assert start["role"] == "assistant" and start["model"] == "claude-sonnet-4-5"
    assert start["usage"]["input_tokens"] == 321
    assert stream[1][1]["content_block"] == {"type": "text", "text": ""}
    assert stream[2][1]["delta"] == {"type": "text_delta", "text": "All fixed."}
    assert stream[4][1]["delta"]["stop_reason"] == "end_turn"
    assert stream[4][1]["usage"] == {"output_tokens": 7}
    assert server.remaining == 0


def test_a_tool_call_streams_its_input_as_json_deltas_and_stops_for_tool_use() -> None:
    call = tool_use("Edit", {"file_path": "a.py", "old_string": "$(x)", "new_string": "'y'"})
    with MessagesServer([call]) as server:
        _, _, raw = post(server, conversation())

    stream = events(raw)
    names = [name for name, _ in stream]
    assert names.count("content_block_start") == 1
    block = stream[1][1]["content_block"]
    assert block["type"] == "tool_use" and block["name"] == "Edit"
    assert block["id"].startswith("toolu_")
    delta = stream[2][1]["delta"]
    assert delta["type"] == "input_json_delta"
    assert json.loads(delta["partial_json"]) == {
        "file_path": "a.py",
        "old_string": "$(x)",
        "new_string": "'y'",
    }
    assert stream[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_text_and_several_tool_calls_are_indexed_blocks_in_one_answer() -> None:
    turns = [
        tool_use("Read", {"file_path": "a.py"}, say="Reading first."),
        tool_uses(("Read", {"file_path": "a.py"}), ("Read", {"file_path": "b.py"})),
    ]
    with MessagesServer(turns) as server:
        first = events(post(server, conversation())[2])
        second = events(post(server, conversation())[2])

    starts = [data for name, data in first if name == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [
        (0, "text"),
        (1, "tool_use"),
    ]
    ids = [data["content_block"]["id"] for name, data in second if name == "content_block_start"]
    assert len(set(ids)) == 2, "every tool call gets its own id"


def test_structured_output_is_a_call_of_the_structured_output_tool() -> None:
    with MessagesServer([structured({"files_changed": ["a.py"], "summary": "ok"})]) as server:
        stream = events(post(server, conversation())[2])

    block = stream[1][1]["content_block"]
    assert block["name"] == STRUCTURED_OUTPUT_TOOL
    assert json.loads(stream[2][1]["delta"]["partial_json"]) == {
        "files_changed": ["a.py"],
        "summary": "ok",
    }


def test_a_non_object_structured_result_is_wrapped_as_output() -> None:
    with MessagesServer([structured(["not", "an", "object"])]) as server:
        stream = events(post(server, conversation())[2])

    assert json.loads(stream[2][1]["delta"]["partial_json"]) == {"output": ["not", "an", "object"]}


def test_a_request_without_stream_gets_one_json_message() -> None:
    with MessagesServer([tool_use("Read", {"file_path": "a.py"})]) as server:
        status, kind, raw = post(server, conversation(stream=False))

    assert status == 200 and kind == "application/json"
    message = json.loads(raw)
    assert message["stop_reason"] == "tool_use"
    assert message["content"][0]["input"] == {"file_path": "a.py"}


def test_a_scripted_error_is_an_anthropic_error_response() -> None:
    with MessagesServer([error(529, "overloaded_error", "try later"), text("ok")]) as server:
        status, _, raw = post(server, conversation())
        after = post(server, conversation())[0]

    assert status == 529
    assert json.loads(raw) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "try later"},
    }
    assert after == 200, "the error used one turn; the script goes on"


def test_running_out_of_script_is_a_loud_500_and_is_counted() -> None:
    with MessagesServer([text("only one")]) as server:
        post(server, conversation())
        status, _, raw = post(server, conversation())

    assert status == 500
    assert "no turn left" in json.loads(raw)["error"]["message"]
    assert server.unscripted == 1


def test_side_calls_without_tools_and_token_counts_do_not_consume_the_script() -> None:
    with MessagesServer([text("the real answer")]) as server:
        side = {"model": "claude-haiku-4-5", "messages": [{"role": "user", "content": "title?"}]}
        side_status = post(server, side)[0]
        count = json.loads(post(server, side, path="/v1/messages/count_tokens?beta=true")[2])
        stream = events(post(server, conversation())[2])

    assert side_status == 200
    assert count == {"input_tokens": 100}
    assert stream[2][1]["delta"]["text"] == "the real answer"
    assert [request.scripted for request in server.requests] == [False, False, True]
    assert server.conversation == [server.requests[2]]


def test_a_responder_chooses_the_turn_from_the_request() -> None:
    def by_task(request: RecordedRequest) -> Any:
        task = request.user_texts()[-1]
        return text(f"answer to {task}")

    with MessagesServer(by_task) as server:
        first = events(post(server, conversation({"role": "user", "content": "one"}))[2])
        second = events(post(server, conversation({"role": "user", "content": "two"}))[2])

    assert first[2][1]["delta"]["text"] == "answer to one"
    assert second[2][1]["delta"]["text"] == "answer to two"


def test_every_request_is_recorded_with_readable_helpers() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "fix CR-01"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read"}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"}],
        },
    ]
    with MessagesServer([text("done")]) as server:
        post(server, conversation(*messages))

    request = server.requests[0]
    assert request.method == "POST" and request.path == "/v1/messages?beta=true"
    assert request.model == "claude-sonnet-4-5"
    assert request.system == "prefix\nYou fix."
    assert request.tool_names == ["Read"]
    assert request.tool("Read") == TOOLS[0]
    assert request.tool("Write") is None
    assert request.user_texts() == ["fix CR-01"]
    assert request.tool_results() == [messages[2]["content"][0]]
    assert request.headers["Content-Type"] == "application/json"


def test_a_slow_turn_holds_its_answer_back() -> None:
    with MessagesServer([slow(text("late"), 30.0)]) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=0.2)
        connection.request("POST", "/v1/messages", json.dumps(conversation()))
        with pytest.raises((TimeoutError, socket.timeout)):
            connection.getresponse()
        connection.close()
        assert server.remaining == 0 and len(server.requests) == 1


def test_env_points_a_client_at_the_server_and_nowhere_else() -> None:
    with MessagesServer() as server:
        env = server.env()
        assert env["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{server.port}"
        assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
        assert env["DISABLE_TELEMETRY"] == "1"
        assert env["ANTHROPIC_API_KEY"]


def test_the_server_listens_on_loopback_only_while_open() -> None:
    server = MessagesServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.port
    with server:
        port = server.port
        assert server.base_url.startswith("http://127.0.0.1:")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_conversations_script_each_agent_call_by_key() -> None:
    def role(request: RecordedRequest) -> str:
        return "fixer" if "You fix." in request.system else "verifier"

    script = Conversations(
        {
            "fixer": [[tool_use("Read", {"file_path": "a.py"}), text("fixed")]],
            "verifier": [[text("real")], [text("resolved")]],
        },
        key=role,
    )
    asked = {"role": "user", "content": "go"}
    answered = {"role": "assistant", "content": [{"type": "text", "text": "…"}]}
    verify = {**conversation(asked), "system": "You verify."}
    with MessagesServer(script) as server:
        pre_gate = events(post(server, verify)[2])
        first = events(post(server, conversation(asked))[2])
        second = events(post(server, conversation(asked, answered, asked))[2])
        after = events(post(server, verify)[2])
        extra_status = post(server, verify)[0]

    assert pre_gate[2][1]["delta"]["text"] == "real"
    assert first[1][1]["content_block"]["name"] == "Read"
    assert second[2][1]["delta"]["text"] == "fixed"
    assert after[2][1]["delta"]["text"] == "resolved"
    assert extra_status == 500, "a call nobody scripted is an error, not a guess"
    assert script.unplayed == {}


def test_conversations_report_calls_that_never_happened() -> None:
    script = Conversations({"fixer": [[text("a")], [text("b")]]}, key=lambda _: "fixer")
    with MessagesServer(script) as server:
        post(server, conversation())

    assert script.unplayed == {"fixer": 1}
