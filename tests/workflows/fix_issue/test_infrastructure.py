"""What acceptance does with a patch that touches the test infrastructure: test files go back
(or go), runner configuration, start-up hooks and runner shadows are refused."""

from __future__ import annotations

import pytest

from fixloop.workflows.fix_issue.infrastructure import config_refusal, path_refusal, to_restore

BASE = {"calc/stats.py", "calc/json.py", "tests/test_stats.py", "json.py", "setup.cfg"}


def test_test_files_of_the_base_go_back_and_new_ones_go() -> None:
    touched = ["calc/stats.py", "tests/test_stats.py", "conftest.py", "pkg/sub/conftest.py"]
    assert to_restore(touched, BASE) == (
        ["tests/test_stats.py"],
        ["conftest.py", "pkg/sub/conftest.py"],
    )


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("sitecustomize.py", "start-up hook"),
        ("src/usercustomize.py", "start-up hook"),
        ("evil.pth", "start-up hook"),
        ("pytest.py", "module of the test runner"),
        ("_pytest/runner.py", "module of the test runner"),
        ("lib/unittest/__init__.py", "module of the test runner"),
        ("argparse.py", "standard library's 'argparse'"),
        ("json/__init__.py", "standard library's 'json'"),  # a new package
        ("json.py", None),  # the base's own top-level module
        ("calc/json.py", None),  # inside a package: no shadow
        ("calc/stats.py", None),
        ("tests/pytest.py", None),  # a test path: removed, not refused
    ],
)
def test_what_a_patch_may_not_touch(path: str, refused: str | None) -> None:
    found = path_refusal(path, BASE)
    assert (found is None) if refused is None else (refused in (found or "")), found


def test_a_configuration_file_is_refused_only_for_its_test_sections() -> None:
    cfg = "[metadata]\nname = calc\n"
    assert config_refusal("setup.cfg", cfg, cfg + "version = 2\n") is None
    deselect = cfg + "\n[tool:pytest]\naddopts = --deselect tests/test_a.py::test_a\n"
    assert "pytest section" in (config_refusal("setup.cfg", cfg, deselect) or "")
    assert "pytest section" in (config_refusal("tox.ini", None, "[pytest]\naddopts = -k x\n") or "")
    project = '[project]\nname = "calc"\n'
    assert config_refusal("pyproject.toml", project, project + 'version = "2"\n') is None
    ini = project + '[tool.pytest.ini_options]\naddopts = "-p no:x"\n'
    assert "[tool.pytest]" in (config_refusal("pyproject.toml", project, ini) or "")
    assert config_refusal("pyproject.toml", project, "[broken") is not None
    assert config_refusal("pytest.ini", None, "[pytest]\n") is not None
    assert config_refusal("docs/conf.py", "a", "b") is None
