"""The scripted model: real edits in a real directory, outputs validated like a real model's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixloop.agents.backend import AgentRequest, OutcomeStatus, StopReason
from fixloop.agents.scripted import ScriptedBackend
from fixloop.diagnostics import FixloopError
from fixloop.schemas.results import FixerResult, FixReport

REPORT = {"files_changed": ["app.py"], "summary": "fixed: it", "concerns": None}


def request(cwd: Path, key: str = "fixer/1/round-1", **changes: object) -> AgentRequest:
    fields: dict[str, object] = {
        "role": "fixer",
        "system_prompt": "You fix one finding.",
        "task": "fix it",
        "tools": ("Read", "Edit"),
        "model": "opus",
        "output_schema": "FixerResult",
        "cwd": cwd,
        "key": key,
    }
    fields.update(changes)
    return AgentRequest(**fields)  # type: ignore[arg-type]


def test_edits_are_made_in_the_worktree_and_the_output_validates(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    (tmp_path / "old.py").write_text("gone\n", encoding="utf-8")
    backend = ScriptedBackend(
        {
            "fixer/1/round-1": {
                "edits": [
                    {"path": "app.py", "old": "y = 2", "new": "y = 3"},
                    {"path": "pkg/new.py", "content": "z = 0\n"},
                    {"path": "old.py", "delete": True},
                ],
                "output": REPORT,
            }
        }
    )
    outcome = backend.dispatch(request(tmp_path))
    assert outcome.ok
    assert isinstance(outcome.output, FixerResult)
    assert outcome.output.root == FixReport(files_changed=["app.py"], summary="fixed: it")
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "x = 1\ny = 3\n"
    assert (tmp_path / "pkg/new.py").read_text(encoding="utf-8") == "z = 0\n"
    assert not (tmp_path / "old.py").exists()
    assert backend.calls[0].key == "fixer/1/round-1"
    assert backend.unplayed() == []


def test_a_json_string_output_is_decoded_like_a_model_answer(tmp_path: Path) -> None:
    backend = ScriptedBackend({"fixer/1/round-1": {"output": json.dumps(REPORT)}})
    assert backend.dispatch(request(tmp_path)).ok


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ({"fail": "crash"}, StopReason.CRASH),
        ({"fail": "timeout"}, StopReason.TIMEOUT),
        ({"fail": "malformed"}, StopReason.MALFORMED),
        ({"fail": "malformed", "raw": '{"files_changed": '}, StopReason.MALFORMED),
        ({"output": {"summary": "no files_changed key"}}, StopReason.MALFORMED),
        ({"output": {"needs_scope_expansion": True, "additional_files": []}}, StopReason.MALFORMED),
    ],
)
def test_failures_and_invalid_outputs_are_inconclusive(
    tmp_path: Path, reply: dict[str, object], reason: StopReason
) -> None:
    outcome = ScriptedBackend({"fixer/1/round-1": reply}).dispatch(request(tmp_path))
    assert outcome.status is OutcomeStatus.INCONCLUSIVE
    assert not outcome.ok
    assert outcome.output is None
    assert outcome.reason is reason


def test_an_unscripted_call_is_inconclusive_not_a_pass(tmp_path: Path) -> None:
    backend = ScriptedBackend({"fixer/1/round-1": {"output": REPORT}})
    outcome = backend.dispatch(request(tmp_path, key="fixer/2/round-1"))
    assert outcome.reason is StopReason.MISSING
    assert backend.unplayed() == ["fixer/1/round-1"]


def test_a_list_of_replies_is_played_one_per_call_then_runs_out(tmp_path: Path) -> None:
    scope = {"needs_scope_expansion": True, "additional_files": ["b.py"], "justification": "j"}
    backend = ScriptedBackend({"fixer/1/round-1": [{"output": scope}, {"output": REPORT}]})
    first = backend.dispatch(request(tmp_path))
    second = backend.dispatch(request(tmp_path))
    third = backend.dispatch(request(tmp_path))
    assert first.ok and second.ok
    assert isinstance(first.output, FixerResult) and isinstance(second.output, FixerResult)
    assert first.output.root.model_dump()["additional_files"] == ["b.py"]
    assert isinstance(second.output.root, FixReport)
    assert third.reason is StopReason.MISSING


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../outside.py", "sub/../../outside.py", ".git/config", "link/x.py"]
)
def test_edits_outside_the_worktree_are_refused_and_recorded(tmp_path: Path, path: str) -> None:
    worktree = tmp_path / "wt"
    (worktree / ".git").mkdir(parents=True)
    (worktree / ".git/config").write_text("[core]\n", encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (worktree / "link").symlink_to(outside)
    backend = ScriptedBackend(
        {"fixer/1/round-1": {"edits": [{"path": path, "content": "pwned\n"}], "output": REPORT}}
    )
    outcome = backend.dispatch(request(worktree))
    assert [denied.path for denied in outcome.denied] == [path]
    assert (worktree / ".git/config").read_text(encoding="utf-8") == "[core]\n"
    assert not (tmp_path / "outside.py").exists()
    assert list(outside.iterdir()) == []


def test_edits_outside_the_writable_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text("keep\n", encoding="utf-8")
    edits = [
        {"path": "app.py", "content": "ok\n"},
        {"path": "other.py", "content": "clobbered\n"},
    ]
    backend = ScriptedBackend({"fixer/1/round-1": {"edits": edits, "output": REPORT}})
    outcome = backend.dispatch(request(tmp_path, writable=("app.py",)))
    assert outcome.ok
    assert [(d.path, d.reason) for d in outcome.denied] == [
        ("other.py", "not among the files this call may write")
    ]
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "ok\n"
    assert (tmp_path / "other.py").read_text(encoding="utf-8") == "keep\n"


def test_bash_commands_run_after_the_edits_unchecked_and_unreported(tmp_path: Path) -> None:
    (tmp_path / "other.py").write_text("keep\n", encoding="utf-8")
    reply = {
        "edits": [{"path": "app.py", "content": "ok\n"}],
        "bash": ["cat app.py > other.py", "exit 3", "printf 'new\\n' > made.txt"],
        "output": REPORT,
    }
    backend = ScriptedBackend({"fixer/1/round-1": reply})
    outcome = backend.dispatch(request(tmp_path, writable=("app.py",)))
    assert outcome.ok and outcome.denied == ()  # a shell write is not a refused tool call
    assert (tmp_path / "other.py").read_text(encoding="utf-8") == "ok\n"  # after the edits
    assert (tmp_path / "made.txt").read_text(encoding="utf-8") == "new\n"  # exit 3 went on


def test_a_replacement_that_does_not_match_once_is_a_crash(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a\na\n", encoding="utf-8")
    edits = [{"path": "app.py", "old": "a", "new": "b"}]
    backend = ScriptedBackend({"fixer/1/round-1": {"edits": edits, "output": REPORT}})
    outcome = backend.dispatch(request(tmp_path))
    assert outcome.reason is StopReason.CRASH
    assert "found 2 times" in outcome.detail
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "a\na\n"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ({"fixer/1/round-1": {"edits": []}}, "fixer/1/round-1: a reply needs"),
        ({"k": {"output": REPORT, "fail": "crash"}}, "k: a reply has either"),
        ({"k": {"fail": "explode"}}, "k.fail: unknown value 'explode'"),
        ({"k": {"output": REPORT, "edits": [{"path": "a"}]}}, "k.edits[0]: an edit has exactly"),
        ({"k": {"output": REPORT, "surprise": 1}}, "k: unknown key 'surprise'"),
    ],
)
def test_a_bad_script_names_the_call_key(script: dict[str, object], message: str) -> None:
    with pytest.raises(FixloopError) as caught:
        ScriptedBackend(script, origin="script.yaml")
    line = caught.value.diagnostics[0].format()
    assert line.startswith("script.yaml:1:1: script: "), line
    assert message in line, line


def test_a_script_file_in_yaml(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "fixer/1/round-1:\n"
        "  edits:\n"
        '    - {path: app.py, content: "fixed = True\\n"}\n'
        "  output: {files_changed: [app.py], summary: 'fixed: it', concerns: null}\n",
        encoding="utf-8",
    )
    backend = ScriptedBackend.from_file(script)
    assert backend.dispatch(request(tmp_path)).ok
    assert (tmp_path / "app.py").read_text(encoding="utf-8") == "fixed = True\n"


def test_a_script_file_that_is_not_yaml_is_one_located_error(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("k:\n  output: [unclosed\n", encoding="utf-8")
    with pytest.raises(FixloopError) as caught:
        ScriptedBackend.from_file(script)
    assert ": script: invalid YAML" in caught.value.diagnostics[0].format()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_script_that_is_a_fifo_or_a_device_is_refused_unread(tmp_path: Path, kind: str) -> None:
    # A plain open of the FIFO waits for a writer for ever; /dev/zero fills memory.
    script = tmp_path / "script.yaml"
    if kind == "fifo":
        os.mkfifo(script)
    else:
        script.symlink_to("/dev/zero")
    with pytest.raises(FixloopError) as caught:
        ScriptedBackend.from_file(script)
    what = "a FIFO" if kind == "fifo" else "a character device"
    assert (
        caught.value.diagnostics[0]
        .format()
        .endswith(f": script: {what}, not a regular file; not read")
    )
