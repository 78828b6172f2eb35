"""The scripted Chat Completions API and its replay of a script, over real HTTP on loopback,
spoken to by the official openai SDK (what the openai backend uses)."""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionMessageToolCall

from fixloop.agents.scripted import parse_script
from fixloop.extras.testing.chat_replay import SUBMIT, ChatReplay, reply_turns
from fixloop.extras.testing.chat_server import (
    SCRIPTED_KEY,
    ChatServer,
    call,
    calls,
    failure,
    say,
)


def client(server: ChatServer) -> openai.OpenAI:
    return openai.OpenAI(api_key=SCRIPTED_KEY, base_url=server.base_url, max_retries=0)


def ask(server: ChatServer, key: str = "fixer/1/round-1") -> ChatCompletion:
    return client(server).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"X-Fixloop-Call": key},
    )


def test_turns_are_played_in_order_and_requests_recorded() -> None:
    with ChatServer(
        [calls(("Read", {"file_path": "a.py"}), ("Grep", {"pattern": "x"})), say("ok")]
    ) as server:
        first = ask(server)
        second = ask(server)
        assert server.remaining == 0
    message = first.choices[0].message
    named = [c for c in message.tool_calls or [] if isinstance(c, ChatCompletionMessageToolCall)]
    assert [c.function.name for c in named] == ["Read", "Grep"]
    assert json.loads(named[0].function.arguments) == {"file_path": "a.py"}
    assert second.choices[0].message.content == "ok"
    assert first.usage is not None and first.usage.prompt_tokens == 100
    [recorded, _] = server.requests
    assert recorded.call_key == "fixer/1/round-1" and recorded.model == "m"
    assert recorded.authorization() == f"Bearer {SCRIPTED_KEY}"


def test_an_error_turn_and_a_run_out_script_fail_loudly() -> None:
    with ChatServer([failure(429, "slow down")]) as server:
        with pytest.raises(openai.RateLimitError, match="slow down"):
            ask(server)
        with pytest.raises(openai.InternalServerError, match="no turn left"):
            ask(server)
        assert server.unscripted == 1


def test_a_replay_answers_each_call_by_its_key() -> None:
    script = {
        "fixer/1/round-1": {
            "edits": [{"path": "a.py", "old": "1", "new": "2"}],
            "output": {"files_changed": ["a.py"], "summary": "fixed: a", "concerns": None},
        },
        "verifier/1/round-1": {"fail": "crash"},
    }
    replay = ChatReplay(script)
    with ChatServer(replay) as server:
        read = ask(server)
        with pytest.raises(openai.InternalServerError, match="scripted crash"):
            ask(server, key="verifier/1/round-1")
    [first] = read.choices[0].message.tool_calls or []
    assert isinstance(first, ChatCompletionMessageToolCall) and first.function.name == "Read"
    assert replay.unplayed() == []
    turns = reply_turns(parse_script(script)["fixer/1/round-1"][0], wrap=True)
    assert [t.tool_calls[0][0] for t in turns] == ["Read", "Edit", SUBMIT]
    assert set(turns[-1].tool_calls[0][1]) == {"output"}


def test_one_call_is_a_tool_call_of_raw_text() -> None:
    assert call("Read", "{not json").tool_calls == (("Read", "{not json"),)
