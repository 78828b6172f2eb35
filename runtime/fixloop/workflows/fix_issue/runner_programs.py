"""The programs a known runner's command becomes in the sandbox (`python3 -c PROGRAM REPORT
ARGS…`): the runner as `python3 -m pytest` or `python3 -m unittest` would run it, its report
written to REPORT, the process ended with `os._exit` so no `atexit` hook of the tested code runs
after.

Both take a snapshot of the test framework once the base's configuration is loaded and before
the first test module is imported (so before the code under test runs): every function and class
of its modules, and every method of those classes, by identity. When the tests are over, a
framework that changed (the tested code replaced `unittest.TestCase.run`, or pytest's
`Function.runtest`, say) or, under pytest, a plugin registered since that is no `conftest.py`,
means the report does not count: it is removed (pytest) or not written (unittest), the reason is
printed, and the command exits 3. This raises the bar for code that rewrites the framework; it
cannot make the tested code, which runs in the same process, harmless (docs/fix-issue.md).
"""

from __future__ import annotations

_GUARD = r"""
import sys, types
_KINDS = (types.FunctionType, types.BuiltinFunctionType, type, staticmethod, classmethod, property)
def _framework(prefixes):
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not any(name == p or name.startswith(p + ".") for p in prefixes):
            continue
        for key, value in list(vars(module).items()):
            if isinstance(value, _KINDS):
                found[(name, key)] = value
            if isinstance(value, type) and getattr(value, "__module__", "") == name:
                for attr, inner in list(vars(value).items()):
                    if isinstance(inner, _KINDS):
                        found[(name, key, attr)] = inner
    return found
def _tampered(before, prefixes):
    after = _framework(prefixes)
    return sorted(".".join(k) for k in before if after.get(k) is not before[k])
def _refuse(changed):
    print("fixloop: the test framework changed while the tests ran, so their report does not"
          " count: " + ", ".join(changed[:5]), file=sys.stderr)
"""

PYTEST = (
    "import os, sys\n"
    "report = sys.argv[1]\n"
    + _GUARD
    + r"""
import pytest
PREFIXES = ("_pytest", "pytest", "pluggy", "xml.etree", "os", "builtins", "__main__")
class Guard:
    before = plugins = None
    changed = ["the session did not end"]
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        Guard.plugins = {id(p) for p in session.config.pluginmanager.get_plugins()}
        Guard.before = _framework(PREFIXES)
    # Checked while the session is still on (pytest undoes its own patches at unconfigure).
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        if Guard.before is None:
            Guard.changed = ["no collection"]
            return
        Guard.changed = _tampered(Guard.before, PREFIXES) + [
            "plugin " + type(p).__module__ + "." + type(p).__qualname__
            for p in session.config.pluginmanager.get_plugins()
            if id(p) not in Guard.plugins and not _conftest(p)
        ]
def _conftest(plugin):
    return isinstance(plugin, types.ModuleType) and str(
        getattr(plugin, "__file__", "") or "").endswith("conftest.py")
code = int(pytest.main([*sys.argv[2:], "--junitxml", report], plugins=[Guard()]))
changed = Guard.changed
if changed:
    try:
        os.unlink(report)
    except OSError:
        pass
    _refuse(changed)
    code = 3
sys.stdout.flush(); sys.stderr.flush()
os._exit(code)
"""
)

UNITTEST = (
    "import json, os, sys, unittest\n"
    "report, args, seen = sys.argv[1], sys.argv[2:], {}\n"
    + _GUARD
    + r"""
PREFIXES = ("unittest", "json", "os", "builtins", "__main__")
def note(test, status):
    key = test.id()
    if seen.get(key) in (None, "passed"):
        seen[key] = status
class Recording(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test); seen.setdefault(test.id(), "passed")
    def addFailure(self, test, err):
        super().addFailure(test, err); note(test, "failed")
    def addError(self, test, err):
        super().addError(test, err); note(test, "error")
    def addSkip(self, test, reason):
        super().addSkip(test, reason); note(test, "skipped")
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err); note(test, "xfailed")
    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test); note(test, "failed")
    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            note(test, "failed" if issubclass(err[0], test.failureException) else "error")
runner = unittest.TextTestRunner(resultclass=Recording)
before = _framework(PREFIXES)
program = unittest.main(
    module=None, argv=["python -m unittest", *args], testRunner=runner, exit=False
)
changed = _tampered(before, PREFIXES)
if changed or type(seen) is not dict:
    _refuse(changed or ["the results"])
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(3)
with open(report + ".part", "w", encoding="utf-8") as out:
    json.dump({"runner": "unittest", "tests": seen}, out)
os.replace(report + ".part", report)
sys.stdout.flush(); sys.stderr.flush()
os._exit(0 if program.result.wasSuccessful() else 1)
"""
)

__all__ = ["PYTEST", "UNITTEST"]
