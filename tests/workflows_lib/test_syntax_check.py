"""`workflows/lib/syntax_check.py`, review-fix's per-type syntax check, run as the step runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers.typescript import install_typescript

SCRIPT = REPO_ROOT / "workflows" / "lib" / "syntax_check.py"
PARSES, SYNTAX_ERROR, NO_CHECKER = 0, 1, 3


def check(
    path: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, str]:
    """The checker on `path`, run from `cwd` (the project: where the step runs it)."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=os.environ | (env or {}),
    )
    assert done.stdout == ""
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("name", "text", "code", "message"),
    [
        ("ok.py", "x = 1\n", PARSES, ""),
        ("bad.py", "x = 1\ndef f(:\n", SYNTAX_ERROR, "line 2: SyntaxError: "),
        ("bad.pyi", "def f(\n", SYNTAX_ERROR, "line 1: SyntaxError: "),
        ("ok.json", '{"a": [1, 2]}\n', PARSES, ""),
        ("bad.json", '{"a": [1, 2}\n', SYNTAX_ERROR, "line 1: Expecting ',' delimiter"),
        ("ok.yaml", "a: 1\n---\nb: [2]\n", PARSES, ""),
        ("bad.yml", "a: [1\nb: 2\n", SYNTAX_ERROR, "while parsing a flow sequence"),
        ("ok.sh", "echo hi\n", PARSES, ""),
        ("bad.bash", "if true; then\n", SYNTAX_ERROR, "syntax error"),
        ("notes.md", "# anything (goes\n", NO_CHECKER, ""),
        ("Makefile", "all:\n", NO_CHECKER, ""),
    ],
)
def test_each_type_is_parsed_by_its_checker(
    tmp_path: Path, name: str, text: str, code: int, message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    got, stderr = check(path)
    assert got == code, stderr
    assert message in stderr
    if code == SYNTAX_ERROR and name.endswith((".py", ".pyi", ".json", ".yml")):
        assert len(stderr.splitlines()) == 1  # one line: where and what


def test_text_that_is_not_utf8_is_a_syntax_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"x = '\xe9'\n")
    code, stderr = check(path)
    assert code == SYNTAX_ERROR and stderr.startswith("line ?: UnicodeDecodeError: ")


def test_an_unreadable_file_says_so(tmp_path: Path) -> None:
    code, stderr = check(tmp_path / "missing.json")
    assert code == SYNTAX_ERROR and stderr.startswith("cannot read it: ")


def test_yaml_without_pyyaml_is_unchecked_not_failed(tmp_path: Path) -> None:
    # A `yaml` module that cannot be imported stands in for an interpreter without PyYAML.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "yaml.py").write_text("raise ImportError('no PyYAML here')\n")
    path = tmp_path / "bad.yaml"
    path.write_text("a: [1\n")
    assert check(path, {"PYTHONPATH": str(shadow)}) == (NO_CHECKER, "")


def test_javascript_needs_node_or_is_unchecked(tmp_path: Path) -> None:
    path = tmp_path / "bad.js"
    path.write_text("function (\n")
    nothing = tmp_path / "empty-path"
    nothing.mkdir()
    assert check(path, {"PATH": str(nothing)}) == (NO_CHECKER, "")
    if shutil.which("node") is None:
        pytest.skip("node is not installed here: only the unchecked case can be shown")
    code, stderr = check(path)
    assert code == SYNTAX_ERROR and "SyntaxError" in stderr
    path.write_text("const a = 1;\n")
    assert check(path) == (PARSES, "")


def test_usage(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 2 and done.stderr == "usage: syntax_check.py FILE\n"


@pytest.fixture(scope="module")
def typescript_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a tsconfig.json and a real TypeScript compiler installed by npm."""
    project = tmp_path_factory.mktemp("ts-project")
    (project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    install_typescript(project)
    return project


@pytest.mark.slow
@pytest.mark.needs("node", "npm")
@pytest.mark.parametrize(
    ("name", "text", "code", "message"),
    [
        ("ok.ts", "export function f(a: string): string {\n  return a;\n}\n", PARSES, ""),
        ("bad.ts", "const x: number = 1;\nconst y = ;\n", SYNTAX_ERROR, "line 2: TS1109: "),
        ("ok.tsx", "export const A = () => <div>{1}</div>;\n", PARSES, ""),
        ("bad.mts", "export function (a) {}\n", SYNTAX_ERROR, "line 1: TS"),
        # A per-file type check would call this an error; it is the build's to judge.
        ("imports.ts", 'import { y } from "./elsewhere";\nexport const z = y;\n', PARSES, ""),
    ],
)
def test_typescript_is_checked_by_the_project_s_own_compiler(
    typescript_project: Path, name: str, text: str, code: int, message: str
) -> None:
    path = typescript_project / name
    path.write_text(text)
    got, stderr = check(Path(name), cwd=typescript_project)
    assert got == code, stderr
    assert message in stderr
    if code == SYNTAX_ERROR:
        assert len(stderr.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.needs("node", "npm")
def test_typescript_without_a_tsconfig_is_unchecked(
    typescript_project: Path, tmp_path: Path
) -> None:
    # The compiler is there (found on PATH), the project is not a TypeScript one.
    bin_dir = typescript_project / "node_modules" / ".bin"
    (tmp_path / "bad.ts").write_text("const y = ;\n")
    path = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    got, stderr = check(Path("bad.ts"), env=path, cwd=tmp_path)
    assert got == NO_CHECKER, stderr
