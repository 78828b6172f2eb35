"""What a person reads on stderr while a workflow runs."""

from __future__ import annotations

import io

from fixloop.cli.progress import ProgressPrinter
from fixloop.events import Event, EventKind


def agent(key: str, reason: str, detail: str) -> Event:
    data = {"key": key, "outcome": "inconclusive", "reason": reason, "detail": detail}
    return Event(EventKind.AGENT, "fixer inconclusive", data=data)


def test_why_the_model_could_not_answer_is_said_once() -> None:
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    refused = "openai: 401 from https://api.example.test/v1: the key in OPENAI_API_KEY was refused"
    for number in (1, 2, 3):
        printer(agent(f"fixer/CR-0{number}/iteration-1", "backend_error", refused))
    printer(agent("fixer/CR-04/iteration-1", "malformed_output", "output does not match"))
    assert stream.getvalue() == f"WARN: fixer/CR-01/iteration-1: {refused}\n"
