"""Test runners that say, per test, what happened: the command that writes the runner's own
machine-readable report, and the reader of that report.

    runner = runner_for(("python3", "-m", "pytest", "-q", "tests"))
    argv = runner.command(argv, report)      # the same tests, with a report written to `report`
    tests = runner.read(report)               # {key: TestReport}, or None: no usable report

Two runners: pytest (its junit-xml, `--junitxml`) and unittest (which has no report of its own:
the same `unittest.main` discovery, under a result class that records each test and writes a
JSON file). `python3 -m …` commands run as the programs of `runner_programs.py`: the report
written, the framework checked for changes, the process ended with `os._exit`. A command of any
other program has no runner: it is graded by its exit code alone.

A test is known by a key both sides compute: pytest's junit `classname::name` (a node id such
as `tests/test_x.py::Case::test_a[1]` maps to it the way pytest's junit plugin does), unittest's
`module.Class.test`. The report is read fail-closed: a file that is missing, not well-formed or
not of the expected shape is no report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Protocol
from xml.etree import ElementTree

from fixloop.workflows.fix_issue import runner_programs as programs

MAX_REPORT_BYTES = 64 << 20
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_COLLECTION = (
    "collection"  # the pseudo-test pytest or unittest reports for a file it could not load
)


class TestStatus(StrEnum):
    __test__ = False  # not a test class, whatever pytest guesses from its name
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    MISSING = "missing"  # not in the report: not collected, deselected, or no report at all

    @property
    def passed(self) -> bool:
        return self is TestStatus.PASSED


_WORST = [TestStatus.PASSED, TestStatus.XFAILED, TestStatus.SKIPPED, TestStatus.FAILED]


def worse(a: TestStatus, b: TestStatus) -> TestStatus:
    """The status of a test reported twice (a teardown error after a pass, two commands)."""
    rank = {status: index for index, status in enumerate(_WORST)}
    return a if rank.get(a, len(_WORST)) >= rank.get(b, len(_WORST)) else b


@dataclass(frozen=True)
class TestReport:
    __test__ = False  # not a test class, whatever pytest guesses from its name
    id: str  # as a person names it: a pytest node id where it can be rebuilt, else the key
    status: TestStatus
    collection: bool = False  # a file that could not be loaded, not a test


class Runner(Protocol):
    name: str

    def command(self, argv: Sequence[str], report: Path) -> tuple[str, ...]: ...

    def read(self, report: Path) -> dict[str, TestReport] | None: ...

    def key(self, test_id: str) -> str: ...


def _python(word: str) -> bool:
    return bool(_PYTHON.match(PurePosixPath(word).name))


def _module_after(argv: Sequence[str]) -> tuple[str, int] | None:
    """`python3 [-X dev -W error -B ...] -m MODULE ...`: the module, and the index after it."""
    if not argv or not _python(argv[0]):
        return None
    index = 1
    while index < len(argv) - 1:
        word = argv[index]
        if word == "-m":
            return argv[index + 1], index + 2
        if not word.startswith("-") or word == "-c":
            return None
        index += 2 if word in ("-X", "-W") else 1
    return None


def mangle(node_id: str) -> str:
    """A pytest node id as its junit-xml names it (`_pytest.junitxml.mangle_test_address`)."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


