"""Start a fixloop process without paying for its imports again: a fork of a warm interpreter.

The crash matrices start a real fixloop process for every kill point (and again to recover or
resume), and each fresh interpreter spends about half a second of CPU importing pydantic, jinja2,
markdown-it and the runtime before it runs its first step: as much as the run it then makes.
`run()` takes the same argv as `subprocess.run([sys.executable, ...])` and returns the same
`CompletedProcess`, but the process is forked from a server (multiprocessing's forkserver,
single-threaded, one per pytest worker) that imported those modules once and ran nothing.

The child is still a process of its own: its own pid, environment, working directory and
stdio files; the crash switch SIGKILLs it for real and the exit code is -9 as before. What it
shares with a fresh interpreter is everything the runtime computes on first use, since the
server only imports (no module reads the environment or the home folder at import time;
tests/helpers/test_warm_python.py holds that). gitpython is the one preloaded library that
does read the environment when imported (`GIT_PYTHON_*`: which git, tracing): a run whose
environment sets them otherwise than the server's gets a fresh interpreter instead. Output is
line-buffered and written through, as PYTHONUNBUFFERED would make it, so what a killed process
printed is kept.
"""

from __future__ import annotations

import atexit
import io
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# What a fixloop process of the tests imports: the command line, every workflow, the scripted
# model, recovery. Anything else is imported in the child as usual.
PRELOAD = [
    "fixloop.cli.main",
    "fixloop.cli.workflow_command",
    "fixloop.agents.scripted",
    "fixloop.runs.recovery",
    "fixloop.runs.git_session",
    "fixloop.workflows.registry",
    "fixloop.workflows.fix_engine.workflow",
    "fixloop.workflows.execute_wave.workflow",
    "fixloop.workflows.fix_issue.workflow",
    "fixloop.workflows.review_fix.workflow",
    "fixloop.workflows.fix_findings.workflow",
    # Imported on first use by every run: the extras the command line wires in, and gitpython
    # (with the `git version` it runs when imported) for the runtime's git reads.
    "fixloop.extras.browser.seams",
    "fixloop.sandboxes.sweep",
    "git",
]
# What gitpython reads from the environment when it is imported (git.cmd, git/__init__).
IMPORT_TIME_ENVIRONMENT = ("GIT_PYTHON_GIT_EXECUTABLE", "GIT_PYTHON_REFRESH", "GIT_PYTHON_TRACE")

_context: Any = None
# IMPORT_TIME_ENVIRONMENT as the server imported the preloads with (its environment is this
# process's when it starts, at the first run).
_server_environment: dict[str, str | None] = {}


def _server() -> Any:
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        _server_environment.update({key: os.environ.get(key) for key in IMPORT_TIME_ENVIRONMENT})
        _context = context
    return _context


def _same_imports(environ: Mapping[str, str]) -> bool:
    """Whether a process with `environ` would import the preloads as the server did."""
    _server()
    return all(environ.get(key) == _server_environment[key] for key in IMPORT_TIME_ENVIRONMENT)


def _child(argv: list[str], env: dict[str, str], cwd: str | None, stdio: list[str]) -> None:
    """Become the process `python ARGV` would have been (runs in the forked child)."""
    for fd, path in enumerate(stdio):
        file_fd = os.open(path, os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_TRUNC)
        os.dup2(file_fd, fd)
        os.close(file_fd)
    sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False), "utf-8")
    # The process's own stdio for its life, as an interpreter's are: never closed here.
    sys.stdout = io.TextIOWrapper(
        os.fdopen(1, "wb", closefd=False), "utf-8", line_buffering=True, write_through=True
    )
    sys.stderr = io.TextIOWrapper(
        os.fdopen(2, "wb", closefd=False), "utf-8", line_buffering=True, write_through=True
    )
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = list(argv)
            sys.path.insert(0, str(Path(argv[0]).resolve().parent))
            runpy.run_path(argv[0], run_name="__main__")
    finally:
        # multiprocessing ends its children with os._exit; an interpreter would run these.
        atexit._run_exitfuncs()


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    stdin: str = "",
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run([sys.executable, *ARGV], capture_output=True, text=True, input=STDIN)`,
    forked warm. `argv` may start with `sys.executable`, which is dropped."""
    args = list(argv)
    if args and args[0] == sys.executable:
        args = args[1:]
    environ = dict(os.environ if env is None else env)
    if not _same_imports(environ):
        return subprocess.run(
            [sys.executable, *args],
            env=environ | {"PYTHONUNBUFFERED": "1"},
            cwd=cwd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    with tempfile.TemporaryDirectory(prefix="warm-python-") as folder:
        given, out, err = Path(folder, "stdin"), Path(folder, "stdout"), Path(folder, "stderr")
        given.write_text(stdin, encoding="utf-8")
        out.touch()
        err.touch()
        stdio = [str(given), str(out), str(err)]
        folder_arg = None if cwd is None else str(cwd)
        child = _server().Process(target=_child, args=(args, environ, folder_arg, stdio))
        child.start()
        child.join(timeout)
        if child.exitcode is None:
            child.kill()
            child.join()
            raise subprocess.TimeoutExpired([sys.executable, *args], timeout)
        return subprocess.CompletedProcess(
            [sys.executable, *args],
            child.exitcode,
            out.read_text(encoding="utf-8", errors="replace"),
            err.read_text(encoding="utf-8", errors="replace"),
        )
