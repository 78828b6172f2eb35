"""`fixloop check` and `fixloop validate` on every case of the hostile corpus (`hostile.py`).

Each run is a process of its own (forked warm: tests/helpers/cli.py) killed after `TIME_BOUND`
seconds: a hang fails the case instead of the suite. Whatever the input, the exit code is 0, 1
or 2, nothing is a traceback or an internal error, and each problem is one line.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from tests.checker.hostile import CASES
from tests.helpers import cli

# Generous for a loaded machine: every case takes about a second; a hang takes for ever.
TIME_BOUND = 60
_PROBLEM = re.compile(r"^[^\s:][^:]*:\d+:\d+: [a-z0-9-]+: \S")

# What some cases must say: the hostile part is reported, not skipped.
EXPECTED = {
    "symlink_loop": "symbolic link loop",
    "symlink_cycle": "symbolic link loop",
    "fifo_document": "a FIFO, not a regular file",
    "fifo_sidecar": "a FIFO, not a regular file",
    "fifo_manifest": "a FIFO, not a regular file",
    "fifo_config": "a FIFO, not a regular file",
    "device_document": "a character device, not a regular file",
    "device_hooks": "a character device, not a regular file",
    "huge_document": "bytes, more than the",
    "deep_manifest": "nested deeper than 64 levels",
    "deep_hooks": "nested deeper than 64 levels",
    "deep_mcp": "nested deeper than 64 levels",
    "deep_sidecar": "nested",
    "deep_config": "nested too deeply",
    "empty_folder": "not a pack",
    "unterminated_quote": "quote opened here is never closed",
    "many_unclosed_quotes": "quote opened here is never closed",
}


# Found by `check` only: `validate` reads neither sidecars nor bash.
CHECK_ONLY = {"sidecar", "quote", "quotes"}


def run(command: str, path: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "NO_COLOR": "1"}
    environment.pop("FIXLOOP_DEBUG", None)
    return cli.fixloop(command, str(path), cwd=path.parent, env=environment, timeout=TIME_BOUND)


@pytest.mark.parametrize("command", ["check", "validate"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_input_is_a_located_problem_never_a_crash_or_hang(
    tmp_path: Path, case: str, command: str
) -> None:
    root = tmp_path / "pack"
    CASES[case](root)
    done = run(command, root)
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1, 2), output[-2000:]
    assert "internal error" not in output and "Traceback" not in output, output[-2000:]
    for line in output.splitlines():
        assert len(line) < 1000, f"one problem, one short line: {line[:200]}…"
        if ": " in line and _PROBLEM.match(line) is None:
            assert line.startswith(("checked ", "pack ", str(root.name))), line
    if case in EXPECTED and (command == "check" or CHECK_ONLY.isdisjoint(case.split("_"))):
        assert EXPECTED[case] in output, output[-2000:]
        assert done.returncode != 0


@pytest.mark.parametrize("spelling", [".", "ABSOLUTE"])
@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("symlink_loop", "agents/self.md:1:1: io: a symbolic link loop"),
        # The link leads out of the pack: it is spelt where it is, not where it leads.
        (
            "device_document",
            "agents/zero.md:1:1: io: a character device, not a regular file; not read",
        ),
    ],
)
def test_a_hostile_link_is_one_problem_spelt_relative_to_the_pack_however_it_is_named(
    tmp_path: Path, spelling: str, case: str, problem: str
) -> None:
    root = tmp_path / "pack"
    CASES[case](root)
    target = str(root) if spelling == "ABSOLUTE" else spelling
    environment = {**os.environ, "NO_COLOR": "1"}
    done = cli.fixloop("check", target, cwd=root, env=environment, timeout=TIME_BOUND)
    reason = problem.split(": io: ")[1]
    problems = [line for line in done.stdout.splitlines() if reason in line]
    assert problems == [problem], done.stdout
