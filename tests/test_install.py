"""The README's install lines, as a user on another machine runs them, and the one version.

fixloop is not on PyPI: the README installs it from a clone, as a path or as a wheel built from
it. The slow test builds that wheel with the README's own `pip wheel` line, installs it into a
fresh virtualenv (its dependencies from the registry, as a user's would come), and runs the
installed `fixloop` from a folder outside the clone: the bundled pack must be inside the wheel.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

import fixloop
from fixloop.documents.blocks import parse_markdown
from fixloop.documents.source import load_document

CLONE = "/path/to/fixloop"


def install_lines() -> list[list[str]]:
    """The README's install block, each line as argv, comments dropped."""
    readme = parse_markdown(load_document(REPO_ROOT / "README.md"))
    blocks = [b for b in readme.blocks if "Install it elsewhere" in b.section]
    assert blocks, "README needs an 'Install it elsewhere' section with a fenced block"
    return [shlex.split(line, comments=True) for line in blocks[0].content.splitlines() if line]


def test_the_readme_says_where_fixloop_comes_from() -> None:
    lines = install_lines()
    assert ["pip", "install", CLONE] in lines
    assert ["pip", "install", f"{CLONE}[claude]"] in lines
    assert ["pip", "wheel", "--no-deps", "-w", "dist", CLONE] in lines
    assert ["pip", "install", "dist/fixloop-*.whl"] in lines
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "not published on PyPI" in readme
    # No line tells a user to install a package of that name from the registry.
    assert re.search(r"pip install '?fixloop(\[|\b)", readme) is None


def test_one_version_everywhere() -> None:
    version = fixloop.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    for manifest in ("plugin.json", ".claude-plugin/plugin.json"):
        assert json.loads((REPO_ROOT / manifest).read_text())["version"] == version, manifest
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+\.\d+\.\d+) \(\d{4}-\d\d-\d\d\)$", changelog, re.MULTILINE)
    assert headings, "CHANGELOG.md needs '## X.Y.Z (YYYY-MM-DD)' headings"
    assert headings[0] == version, "the newest CHANGELOG entry is the version being built"
    assert len(set(headings)) == len(headings)
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"fixloop {version}"


@pytest.mark.slow
def test_the_wheel_installs_and_runs_outside_the_clone(tmp_path: Path) -> None:
    lines = install_lines()
    wheel_line = next(line for line in lines if line[:2] == ["pip", "wheel"])
    dist = tmp_path / "dist"
    argv = [str(dist) if w == "dist" else str(REPO_ROOT) if w == CLONE else w for w in wheel_line]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    built = subprocess.run(
        [sys.executable, "-m", *argv, "-q"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("fixloop-*.whl")
    assert wheel.name == f"fixloop-{fixloop.__version__}-py3-none-any.whl"

    # A virtualenv without a pip of its own, filled by this interpreter's pip (`--python`):
    # bootstrapping a second pip, and compiling the bytecode of every dependency at install,
    # were most of this test's time and prove nothing about the wheel.
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run(
        [base, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin/python")]
    installed = subprocess.run(
        [*pip, "install", "-q", "--no-compile", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = str(venv / "bin/fixloop")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [command, *args],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=env,
            cwd=elsewhere,
        )

    version = run("--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"fixloop {fixloop.__version__}"
    where = subprocess.run(
        [str(venv / "bin/python"), "-c", "import fixloop; print(fixloop.__file__)"],
        capture_output=True,
        text=True,
        check=False,
        cwd=elsewhere,
        env=env,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), "the wheel's fixloop, not the clone's"
    valid = run("validate", "--bundled")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    demo = run("demo", "--dir", str(elsewhere / "demo"))
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "fix(01): CR-01" in demo.stdout
    assert "after: 7/8 passed" in demo.stdout, demo.stdout
