"""Syntax check of one file by its type, for review-fix's `syntax-check` step (Tier 2).

    "${FIXLOOP_PYTHON:-python3}" "$FIXLOOP_LIB/syntax_check.py" FILE

Exit 0 when FILE parses; 1 on a syntax error, with one line on stderr saying where and what
(`line N: …`; the shell and JavaScript checkers print their own); 3 when there is no checker for
its type here (an unknown extension, no PyYAML, no node): the step then falls back to Tier 1 and
never counts that as a failure. Standard library only, plus PyYAML when it can be imported.

TypeScript (`.ts`, `.tsx`, `.mts`, `.cts`) is checked when the project has a `tsconfig.json` (in
the current directory, the worktree's root, or above it) and its compiler can be found (`tsc` on
PATH or in `node_modules/.bin`): its own parser, through `ts_syntax.cjs` beside this file. The
project is where the step runs, not where the file is, so the copy of HEAD the step checks for
pre-existing errors is judged by the same checker.
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

PARSES, SYNTAX_ERROR, NO_CHECKER = 0, 1, 3


def check_python(path: Path) -> str | None:
    try:
        ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None) or "?"
        return f"line {line}: {type(error).__name__}: {getattr(error, 'msg', error)}"
    return None


def check_json(path: Path) -> str | None:
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        return f"line {getattr(error, 'lineno', None) or '?'}: {error}"
    return None


def check_yaml(path: Path) -> str | None:
    import yaml  # importable: `checker_for` looked before choosing this checker

    try:
        with path.open(encoding="utf-8") as stream:
            list(yaml.safe_load_all(stream))
    except (yaml.YAMLError, ValueError) as error:
        return " ".join(str(error).split())
    return None


def _external(argv: list[str]) -> Callable[[Path], str | None]:
    """A checker that is a program: its own messages go to stderr as they are."""

    def check(path: Path) -> str | None:
        done = subprocess.run([*argv, str(path)], check=False)
        return "" if done.returncode != 0 else None

    return check


def _typescript_package() -> Path | None:
    """The project's TypeScript compiler package, when the project is a TypeScript one."""
    here = Path.cwd().resolve()
    folders = [here, *here.parents]
    if not any((folder / "tsconfig.json").is_file() for folder in folders):
        return None
    candidates = [folder / "node_modules" / ".bin" / "tsc" for folder in folders]
    on_path = shutil.which("tsc")
    for tsc in [*(c for c in candidates if c.exists()), *([Path(on_path)] if on_path else [])]:
        package = tsc.resolve().parent.parent  # …/typescript/bin/tsc → …/typescript
        if (package / "package.json").is_file():
            return package
    return None


def _check_typescript(package: Path, node: str) -> Callable[[Path], str | None]:
    script = Path(__file__).with_name("ts_syntax.cjs")

    def check(path: Path) -> str | None:
        done = subprocess.run([node, str(script), str(package), str(path)], check=False)
        return "" if done.returncode != 0 else None

    return check


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def checker_for(path: Path) -> Callable[[Path], str | None] | None:
    """The checker for `path`'s type here, or None when there is none."""
    suffix = path.suffix.lower()
    if suffix in (".py", ".pyi"):
        return check_python
    if suffix == ".json":
        return check_json
    if suffix in (".yaml", ".yml"):
        return check_yaml if _importable("yaml") else None
    if suffix in (".sh", ".bash"):
        return _external(["bash", "-n"])
    if suffix in (".js", ".cjs", ".mjs"):
        node = shutil.which("node")
        return _external([node, "--check"]) if node else None
    if suffix in (".ts", ".tsx", ".mts", ".cts"):
        node, package = shutil.which("node"), _typescript_package()
        return _check_typescript(package, node) if node and package else None
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: syntax_check.py FILE", file=sys.stderr)
        return 2
    path = Path(argv[0])
    check = checker_for(path)
    if check is None:
        return NO_CHECKER
    try:
        problem = check(path)
    except OSError as error:
        problem = f"cannot read it: {error.strerror or error}"
    if problem is None:
        return PARSES
    if problem:
        print(problem, file=sys.stderr)
    return SYNTAX_ERROR


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
