"""End to end through everything real but the model: `fixloop … --backend claude` as a subprocess,
claude-agent-sdk, the Claude Code CLI bundled in its wheel, real tools in real git worktrees, and
a scripted Messages API on loopback playing the model.

The model's moves are the demo's scripts (`fixloop.extras.demo.model`), replayed by
`fixloop.extras.testing.replay.ScriptReplay` as the tool calls a model would make: Read the file,
Edit it, and return the result through the StructuredOutput tool, matched to each agent call by
the call key the claude backend sends with every model request.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import cli
from tests.helpers.demo import assert_demo_review_fixed
from tests.helpers.fix_findings import finding

from fixloop.extras.demo.example import REVIEW_PATH, build_example
from fixloop.extras.demo.execute_wave import EXECUTE_WAVE_SCRIPT
from fixloop.extras.demo.fix_engine import SCRIPT as FIX_ENGINE_SCRIPT
from fixloop.extras.demo.fix_issue import FIX_ISSUE_SCRIPT
from fixloop.extras.demo.model import FIX_FINDINGS_SCRIPT, REVIEW_FIX_SCRIPT
from fixloop.extras.testing.messages_server import (
    Conversations,
    MessagesServer,
    RecordedRequest,
    Turn,
    structured,
    tool_use,
)
from fixloop.extras.testing.replay import ScriptReplay

pytestmark = [pytest.mark.cli, pytest.mark.slow]

REPORT_PATH = REVIEW_PATH.replace("-REVIEW.md", "-REVIEW-FIX.md")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def run_fixloop(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`fixloop ARGS` in a process of its own (forked warm: tests/helpers/cli.py), `python3`
    in the runs' test commands being this suite's interpreter rather than the first on PATH."""
    child = {key: value for key, value in os.environ.items() if key != "CLAUDECODE"}
    child["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{child['PATH']}"
    child.update(env)
    return cli.fixloop(*args, cwd=cwd, env=child, timeout=600)


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    _, head, _ = text.split("---\n", 2)
    loaded = yaml.safe_load(head)
    assert isinstance(loaded, dict)
    return loaded


def test_review_fix_on_the_demo_repository_with_the_claude_backend(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    script = ScriptReplay(REVIEW_FIX_SCRIPT)

    with MessagesServer(script) as server:
        done = run_fixloop(
            "review-fix",
            REVIEW_PATH,
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    assert done.returncode == 1, done.stderr  # two findings skipped: partial
    result = json.loads(done.stdout)
    assert script.unplayed() == []
    assert server.unscripted == 0
    # Real commits, one per fixed finding, then the report; the user's branch fast-forwarded.
    assert_demo_review_fixed(repo, base, result["items"])
    assert git(repo, "worktree", "list").count("\n") == 1, "the temp worktree was removed"
    assert "return high" in (repo / "shelf" / "stock.py").read_text()
    assert '"-".join(name.lower().split())' in (repo / "shelf" / "labels.py").read_text()

    report = repo / REPORT_PATH
    meta = frontmatter(report)
    assert meta["status"] == "partial"
    assert (meta["findings_in_scope"], meta["fixed"], meta["skipped"]) == (5, 3, 2)
    assert meta["review_path"] == REVIEW_PATH
    body = report.read_text()
    assert "### CR-02: parse_count accepts negative counts" in body
    assert "SyntaxError" in body

    # What the model was sent: the fixer's rendered document, and the finding as data.
    first = server.conversation[0]
    assert "# Fixer" in first.system and "CR-01" in first.system
    assert {"Read", "Edit", "Bash", "StructuredOutput"} <= set(first.tool_names)
    hostile = next(r for r in server.conversation if r.call_key == "fixer/WR-02/iteration-1")
    assert "$(touch /tmp/pwned)" in hostile.system, "the hostile title reached the model as text"
    assert not Path("/tmp/pwned").exists() or Path("/tmp/pwned").stat().st_size == 0


def test_an_out_of_scope_edit_is_denied_and_becomes_a_scope_request(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    labels_before = (repo / "shelf" / "labels.py").read_text()
    wants_labels = {
        "edits": [{"path": "shelf/labels.py", "old": "def slug", "new": "def slug_"}],
        "output": {
            "needs_scope_expansion": True,
            "additional_files": ["shelf/labels.py"],
            "justification": "the threshold helper lives next to the labels",
        },
    }
    script = ScriptReplay({**REVIEW_FIX_SCRIPT, "fixer/WR-03/iteration-1": wants_labels})

    with MessagesServer(script) as server:
        done = run_fixloop(
            "review-fix",
            REVIEW_PATH,
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    result = json.loads(done.stdout)
    wr03 = next(o for o in result["items"] if o["id"] == "WR-03")
    assert wr03["label"] == "skipped: fix needs files outside the finding"
    assert "shelf/labels.py" in json.dumps(wr03)
    assert (repo / "shelf" / "labels.py").read_text() != labels_before, "WR-02 did fix labels"
    assert "def slug_" not in (repo / "shelf" / "labels.py").read_text()
    denied = [
        r for r in server.conversation[-1].tool_results() if "fixloop scope" in str(r["content"])
    ]
    assert denied and denied[0].get("is_error")
    calls = [
        json.loads(line)
        for path in (repo / ".git" / "fixloop").rglob("events.jsonl")
        for line in path.read_text().splitlines()
    ]
    agent_denials = [call for call in calls if call["event"] == "agent" and call["denied"]]
    assert agent_denials and agent_denials[0]["denied"][0]["path"] == "shelf/labels.py"


def test_review_fix_a_fixer_ignoring_its_denial_is_skipped_naming_the_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    fix = REVIEW_FIX_SCRIPT["fixer/CR-01/iteration-1"]
    # CR-01's real fix, plus an edit of labels.py (denied); it reports stock.py as if all was well.
    wide = {
        **fix,
        "edits": [
            *fix["edits"],
            {"path": "shelf/labels.py", "old": "def slug", "new": "def slug_"},
        ],
    }
    script = ScriptReplay({**REVIEW_FIX_SCRIPT, "fixer/CR-01/iteration-1": wide})

    with MessagesServer(script) as server:
        done = run_fixloop(
            "review-fix",
            REVIEW_PATH,
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    result = json.loads(done.stdout)
    cr01 = next(o for o in result["items"] if o["id"] == "CR-01")
    assert cr01["label"] == (
        "skipped: fixer tried to edit shelf/labels.py, outside the finding; rolled back"
    )
    assert "if not prices" not in (repo / "shelf" / "stock.py").read_text(), "CR-01 rolled back"
    assert "CR-01" not in git(repo, "log", "--format=%s")
    report = (repo / REPORT_PATH).read_text()
    assert "fixer tried to edit shelf/labels.py" in report


def test_malformed_structured_output_is_inconclusive_and_skipped(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    malformed = [structured({"output": {"files_changed": "shelf/stock.py"}})] * 5
    replay = ScriptReplay(REVIEW_FIX_SCRIPT)

    def script(request: RecordedRequest) -> Turn:
        if request.call_key == "fixer/CR-01/iteration-1":
            return malformed[0]
        return replay(request)

    with MessagesServer(script) as server:
        done = run_fixloop(
            "review-fix",
            REVIEW_PATH,
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    result = json.loads(done.stdout)
    cr01 = next(o for o in result["items"] if o["id"] == "CR-01")
    assert cr01["label"] == "skipped: fixer result inconclusive (malformed_output)"
    assert "if not prices" not in (repo / "shelf" / "stock.py").read_text()
    assert frontmatter(repo / REPORT_PATH)["fixed"] == 2


# -- fix-findings (seed 002) -------------------------------------------------------------------

BUGGY = "def mean(xs):\n    return sum(xs) / len(xs)\n"


def findings_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "helper.py").write_text("def helper():\n    return None\n")
    git(repo, "add", "calc.py", "helper.py")
    git(repo, "commit", "-q", "-m", "initial")
    findings = [
        finding(number, title=title, body="calc.py:2 has no guard.")
        for number, title in ((1, "mean() divides by zero"), (2, "mean() of None crashes"))
    ]
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(findings))
    return repo, path


def role_of(request: RecordedRequest) -> str:
    return request.call_key.split("/", maxsplit=1)[0]


def test_fix_findings_scope_expansion_from_a_denied_edit_is_escalated(tmp_path: Path) -> None:
    repo, findings = findings_repo(tmp_path)
    wants_helper = [
        tool_use("Read", {"file_path": "calc.py"}),
        tool_use("Edit", {"file_path": "helper.py", "old_string": "None", "new_string": "0"}),
        structured(
            {
                "output": {
                    "needs_scope_expansion": True,
                    "additional_files": ["helper.py"],
                    "justification": "the guard belongs in helper()",
                }
            }
        ),
    ]
    script = Conversations({"fixer": [wants_helper]}, key=role_of)
    one = json.loads(findings.read_text())[:1]
    findings.write_text(json.dumps(one))

    with MessagesServer(script) as server:
        done = run_fixloop(
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--on-scope-expansion",
            "defer",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    assert done.returncode == 1, done.stderr
    output = json.loads(done.stdout)["result"]["buckets"]
    assert [e["id"] for e in output["escalated"]] == [1]
    assert "scope expansion deferred" in json.dumps(output["escalated"][0])
    assert (repo / "helper.py").read_text() == "def helper():\n    return None\n"
    assert git(repo, "diff", "--staged") == "" and git(repo, "diff") == ""
    denial = server.conversation[-1].tool_results()[1]
    assert denial.get("is_error") and "not among the files assigned" in str(denial["content"])


def test_fix_findings_a_fixer_ignoring_its_denial_is_asked_about_and_given_the_file(
    tmp_path: Path,
) -> None:
    repo, findings = findings_repo(tmp_path)
    [first, _] = json.loads(findings.read_text())
    findings.write_text(json.dumps([first]))
    guard = {"path": "calc.py", "old": "len(xs)\n", "new": "len(xs) if xs else helper()\n"}
    helper = {"path": "helper.py", "old": "None", "new": "0.0"}
    script = ScriptReplay(
        {
            # Edits calc.py, is denied helper.py, and reports a calc.py fix as if nothing happened.
            "fixer/1/round-1": {
                "edits": [guard, helper],
                "output": {"files_changed": ["calc.py"], "summary": "guarded", "concerns": None},
            },
            # The same edits again: `guard` only matches if round 1's calc.py edit was undone.
            "fixer/1/round-1/expanded": {
                "edits": [guard, helper],
                "output": {
                    "files_changed": ["calc.py", "helper.py"],
                    "summary": "guarded, helper returns 0.0",
                    "concerns": None,
                },
            },
            "verifier/1/round-1": {
                "output": {
                    "schema_version": "v1",
                    "findings": [{**first, "verdict": "rejected", "evidence": "mean([]) == 0.0"}],
                    "checks_run": ["mean([]) traced"],
                }
            },
        }
    )

    with MessagesServer(script) as server:
        done = run_fixloop(
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--on-scope-expansion",
            "approve",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["result"]["buckets"]["resolved"] == [1]
    assert script.unplayed() == [] and server.unscripted == 0
    first_call = [r for r in server.conversation if r.call_key == "fixer/1/round-1"]
    refusals = [r for r in first_call[-1].tool_results() if r.get("is_error")]
    assert any("helper.py is not among the files assigned" in str(r["content"]) for r in refusals)
    assert git(repo, "show", ":calc.py") == BUGGY.replace(
        "len(xs)\n", "len(xs) if xs else helper()\n"
    )
    assert git(repo, "show", ":helper.py") == "def helper():\n    return 0.0\n"
    verifier = next(r for r in server.conversation if r.call_key == "verifier/1/round-1")
    assert "+    return 0.0" in verifier.system, "the approved file's diff was verified"
    assert git(repo, "rev-list", "--count", "HEAD") == "1\n", "staged, never committed"


def test_fix_findings_budget_stop_escalates_and_starts_nothing_more(tmp_path: Path) -> None:
    repo, findings = findings_repo(tmp_path)
    expensive = tool_use("Read", {"file_path": "calc.py"}, input_tokens=200_000)
    script = Conversations({"fixer": [[expensive, expensive]]}, key=role_of)

    with MessagesServer(script) as server:
        done = run_fixloop(
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--max-cost-usd",
            "0.05",
            "--json",
            env=server.env(),
            cwd=repo,
        )

    assert done.returncode == 1, done.stderr
    output = json.loads(done.stdout)["result"]["buckets"]
    assert sorted(e["id"] for e in output["escalated"]) == [1, 2]
    assert output["resolved"] == []
    assert len(server.conversation) == 1, "once the run budget was spent no call started"
    said = json.dumps(output["escalated"])
    assert "call_budget" in said, "the first call stopped at its (lowered) cost cap"
    assert "run cost budget spent" in said, "later calls say which budget stopped them"
    assert (repo / "calc.py").read_text() == BUGGY
    assert git(repo, "diff", "--staged") == ""


# -- fixloop demo --backend claude ---------------------------------------------------------------


def test_the_whole_demo_with_the_claude_backend(tmp_path: Path) -> None:
    # Every call the demo makes is scripted: an unscripted one is an API error, which stops the
    # run it is in (a backend that fails is not an item that fell short).
    scripts = (
        REVIEW_FIX_SCRIPT,
        FIX_FINDINGS_SCRIPT,
        FIX_ENGINE_SCRIPT,
        EXECUTE_WAVE_SCRIPT,
        FIX_ISSUE_SCRIPT,
    )
    assert len({key for script in scripts for key in script}) == sum(map(len, scripts))
    replay = ScriptReplay({key: reply for script in scripts for key, reply in script.items()})
    directory = tmp_path / "demo"

    with MessagesServer(replay) as server:
        done = run_fixloop(
            "demo",
            "--backend",
            "claude",
            "--dir",
            str(directory),
            env=server.env(),
            cwd=tmp_path,
        )

    assert done.returncode == 0, done.stdout + done.stderr  # the demo's own self-check passed
    assert replay.unplayed() == [] and server.unscripted == 0
    assert "REAL MODEL" in done.stdout and "SCRIPTED" not in done.stdout
    assert "tests         before: 3/8 passed    after: 7/8 passed" in done.stdout
    output = json.loads((directory / "fix-findings-output.json").read_text())
    assert (output["resolved"], [e["id"] for e in output["escalated"]]) == ([2], [1])
    assert [d["id"] for d in output["dropped"]] == [3]
    keys = {request.call_key for request in server.conversation}
    assert "verifier/3/pre-gate" in keys and "fixer/CR-01/iteration-1" in keys
    # fix-issue's tools played through the real CLI: the issue resolved, graded per test.
    assert "fix-issue     resolved after 1 attempt(s)" in done.stdout


def test_review_fix_run_budget_stops_new_fixer_calls(tmp_path: Path) -> None:
    repo = tmp_path / "shelf"
    build_example(repo)
    replay = ScriptReplay(REVIEW_FIX_SCRIPT)

    def costly(request: RecordedRequest) -> Turn:
        turn = replay(request)
        return dataclasses.replace(turn, input_tokens=100_000)

    with MessagesServer(costly) as server:
        done = run_fixloop(
            "review-fix",
            REVIEW_PATH,
            "--repo",
            str(repo),
            "--backend",
            "claude",
            "--json",
            "--max-cost-usd",
            "0.5",
            env=server.env(),
            cwd=repo,
        )

    result = json.loads(done.stdout)
    statuses = [finding["label"] for finding in result["items"]]
    assert any("call_budget" in status for status in statuses), statuses
    refused = [f for f in result["items"] if "run_budget" in f["label"]]
    assert refused, "once the run budget was spent, later findings were not started"
    assert all("not started: run cost budget spent" in f["detail"] for f in refused)
    started = {request.call_key for request in server.conversation}
    assert len(started) < len(REVIEW_FIX_SCRIPT), "no call started after the budget was spent"
    assert git(repo, "status", "--porcelain") == ""
