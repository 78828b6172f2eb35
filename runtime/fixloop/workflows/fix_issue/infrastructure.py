"""The test infrastructure a verdict depends on, and what acceptance does with a patch that
touches it (docs/fix-issue.md, "The tests are the base's").

- **Test files** (by folder or name, every `conftest.py` at any depth): the base's version is put
  back, and one the patch adds is removed, before the hidden tests are copied in. An honest fix
  often edits or adds a test; that edit simply does not count.
- **Everything else the runner reads before the tests** is refused, the patch rejected with the
  path and the reason: the runner's configuration sections (`pytest.ini`, `.pytest.ini`, the
  `[pytest]` of `tox.ini`, `[tool:pytest]` of `setup.cfg`, `[tool.pytest…]` of
  `pyproject.toml`), interpreter start-up hooks (`sitecustomize.py`, `usercustomize.py`, any
  `.pth`), a module of the runner's own (`pytest`, `_pytest`, `pluggy`, `unittest`, …) anywhere,
  and a new top-level module named like one of the standard library's (the repository root is
  first on `sys.path`: a new `json.py` there is what the runner imports). Putting back one
  section of a file the patch also changed for good reasons would be an edit nobody made; a fix
  needs none of these.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

_TEST_FOLDERS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__"})
_TEST_NAMES = re.compile(r"^(test_.*|.*_test\.[^.]+|.*\.test\.[^.]+|.*\.spec\.[^.]+|conftest\.py)$")
_START_UP = frozenset({"sitecustomize.py", "usercustomize.py"})
_RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "unittest", "py", "iniconfig", "xdist"})
_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
_INI_FILES = frozenset({"tox.ini", "setup.cfg"})
_PYTEST_INI = frozenset({"pytest.ini", ".pytest.ini"})
_SECTION = re.compile(r"^\s*\[([^\]]*)\]")


def is_test_path(path: str) -> bool:
    """A test file by its place or its name (the restore rule the document states)."""
    pure = PurePosixPath(path)
    return bool(_TEST_FOLDERS & set(pure.parts[:-1])) or bool(_TEST_NAMES.match(pure.name))


def to_restore(touched: Iterable[str], at_base: set[str]) -> tuple[list[str], list[str]]:
    """The test files the patch touched: those of the base (put back) and new ones (removed)."""
    tests = [path for path in touched if is_test_path(path)]
    return [p for p in tests if p in at_base], [p for p in tests if p not in at_base]


def _module_name(part: str) -> str:
    for suffix in _MODULE_SUFFIXES:
        if part.endswith(suffix):
            return part[: -len(suffix)].split(".", maxsplit=1)[0]
    return part


def path_refusal(path: str, at_base: set[str]) -> str | None:
    """Why a patch may not touch `path` (None: it may). A test file is never refused: it is put
    back or removed (`to_restore`)."""
    pure = PurePosixPath(path)
    if is_test_path(path):
        return None
    if pure.name in _START_UP or pure.suffix == ".pth":
        return f"{path}: an interpreter start-up hook runs before any test"
    if any(_module_name(part) in _RUNNER_MODULES for part in pure.parts):
        return f"{path}: it would stand in for a module of the test runner"
    top = _module_name(pure.parts[0])
    new_top = pure.parts[0] not in {PurePosixPath(p).parts[0] for p in at_base}
    if new_top and top in sys.stdlib_module_names:
        return f"{path}: a new top-level module would stand in for the standard library's {top!r}"
    return None


def _ini_sections(text: str) -> list[str]:
    """Every line of every section whose name mentions pytest (duplicates included)."""
    kept: list[str] = []
    inside = False
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header:
            inside = "pytest" in header.group(1).replace(" ", "").lower()
        if inside and line.strip():
            kept.append(line.strip())
    return kept


def _toml_pytest(text: str) -> Any:
    data = tomllib.loads(text) if text else {}
    return data.get("tool", {}).get("pytest")


def config_refusal(path: str, before: str | None, after: str | None) -> str | None:
    """Why the change of a runner configuration file from `before` to `after` is refused (None
    when it is not such a file, or its test sections are the same). None: no such file."""
    name = PurePosixPath(path).name
    if before == after:
        return None
    if name in _PYTEST_INI:
        return f"{path}: the test runner's configuration is the base's"
    if name in _INI_FILES:
        if _ini_sections(before or "") != _ini_sections(after or ""):
            return f"{path}: its pytest section is the test runner's configuration, the base's"
        return None
    if name == "pyproject.toml":
        try:
            same = _toml_pytest(before or "") == _toml_pytest(after or "")
        except tomllib.TOMLDecodeError:
            return f"{path}: not valid TOML, so its test sections cannot be checked"
        return None if same else f"{path}: its [tool.pytest] is the test runner's configuration"
    return None


def is_config(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in _PYTEST_INI or name in _INI_FILES or name == "pyproject.toml"


__all__ = [
    "config_refusal",
    "is_config",
    "is_test_path",
    "path_refusal",
    "to_restore",
]
