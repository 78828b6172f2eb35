"""The verdict per test: defaults from the base, named tests, and every way to fail closed."""

from __future__ import annotations

from fixloop.workflows.fix_issue.grading import TestSelection, grade_tests
from fixloop.workflows.fix_issue.runners import TestReport, TestStatus
from fixloop.workflows.fix_issue.suite import CommandRun, RunStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def _run(tests: dict[str, TestStatus] | None, runner: str = "pytest") -> CommandRun:
    reports = None if tests is None else {k: TestReport(k, v) for k, v in tests.items()}
    return CommandRun(
        "python3 -m pytest", 0, RunStatus.PASSED, "r", 0.1, "", runner=runner, tests=reports
    )


BASE = [_run({"t::fixed": F, "t::kept": P})]


def test_the_defaults_come_from_the_base() -> None:
    grade = grade_tests(TestSelection(), base=BASE, accepted=[_run({"t::fixed": P, "t::kept": P})])
    assert grade.ok and grade.reason == "fail-to-pass 1/1, pass-to-pass 1/1"
    assert [(row.id, row.role, row.base, row.accepted) for row in grade.rows] == [
        ("t::fixed", "fail_to_pass", F, P),
        ("t::kept", "pass_to_pass", P, P),
    ]


def test_skipped_missing_and_no_report_count_as_failed() -> None:
    skipped = grade_tests(
        TestSelection(), base=BASE, accepted=[_run({"t::fixed": S, "t::kept": P})]
    )
    assert not skipped.ok and "t::fixed skipped" in skipped.reason
    missing = grade_tests(TestSelection(), base=BASE, accepted=[_run({"t::fixed": P})])
    assert not missing.ok and "t::kept missing" in missing.reason
    none = grade_tests(TestSelection(), base=BASE, accepted=[_run(None)])
    assert not none.ok and "wrote no report" in none.reason
    assert not grade_tests(TestSelection(), base=BASE, accepted=[]).ok


def test_named_tests_are_matched_by_their_node_ids() -> None:
    selection = TestSelection(fail_to_pass=("tests/test_a.py::test_new",), pass_to_pass=())
    grade = grade_tests(
        selection, base=[_run({})], accepted=[_run({"tests.test_a::test_new": P, "x::y": F})]
    )
    assert grade.ok, grade.reason
    assert grade.rows[0].id == "tests/test_a.py::test_new"


def test_a_task_needs_a_fail_to_pass_test() -> None:
    selection = TestSelection(require_fail_to_pass=True)
    grade = grade_tests(selection, base=[_run({"t::kept": P})], accepted=[_run({"t::kept": P})])
    assert not grade.ok and "no fail-to-pass test" in grade.reason
    assert grade_tests(
        TestSelection(), base=[_run({"t::kept": P})], accepted=[_run({"t::kept": P})]
    ).ok


def test_a_command_without_a_runner_is_graded_by_its_exit_code() -> None:
    failed = CommandRun("make test", 2, RunStatus.ERROR, "r", 0.1, "")
    assert not grade_tests(TestSelection(), base=[], accepted=[failed]).ok
    passed = CommandRun("make test", 0, RunStatus.PASSED, "r", 0.1, "")
    assert grade_tests(TestSelection(), base=[], accepted=[passed]).ok