class PytestRunner:
    name = "pytest"

    def command(self, argv: Sequence[str], report: Path) -> tuple[str, ...]:
        ours = ("-o", "junit_family=xunit1", "-o", "junit_logging=no")
        found = _module_after(argv)
        if found is None:  # the `pytest` program itself: no guard (docs/fix-issue.md)
            return (*argv, *ours, "--junitxml", str(report))
        _, after = found
        head = (argv[0], *argv[1 : after - 2])
        return (*head, "-c", programs.PYTEST, str(report), *argv[after:], *ours)

    def key(self, test_id: str) -> str:
        return mangle(test_id) if "::" in test_id and not test_id.startswith(":") else test_id

    def read(self, report: Path) -> dict[str, TestReport] | None:
        root = _xml(report)
        if root is None:
            return None
        found: dict[str, TestReport] = {}
        for case in root.iter("testcase"):
            classname, name = case.get("classname", ""), case.get("name", "")
            if not name:
                return None
            status = _case_status(case)
            collection = not classname  # pytest reports a file it could not collect this way
            key = f"{classname}::{name}" if classname else f"{_COLLECTION}::{name}"
            shown = _node_id(case.get("file", ""), classname, name) if classname else name
            earlier = found.get(key)
            if earlier is not None:
                status = worse(earlier.status, status)
            found[key] = TestReport(shown, status, collection)
        return found


def _xml(report: Path) -> ElementTree.Element | None:
    try:
        if not report.is_file() or report.stat().st_size > MAX_REPORT_BYTES:
            return None
        root = ElementTree.parse(report).getroot()  # noqa: S314  (our own runner's file)
    except (OSError, ElementTree.ParseError):
        return None
    return root if root.tag in ("testsuites", "testsuite") else None


def _case_status(case: ElementTree.Element) -> TestStatus:
    tags = {child.tag: child for child in case}
    if "error" in tags:
        return TestStatus.ERROR
    if "failure" in tags:
        return TestStatus.FAILED
    if "skipped" in tags:
        kind = tags["skipped"].get("type", "")
        return TestStatus.XFAILED if kind == "pytest.xfail" else TestStatus.SKIPPED
    return TestStatus.PASSED


def _node_id(file: str, classname: str, name: str) -> str:
    """The node id back from junit's names, where the file says how much is the module."""
    module = re.sub(r"\.py$", "", file.replace("/", "."))
    if file and (classname == module or classname.startswith(module + ".")):
        inner = classname[len(module) + 1 :].split(".") if classname != module else []
        return "::".join([file, *[part for part in inner if part], name])
    return f"{classname}::{name}"


_FAILED_LOAD = "unittest.loader._FailedTest."


class UnittestRunner:
    name = "unittest"

    def command(self, argv: Sequence[str], report: Path) -> tuple[str, ...]:
        found = _module_after(argv)
        assert found is not None, "runner_for chose unittest for a `python -m unittest` command"
        _, after = found
        head = (argv[0], *argv[1 : after - 2])
        return (*head, "-c", programs.UNITTEST, str(report), *argv[after:])

    def key(self, test_id: str) -> str:
        return test_id

    def read(self, report: Path) -> dict[str, TestReport] | None:
        try:
            if not report.is_file() or report.stat().st_size > MAX_REPORT_BYTES:
                return None
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        tests = data.get("tests") if isinstance(data, dict) else None
        if data.get("runner") != "unittest" or not isinstance(tests, dict):
            return None
        found: dict[str, TestReport] = {}
        for key, raw in tests.items():
            try:
                status = TestStatus(raw)
            except ValueError:
                return None
            collection = key.startswith(_FAILED_LOAD)
            found[key] = TestReport(key, status, collection)
        return found


def runner_named(name: str) -> Runner | None:
    if name == PytestRunner.name:
        return PytestRunner()
    if name == UnittestRunner.name:
        return UnittestRunner()
    return None


def runner_for(argv: Sequence[str]) -> Runner | None:
    """The runner of a preset command, or None for a program fixloop cannot read a report of."""
    found = _module_after(argv)
    if found is not None:
        module = found[0]
        if module == "pytest":
            return PytestRunner()
        if module == "unittest":
            return UnittestRunner()
        return None
    if argv and PurePosixPath(argv[0]).name in ("pytest", "py.test"):
        return PytestRunner()
    return None


__all__ = [
    "PytestRunner",
    "Runner",
    "TestReport",
    "TestStatus",
    "UnittestRunner",
    "mangle",
    "runner_for",
    "runner_named",
    "worse",
]
