"""Two fix-findings runs on one repository at once: the second waits or refuses, never corrupts.

Both runs work in the user's own tree and index; run at once, each would take the other's edits
for a fixer's stray writes. Real processes: the first run's fixer takes a while (a shell command
in its scripted reply), and a second run starts meanwhile.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.fix_findings import (
    FIXED,
    HELPER_FIXED,
    UserWork,
    finding,
    fix,
    git,
    staged,
    verdict,
)


def _start(repo: Path, findings: Path, script: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fixloop",
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--script",
            str(script),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _write(folder: Path, name: str, data: object) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _started(repo: Path) -> None:
    """Wait until the first run holds its run folder (it took the lock before making it)."""
    runs = repo / ".git" / "fixloop" / "runs"
    deadline = time.monotonic() + 60
    while not (runs.is_dir() and any(runs.iterdir())):
        assert time.monotonic() < deadline, "the first run never started"
        time.sleep(0.05)


def test_a_second_run_refuses_then_waits_and_nothing_is_corrupted(
    repo: Path, tmp_path: Path
) -> None:
    work = UserWork.capture(repo)
    calc, helper = finding(1), finding(2, title="helper returns None", file="helper.py")
    slow = {**fix(FIXED), "bash": ["sleep 4"]}
    first_script = _write(
        tmp_path,
        "first.json",
        {
            "fixer/1/round-1": slow,
            "verifier/1/round-1": {"output": verdict(calc, "rejected")},
        },
    )
    second_script = _write(
        tmp_path,
        "second.json",
        {
            "fixer/2/round-1": {
                "edits": [{"path": "helper.py", "content": HELPER_FIXED}],
                "output": {"files_changed": ["helper.py"], "summary": "fixed", "concerns": None},
            },
            "verifier/2/round-1": {"output": verdict(helper, "rejected")},
        },
    )
    first = _start(repo, _write(tmp_path, "one.json", [calc]), first_script)
    _started(repo)
    refused = _start(repo, _write(tmp_path, "two.json", [helper]), second_script)
    _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2
    [line] = err.strip().splitlines()
    assert "another fix-findings run (" in line and ", pid " in line
    assert line.endswith(
        "is working in this repository; run again when it is done, or with --wait SECONDS"
    )
    waiting = _start(repo, tmp_path / "two.json", second_script, "--wait", "120")
    assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    assert waiting.wait(timeout=120) == 0, waiting.stderr.read() if waiting.stderr else ""
    # Both fixes staged, neither reverted; the user's own work untouched; nothing committed.
    assert staged(repo, "calc.py") == FIXED
    assert staged(repo, "helper.py") == HELPER_FIXED
    work.assert_intact(repo)
    assert git(repo, "log", "--oneline").count("\n") == 1
