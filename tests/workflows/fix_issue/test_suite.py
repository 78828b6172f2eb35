"""The preset test commands (`suite.py`): argv never a shell, exit codes as pytest defines them,
a timeout or a missing program a failed tool call, a run that changed the tree no result."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_issue import UNITTEST, make_issue_repo

from fixloop.diagnostics import FixloopError
from fixloop.sandboxes import open_sandbox
from fixloop.sandboxes.protocol import OUTPUT_CAP_BYTES
from fixloop.workflows.fix_issue.plan import (
    DEFAULT_TEST_TIMEOUT_S,
    FixIssueOptions,
    plan_fix_issue,
    preset_tests,
)
from fixloop.workflows.fix_issue.suite import OUTPUT_TAIL_CHARS, PresetTest, RunStatus, Suite
from fixloop.workflows.fix_issue.tools import IssueTools


def suite_of(repo: Path, *commands: tuple[str, ...], timeout_s: float = 60) -> Suite:
    presets = [PresetTest(command) for command in commands]
    return Suite(presets, open_sandbox("local", worktree=repo), repo, timeout_s=timeout_s)


def run_tests(tools: IssueTools, **arguments: Any) -> dict[str, Any]:
    reply = tools.call("run_tests", arguments)
    answer: dict[str, Any] = json.loads(reply.text)
    assert reply.is_error is (not answer["ok"])
    return answer


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_issue_repo(tmp_path / "repo")


def test_shell_text_in_a_test_command_stays_words(repo: Path) -> None:
    """The attack: a `--test` holding command substitution, `&&` and a redirection."""
    raw = "python3 -c 'import sys; print(sys.argv[1:])' $(touch pwned) && touch pwned2 > out"
    [command], guessed = preset_tests([raw], repo, check_found=True)
    assert command.argv[3:] == ("$(touch", "pwned)", "&&", "touch", "pwned2", ">", "out")
    [run] = suite_of(repo, command.argv).run()
    assert run.status is RunStatus.PASSED and not guessed
    assert "['$(touch', 'pwned)', '&&', 'touch', 'pwned2', '>', 'out']" in run.output
    assert not any((repo / name).exists() for name in ("pwned", "pwned2", "out"))


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (0, "passed"),
        (1, "failed"),
        (2, "error"),  # interrupted
        (3, "error"),  # internal error
        (4, "error"),  # usage error
        (5, "no_tests"),
    ],
)
def test_exit_codes_read_as_pytest_defines_them_and_only_zero_passes(
    repo: Path, code: int, status: str
) -> None:
    tools = IssueTools(repo, suite_of(repo, (sys.executable, "-c", f"raise SystemExit({code})")))
    answer = run_tests(tools)
    [result] = answer["results"]
    assert (result["status"], result["exit_code"]) == (status, code)
    assert answer["passed"] is (code == 0)
    assert answer["ok"] is True  # a result about the code, not a broken tool call


def test_a_timeout_or_a_missing_program_is_a_failed_tool_call(repo: Path) -> None:
    sleeper = (sys.executable, "-c", "import time; time.sleep(60)")
    tools = IssueTools(repo, suite_of(repo, sleeper, ("no-such-test-runner",), timeout_s=1))
    answer = run_tests(tools)
    assert answer["ok"] is False and answer["error"] == "test_run_failed"
    assert [r["status"] for r in answer["results"]] == ["timed_out", "not_found"]
    assert answer["passed"] is False


def test_a_run_that_changes_the_tree_holds_for_no_revision_and_an_edit_voids_a_result(
    repo: Path,
) -> None:
    writer = (sys.executable, "-c", "open('made-by-the-test.txt', 'w').write('x')")
    suite = suite_of(repo, writer)
    [changed] = suite.run()
    assert changed.workspace_changed and changed.exit_code == 0 and not changed.passed
    assert suite.results_at(changed.revision) is None
    steady = suite_of(repo, tuple(UNITTEST))
    tools = IssueTools(repo, steady)
    before = run_tests(tools)
    assert steady.results_at(before["revision"]) is not None
    read = json.loads(tools.call("read_file", {"path": "calc/stats.py"}).text)
    edit = {"path": "calc/stats.py", "version": read["version"], "old": " + 1", "new": ""}
    assert json.loads(tools.call("edit_file", edit).text)["ok"]
    assert steady.revision() != before["revision"]
    assert steady.results_at(steady.revision()) is None  # the old result says nothing now
    assert [run.passed for run in steady.current()] == [True]  # so it runs again


def test_the_test_timeout_is_600_seconds_unless_given(repo: Path, tmp_path: Path) -> None:
    issue = tmp_path / "ISSUE.md"
    issue.write_text("average() is wrong\n")
    assert FixIssueOptions(issue=issue, repo=repo).test_timeout_s == DEFAULT_TEST_TIMEOUT_S == 600
    for bad in (0.0, -1.0, float("nan")):
        options = FixIssueOptions(issue=issue, repo=repo, test_timeout_s=bad, tests=[UNITTEST])
        with pytest.raises(FixloopError, match="a test timeout is a number of seconds > 0"):
            plan_fix_issue(options)


def test_each_stream_is_capped_at_1_mib_and_the_answer_keeps_the_tail(repo: Path) -> None:
    loud = (
        "import sys\n"
        "sys.stdout.write('o' * (3 << 20) + 'END-OF-STDOUT\\n')\n"
        "sys.stderr.write('e' * (3 << 20) + 'END-OF-STDERR\\n')\n"
    )
    suite = suite_of(repo, (sys.executable, "-c", loud))
    done = suite.sandbox.run([sys.executable, "-c", loud], cwd=repo, timeout_s=60)
    for stream, end in ((done.stdout, "END-OF-STDOUT"), (done.stderr, "END-OF-STDERR")):
        # the head and the tail, and a line saying how much was left out between them
        assert len(stream.encode()) <= OUTPUT_CAP_BYTES + 100 and stream.rstrip().endswith(end)
    tools = IssueTools(repo, suite)
    [result] = run_tests(tools)["results"]
    assert len(result["output"]) == OUTPUT_TAIL_CHARS
    assert result["output"].rstrip().endswith("END-OF-STDERR")
    assert result["exit_code"] == 0 and result["duration_s"] >= 0
    assert OUTPUT_CAP_BYTES == 1 << 20
