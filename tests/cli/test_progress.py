"""Live progress through the real command line: a review-fix whose scripted fixer is slow (its
shell command sleeps), watched as a CI log sees it (stderr a pipe: heartbeat lines) and as a
person does (stderr a terminal: live lines redrawn in place), with `--json` on stdout."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import cli
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import REVIEW_REL, finding, fixed, review_text, write_review

from fixloop.cli.progress import (
    DEFAULT_HEARTBEAT_S,
    HEARTBEAT_ENV,
    ProgressPrinter,
    heartbeat_interval,
)
from fixloop.events import Event, EventKind

SLOW_S = 3.0


def slow_script(tmp_path: Path) -> Path:
    reply = fixed("src/app.py", "a - b", "a + b", "fixed: add adds")
    reply["bash"] = [f"sleep {SLOW_S}"]  # a model that takes its time over a turn
    reply["cost_usd"] = 0.0125
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": reply}))
    return script


def one_finding(repo: Path) -> None:
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py")))


def test_a_heartbeat_names_the_call_in_flight_and_json_stays_one_document(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    one_finding(user_repo.path)
    env = dict(os.environ) | {HEARTBEAT_ENV: "0.5"}
    args = ("review-fix", REVIEW_REL, "--script", str(slow_script(tmp_path)), "--json")
    done = cli.fixloop(*args, cwd=user_repo.path, env=env)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)  # the whole of stdout is the envelope
    assert envelope["ok"] is True
    assert "..." not in done.stdout
    beats = [line for line in done.stderr.splitlines() if line.startswith("... ")]
    # Sleeping 3 s with a beat every 0.5 s of silence: several beats, each naming the item (k/N),
    # the role, the elapsed time, turns, tokens and cost of the call in flight.
    assert len(beats) >= 3, done.stderr
    assert all(b.startswith("... review-fix [1/1] CR-01: ") for b in beats), beats
    calls = [b for b in beats if ": fixer " in b]
    assert calls, beats
    assert "1 turn(s), 0 tokens, $0.0000 (run $0.0000)" in calls[-1]
    assert done.stderr.index("CR-01: add subtracts ...") < done.stderr.index(beats[0])
    assert done.stderr.index(beats[-1]) < done.stderr.index("review-fix [1/1] CR-01: fixed")


def test_no_heartbeat_when_it_is_turned_off(user_repo: UserRepo, tmp_path: Path) -> None:
    one_finding(user_repo.path)
    env = dict(os.environ) | {HEARTBEAT_ENV: "0"}
    args = ("review-fix", REVIEW_REL, "--script", str(slow_script(tmp_path)))
    done = cli.fixloop(*args, cwd=user_repo.path, env=env)
    assert done.returncode == 0, done.stderr
    assert "review-fix [1/1] CR-01: fixed" in done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("... ")] == []


def test_in_a_terminal_a_live_line_is_redrawn_and_taken_away(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    one_finding(user_repo.path)
    main, terminal = pty.openpty()
    argv = [sys.executable, "-m", "fixloop", "review-fix", REVIEW_REL]
    argv += ["--script", str(slow_script(tmp_path)), "--json"]
    child = subprocess.Popen(
        argv, cwd=user_repo.path, stdout=subprocess.PIPE, stderr=terminal, stdin=subprocess.DEVNULL
    )
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal's other side closed: the child is done with it
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = child.communicate(timeout=120)
    os.close(main)
    assert child.returncode == 0, seen.decode(errors="replace")
    assert json.loads(stdout)["ok"] is True  # a terminal on stderr changes nothing on stdout
    screen = seen.decode()
    live = [line for line in screen.replace("\x1b[1A\x1b[2K", "\n").splitlines() if "~ " in line]
    assert any("~ review-fix [1/1] CR-01: fixer " in line for line in live), screen
    elapsed = {line.split("fixer ", 1)[1].split(",")[0] for line in live if ": fixer " in line}
    assert len(elapsed) >= 2, live  # redrawn as the seconds go by, in place
    assert screen.count("\x1b[1A\x1b[2K") >= 3
    # The last live line is cleared before the final lines: the summary is not written over it.
    tail = screen.rsplit("\x1b[1A\x1b[2K", 1)[1]
    assert "~ " not in tail
    assert "review-fix [1/1] CR-01: fixed" in screen


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", DEFAULT_HEARTBEAT_S), ("0.25", 0.25), ("0", 0.0), ("soon", DEFAULT_HEARTBEAT_S)],
)
def test_the_heartbeat_interval_comes_from_the_environment(value: str, expected: float) -> None:
    assert heartbeat_interval({HEARTBEAT_ENV: value}) == expected


def test_a_call_is_named_by_its_task_after_the_task_moved_on() -> None:
    """execute-wave's tasks change status while their calls run (implemented, merged, scored):
    the call's line still names its task, and the run's cost adds up the calls that ended."""
    from fixloop.cli.progress import TaskProgress
    from fixloop.events import Event, EventKind, EventStream

    screen = io.StringIO()
    printer = TaskProgress(screen, live=False, heartbeat_s=0)
    stream = EventStream(printer)
    stream.emit(Event(EventKind.ITEM, "running", item="1", title="mul", status="running"))
    stream.emit(Event(EventKind.ITEM, "implemented", item="1", title="mul", status="merged"))
    data = {"key": "executor/2/implement", "role": "executor", "cost_usd": 0.5}
    stream.emit(Event(EventKind.AGENT, data=data))
    progress = {"key": "reviewer/1/verify", "role": "reviewer", "turns": 2, "elapsed_s": 65.0}
    progress |= {"input_tokens": 1500, "output_tokens": 200, "cost_usd": 0.25}
    stream.emit(Event(EventKind.AGENT_PROGRESS, data=progress))
    assert printer.in_flight() == [
        "task 1: reviewer 1m05s, 2 turn(s), 1.7k tokens, $0.2500 (run $0.7500)"
    ]
    stream.emit(Event(EventKind.AGENT, data={"key": "reviewer/1/verify", "cost_usd": 0.25}))
    assert printer.in_flight() == []
    printer.close()
    assert screen.getvalue().splitlines() == ["task 1 mul: running", "task 1 mul: implemented"]


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


def test_an_inner_runs_item_keeps_the_benchs_k_of_n_name() -> None:
    printer = ProgressPrinter(io.StringIO(), live=False, heartbeat_s=0)
    bench = {"index": 2, "total": 8}
    printer(Event(EventKind.ITEM, workflow="efficacy", item="regex", status="running", data=bench))
    printer(Event(EventKind.ITEM, workflow="fix-issue", item="regex", status="running"))
    key = {"key": "issue-fixer/regex/attempt-1", "role": "issue-fixer", "turns": 3}
    printer(Event(EventKind.AGENT_PROGRESS, data=key))
    (line,) = printer.in_flight()
    assert line.startswith("efficacy [2/8] regex: issue-fixer 0s, 3 turn(s)"), line
