"""The runners' commands and reports: pytest's junit-xml and unittest's JSON, read fail-closed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.workflows.fix_issue.runners import (
    PytestRunner,
    TestStatus,
    UnittestRunner,
    mangle,
    runner_for,
)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_ok" file="tests/test_a.py" line="1"/>
<testcase classname="tests.test_a.Case" name="test_p[1-2]" file="tests/test_a.py" line="3"/>
<testcase classname="tests.test_a" name="test_skip" file="tests/test_a.py"><skipped/></testcase>
<testcase classname="tests.test_a" name="test_xf" file="tests/test_a.py">
  <skipped type="pytest.xfail" message="x"/></testcase>
<testcase classname="tests.test_a" name="test_bad" file="tests/test_a.py"><failure/></testcase>
<testcase classname="tests.test_a" name="test_ok" file="tests/test_a.py"><error/></testcase>
<testcase classname="" name="tests.test_b"><error message="collection failure"/></testcase>
</testsuite></testsuites>
"""


def test_which_commands_have_a_runner() -> None:
    assert isinstance(runner_for(("python3", "-m", "pytest", "-q")), PytestRunner)
    assert isinstance(
        runner_for(("/usr/bin/python3.11", "-X", "dev", "-m", "pytest")), PytestRunner
    )
    assert isinstance(runner_for(("pytest", "tests")), PytestRunner)
    assert isinstance(runner_for(("python3", "-m", "unittest", "-v")), UnittestRunner)
    assert runner_for(("make", "test")) is None
    assert runner_for(("python3", "check.py")) is None


def test_a_node_id_is_named_as_junit_names_it() -> None:
    assert mangle("tests/test_a.py::Case::test_p[1-2]") == "tests.test_a.Case::test_p[1-2]"
    assert mangle("tests/test_a.py::test_ok") == "tests.test_a::test_ok"


def test_the_junit_report_is_read_per_test_worst_first(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text(JUNIT)
    tests = PytestRunner().read(report)
    assert tests is not None
    statuses = {key: test.status for key, test in tests.items()}
    assert statuses == {
        "tests.test_a::test_ok": TestStatus.ERROR,  # a teardown error after the pass
        "tests.test_a.Case::test_p[1-2]": TestStatus.PASSED,
        "tests.test_a::test_skip": TestStatus.SKIPPED,
        "tests.test_a::test_xf": TestStatus.XFAILED,
        "tests.test_a::test_bad": TestStatus.FAILED,
        "collection::tests.test_b": TestStatus.ERROR,
    }
    assert tests["tests.test_a.Case::test_p[1-2]"].id == "tests/test_a.py::Case::test_p[1-2]"
    assert tests["collection::tests.test_b"].collection


@pytest.mark.parametrize("text", ["", "<html/>", "<testsuites><testcase/>", "not xml"])
def test_a_bad_or_missing_report_is_no_report(tmp_path: Path, text: str) -> None:
    report = tmp_path / "r.xml"
    assert PytestRunner().read(report) is None
    report.write_text(text)
    assert PytestRunner().read(report) is None
    assert UnittestRunner().read(report) is None
    report.write_text(json.dumps({"runner": "unittest", "tests": {"a": "great"}}))
    assert UnittestRunner().read(report) is None


def _run(tmp_path: Path, argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False)


def test_the_unittest_program_reports_every_test_and_refuses_a_rewritten_framework(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_a.py").write_text(
        "import unittest\n"
        "class A(unittest.TestCase):\n"
        "    def test_ok(self): pass\n"
        "    def test_bad(self): self.fail('no')\n"
        "    @unittest.skip('later')\n"
        "    def test_skip(self): pass\n"
        "    @unittest.expectedFailure\n"
        "    def test_xf(self): self.fail('known')\n"
    )
    report = tmp_path / "report.json"
    runner = UnittestRunner()
    done = _run(tmp_path, runner.command((sys.executable, "-m", "unittest"), report))
    assert done.returncode == 1, done.stderr
    tests = runner.read(report)
    assert tests is not None
    assert {key: str(test.status) for key, test in tests.items()} == {
        "test_a.A.test_ok": "passed",
        "test_a.A.test_bad": "failed",
        "test_a.A.test_skip": "skipped",
        "test_a.A.test_xf": "xfailed",
    }
    report.unlink()
    (tmp_path / "test_0.py").write_text(
        "import unittest\nunittest.TestCase.fail = lambda self, msg=None: None\n"
    )
    done = _run(tmp_path, runner.command((sys.executable, "-m", "unittest"), report))
    assert done.returncode == 3 and not report.exists()
    assert "unittest.case.TestCase.fail" in done.stderr
