"""`fixloop check` through the real entry point, as CI runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
from tests.checker.conftest import FIXTURES, copy_pack
from tests.checker.test_report import SARIF_SUBSET
from tests.conftest import REPO_ROOT


def fixloop(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_bundled_pack_is_clean_and_sarif_is_valid() -> None:
    plain = fixloop()
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "contracts: ok" in plain.stderr
    sarif = fixloop("--format", "sarif")
    assert sarif.returncode == 0
    log = json.loads(sarif.stdout)
    jsonschema.validate(log, SARIF_SUBSET)
    rules = {rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {"sentinel-written-after-worktree-add", "commit-before-completed"} <= rules


def test_violations_exit_1_with_one_located_line_each(tmp_path: Path) -> None:
    result = fixloop(str(FIXTURES / "defects"), cwd=FIXTURES)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("defects/workflows/report-paths.md:22:55: undefined-variable: ")
    assert all(line.count(":") >= 4 for line in lines)
    data = json.loads(fixloop(str(FIXTURES / "defects"), "--format", "json").stdout)
    assert data["ok"] is False and len(data["diagnostics"]) == len(lines)


def test_removing_ff_only_exits_1(tmp_path: Path) -> None:
    pack = copy_pack(tmp_path / "pack")
    protocol = pack / "workflows" / "git-protocol.md"
    text = protocol.read_text(encoding="utf-8")
    protocol.write_text(text.replace("merge --ff-only --quiet", "merge --quiet"), encoding="utf-8")
    result = fixloop(str(pack), cwd=pack)
    assert result.returncode == 1
    assert "workflows/git-protocol.md:" in result.stdout
    assert ": exactly-one-ff-only-merge: " in result.stdout


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    missing = fixloop(str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "nowhere:1:1: usage: no such file or directory"
    bad = fixloop("--format", "xml")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_events_show_what_the_checker_sees() -> None:
    result = fixloop(str(FIXTURES / "foreign" / "agents" / "code-fixer.md"), "--events")
    events = json.loads(result.stdout)
    merge = next(e for e in events if e["argv"][:4] == ["git", "-C", '"$main_repo"', "merge"])
    assert merge["step"] == "finish" and merge["context"] == ["finally", "if-condition"]
