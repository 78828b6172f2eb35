"""The warm interpreter the crash matrices fork their runs from behaves as a fresh one would."""

from __future__ import annotations

import ast
import os
import signal
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.helpers import warm_python


def test_a_forked_run_has_its_own_argv_environment_folder_and_exit_code(tmp_path: Path) -> None:
    code = "import os, sys; print(os.getcwd(), os.environ.get('PROBE'), sys.argv[1:]); sys.exit(3)"
    done = warm_python.run(
        [sys.executable, "-c", code, "one", "two"], env={"PROBE": "set"}, cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (3, f"{tmp_path} set ['one', 'two']\n")
    assert "PROBE" not in os.environ


def test_a_module_runs_as_main_and_an_error_is_a_traceback_on_stderr() -> None:
    done = warm_python.run(["-m", "fixloop", "--version"])
    assert done.returncode == 0 and done.stdout.strip()
    failed = warm_python.run(["-c", "raise ValueError('boom')"])
    assert failed.returncode == 1 and "ValueError: boom" in failed.stderr


def test_a_process_that_kills_itself_exits_minus_nine_with_what_it_printed() -> None:
    code = f"import os; print('before', flush=False); os.kill(os.getpid(), {signal.SIGKILL})"
    done = warm_python.run(["-c", code])
    assert (done.returncode, done.stdout) == (-9, "before\n")


def _module_level_reads(path: Path) -> list[str]:
    """Statements at a module's top level (outside functions and classes) that read the
    environment, the home folder or the process id: a forked child would inherit the server's."""
    reads = []
    statements: list[ast.AST] = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while statements:
        statement = statements.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            statements += [*statement.decorator_list, *statement.args.defaults]
            continue
        if isinstance(statement, ast.ClassDef):
            statements += statement.body  # a class body runs at import
            continue
        for node in ast.walk(statement):
            name = ast.unparse(node) if isinstance(node, (ast.Attribute, ast.Name)) else ""
            if name in {"os.environ", "os.getenv", "Path.home", "os.getpid", "os.getcwd"}:
                reads.append(f"{path.relative_to(REPO_ROOT)}:{getattr(node, 'lineno', 0)}: {name}")
    return reads


def test_no_runtime_module_reads_the_environment_when_it_is_imported() -> None:
    modules = sorted((REPO_ROOT / "runtime" / "fixloop").rglob("*.py"))
    assert [read for path in modules for read in _module_level_reads(path)] == []


def test_a_run_that_sets_what_gitpython_reads_on_import_gets_a_fresh_interpreter() -> None:
    # gitpython is preloaded, and reads GIT_PYTHON_* when it is imported.
    code = "import git; print(git.Git.GIT_PYTHON_TRACE)"
    env = {key: value for key, value in os.environ.items() if key != "GIT_PYTHON_TRACE"}
    assert warm_python.run(["-c", code], env=env).stdout == "False\n"
    traced = warm_python.run(["-c", code], env=env | {"GIT_PYTHON_TRACE": "full"})
    assert (traced.returncode, traced.stdout) == (0, "full\n")
