"""`fixloop fix-findings` via the real CLI: bad input, --json, data never run as code, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixloop.cli.main import main
from fixloop.schemas.results import FixVerifyLoopOutput

BUGGY = "def mean(xs):\n    return sum(xs) / len(xs)\n"
FIXED = "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    git(root, "add", "--", "calc.py")
    git(root, "commit", "-q", "-m", "initial")
    (root / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    return root


def finding(number: int | str = 1, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": number,
        "severity": "P0",
        "title": "mean() divides by zero",
        "body": "b",
        "file": "calc.py",
        "line_start": 2,
        "line_end": 2,
        "confidence": 0.9,
        "criterion": "no crash",
        "verdict": "confirmed",
        "evidence": "traced",
    }
    return base | changes


def review(of: dict[str, Any], name: str) -> dict[str, Any]:
    judged = of | {"verdict": name, "evidence": f"verifier: {name}"}
    return {"schema_version": "v1", "findings": [judged], "checks_run": []}


def write(tmp_path: Path, findings: object, script: dict[str, Any]) -> tuple[Path, Path]:
    findings_path = tmp_path / "findings.json"
    findings_path.write_text(json.dumps(findings), encoding="utf-8")
    script_path = tmp_path / "script.yaml"
    script_path.write_text(yaml.safe_dump(script), encoding="utf-8")
    return findings_path, script_path


def resolved_script(target: dict[str, Any], path: str = "calc.py") -> dict[str, Any]:
    return {
        f"fixer/{target['id']}/round-1": {
            "edits": [{"path": path, "content": FIXED}],
            "output": {"files_changed": [path], "summary": "fixed: guard", "concerns": None},
        },
        f"verifier/{target['id']}/round-1": {"output": review(target, "rejected")},
    }


def buckets(out: str) -> FixVerifyLoopOutput:
    """The FixVerifyLoopOutput inside the command's JSON envelope."""
    envelope = json.loads(out)
    assert envelope["command"] == "fix-findings"
    return FixVerifyLoopOutput.model_validate(envelope["result"]["buckets"])


def snapshot(repo: Path) -> tuple[str, str, list[str]]:
    status = git(repo, "status", "--porcelain=v1", "--untracked-files=all", "--ignored")
    state = repo / ".git" / "fixloop" / "runs"
    runs = sorted(p.name for p in state.iterdir()) if state.is_dir() else []
    return git(repo, "rev-parse", "HEAD"), status, runs


def test_json_prints_the_envelope_and_stages_the_fix(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding()
    findings, script = write(
        tmp_path,
        {"schema_version": "v1", "findings": [target], "checks_run": []},
        resolved_script(target),
    )
    code = main(
        ["fix-findings", str(findings), "--repo", str(repo), "--json", "--script", str(script)]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert (data["ok"], data["exit_code"], data["counts"]) == (True, 0, {"resolved": 1})
    assert data["items"][0]["id"] == 1 and data["items"][0]["status"] == "resolved"
    assert buckets(out.out).resolved == [1]
    assert git(repo, "show", ":calc.py") == FIXED
    assert git(repo, "log", "--oneline").count("\n") == 1  # nothing committed
    assert "fix-findings [1/1] 1: mean() divides by zero ..." in out.err  # progress on stderr


def test_an_escalated_finding_exits_1_with_the_escalation_summary(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding()
    script = {
        "fixer/1/round-1": {"fail": "crash"},
        "fixer/1/round-2": {"fail": "timeout"},
    }
    findings, script_path = write(tmp_path, [target], script)
    code = main(["fix-findings", str(findings), "--repo", str(repo), "--script", str(script_path)])
    out = capsys.readouterr()
    assert code == 1
    assert "**Escalated — finding not resolved after 2 attempts:**" in out.out
    assert "- Currently staged: nothing staged" in out.out


@pytest.mark.parametrize(
    ("findings", "message"),
    [
        ([finding(severity="P9")], "findings.json:1:1: findings: finding 1: severity: Input"),
        ([finding(), finding(2, title="")], "findings.json:1:1: findings: finding 2: title:"),
        ([finding(), finding()], "findings: finding 1: id is used by an earlier finding"),
        ([{"title": "no id"}], "findings: finding #1: id: Field required"),
        ([finding(criterion=None)], "findings: finding 1: criterion: required for a P0 finding"),
        ([finding(severity="P1", criterion=" ")], "finding 1: criterion: required for a P1"),
        ({"findings": []}, "findings: schema_version: expected 'v1'"),
        ("just text", "findings: expected a ReviewOutput envelope or a JSON list of findings"),
        ([finding(file="../outside.py")], "finding 1: file: '../outside.py': '..' could leave"),
        ([finding(file="/etc/passwd")], "finding 1: file: '/etc/passwd': absolute paths"),
        ([finding(file=".git/config")], "finding 1: file: '.git/config': paths inside .git"),
        ([finding(7, file="out/x.py")], "finding 7: file: 'out/x.py': passes through the symbolic"),
        ([finding("CR-1", file="leak.py")], "finding 'CR-1': file: 'leak.py': a symbolic link"),
    ],
)
def test_bad_findings_are_one_line_exit_2_and_change_nothing(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    findings: object,
    message: str,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("secret\n", encoding="utf-8")
    (repo / "out").symlink_to(outside)
    (repo / "leak.py").symlink_to(outside / "x.py")
    before = snapshot(repo)
    findings_path, script = write(tmp_path, findings, {})
    code = main(["fix-findings", str(findings_path), "--repo", str(repo), "--script", str(script)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert message in err, err
    assert "Traceback" not in err
    assert snapshot(repo) == before
    assert (outside / "x.py").read_text(encoding="utf-8") == "secret\n"


def test_invalid_json_names_the_line(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text('[\n  {"id": 1,\n  oops\n]', encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text("{}\n", encoding="utf-8")
    code = main(["fix-findings", str(findings), "--repo", str(repo), "--script", str(script)])
    err = capsys.readouterr().err
    assert code == 2
    assert "findings.json:3:3: findings: invalid JSON" in err


def test_finding_text_and_paths_are_data_never_code(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nasty = "we$(touch PWNED)ird `touch PWNED2` 'q\" -- *.py"
    (repo / nasty).write_text(BUGGY, encoding="utf-8")
    (repo / "innocent.py").write_text("keep = True\n", encoding="utf-8")
    git(repo, "add", "--", nasty, "innocent.py")
    git(repo, "commit", "-q", "-m", "more files")
    target = finding(title='$(touch PWNED3); `rm -rf ~` "; exit 1', file=nasty, evidence=None)
    script = {"verifier/1/pre-gate": {"output": review(target, "confirmed")}}
    script |= resolved_script(target, nasty)
    findings, script_path = write(tmp_path, [target], script)
    code = main(
        ["fix-findings", str(findings), "--repo", str(repo), "--json", "--script", str(script_path)]
    )
    assert code == 0, capsys.readouterr().err
    assert not list(repo.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))
    # Only the named file is staged: `*.py` was not read as a pattern.
    assert git(repo, "diff", "--staged", "--name-only", "-z").split("\0")[:-1] == [nasty]


def test_a_killed_run_resumes_without_replaying_done_work(repo: Path, tmp_path: Path) -> None:
    first, second = finding(1), finding(2, title="second")
    script = resolved_script(first)
    script |= {
        "fixer/2/round-1": {
            "output": {"files_changed": [], "summary": "skipped: already fixed", "concerns": None}
        },
        "verifier/2/round-1": {"output": review(second, "rejected")},
    }
    findings, script_path = write(tmp_path, [first, second], script)
    command = [
        sys.executable,
        "-m",
        "fixloop",
        "fix-findings",
        str(findings),
        "--repo",
        str(repo),
        "--json",
        "--script",
        str(script_path),
    ]
    env = os.environ | {"FIXLOOP_CRASH_AT": "fix-findings/staged-diff:1"}
    killed = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert killed.returncode == -9, killed.stderr
    assert git(repo, "show", ":calc.py") == FIXED  # round 1 was staged before the kill

    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming run" in resumed.stderr
    assert buckets(resumed.stdout).resolved == [1, 2]
    runs = sorted((repo / ".git/fixloop/runs").iterdir())
    events = [json.loads(line) for line in (runs[-1] / "events.jsonl").read_text().splitlines()]
    agent_keys = [e["key"] for e in events if e.get("event") == "agent"]
    assert agent_keys == ["verifier/1/round-1", "fixer/2/round-1", "verifier/2/round-1"]
    assert git(repo, "log", "--oneline").count("\n") == 1


def test_resume_refuses_a_different_findings_file(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings, script = write(tmp_path, [finding()], {})
    code = main(
        ["fix-findings", str(findings), "--repo", str(repo), "--script", str(script), "--resume"]
    )
    assert code == 2
    assert "no stopped fix-findings run of this findings file" in capsys.readouterr().err


def test_a_failing_git_step_stops_the_run_with_one_located_line(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The finding's file is git-ignored: `git add -- build.log` refuses it, and the run must say
    # so in one line instead of forcing the add or crashing.
    (repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    target = finding(file="build.log")
    findings, script = write(tmp_path, [target], resolved_script(target, "build.log"))
    code = main(["fix-findings", str(findings), "--repo", str(repo), "--script", str(script)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("workflows/fix-findings.md:") or "fix-findings.md:" in err[-1]
    assert ": step-failed: fix-findings#stage: exit 1 after `git add --" in err[-1]
    assert "continue it with --resume" in err[-1]
    assert git(repo, "diff", "--staged", "--name-only") == ""


def test_a_fixer_claiming_a_file_that_does_not_exist_is_a_failed_attempt(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding(file="new.py")
    report = {"files_changed": ["new.py"], "summary": "fixed: created it", "concerns": None}
    script = {"fixer/1/round-1": {"output": report}, "fixer/1/round-2": {"output": report}}
    findings, script_path = write(tmp_path, [target], script)
    code = main(
        ["fix-findings", str(findings), "--repo", str(repo), "--json", "--script", str(script_path)]
    )
    assert code == 1
    escalated = buckets(capsys.readouterr().out).escalated
    assert "exists neither on disk nor in the index" in escalated[0].attempts[0]


def test_a_spent_run_budget_starts_no_new_agent_call(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding()
    script = resolved_script(target)
    script["fixer/1/round-1"]["cost_usd"] = 1.0
    findings, script_path = write(tmp_path, [target], script)
    code = main(
        [
            "fix-findings",
            str(findings),
            "--repo",
            str(repo),
            "--json",
            "--script",
            str(script_path),
            "--max-cost-usd",
            "0.5",
        ]
    )
    assert code == 1  # spent budget: the verifier never ran, so nothing counts as resolved
    capsys.readouterr()
    [run_dir] = (repo / ".git/fixloop/runs").iterdir()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    calls = [(e["key"], e["reason"]) for e in events if e.get("event") == "agent"]
    assert calls == [
        ("fixer/1/round-1", "none"),
        ("verifier/1/round-1", "run_budget"),
        ("fixer/1/round-2", "run_budget"),
    ]


def test_the_summary_counts_and_warns_of_staged_work_nobody_verified(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dropped = finding(3, evidence=None)  # a single dropped finding whose id is 3
    escalated = finding(2, title="second")
    script = {
        "verifier/3/pre-gate": {"output": review(dropped, "rejected")},
        "fixer/2/round-1": {
            "edits": [{"path": "calc.py", "content": FIXED}],
            "output": {"files_changed": ["calc.py"], "summary": "tried", "concerns": None},
        },
        "verifier/2/round-1": {"output": review(escalated, "confirmed")},
        "fixer/2/round-2": {
            "edits": [{"path": "calc.py", "content": FIXED + "# again\n"}],
            "output": {"files_changed": ["calc.py"], "summary": "tried again", "concerns": None},
        },
        "verifier/2/round-2": {"output": review(escalated, "confirmed")},
    }
    findings, script_path = write(tmp_path, [dropped, escalated], script)
    code = main(["fix-findings", str(findings), "--repo", str(repo), "--script", str(script_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "  dropped:   1 (3)" in out  # a count, then the ids: never "dropped: 3"
    assert "  resolved:  0" in out and "  escalated: 1 (2)" in out
    assert "WARNING: staged for finding 2 but NOT verified to resolve it: calc.py" in out
    assert "total: 5 agent call(s)" in out  # the run's cost and time close the summary


def test_a_dry_run_changes_nothing_not_even_in_git(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding()
    (repo / "calc.py").write_text(BUGGY + "# mine\n", encoding="utf-8")
    git(repo, "add", "--", "calc.py")  # a hunk of the user's, staged in the finding's file
    findings, script = write(tmp_path, [target], resolved_script(target))
    before = _bytes(repo)
    code = main(
        ["fix-findings", str(findings), "--repo", str(repo), "--script", str(script), "--dry-run"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert _bytes(repo) == before  # the tree and .git, byte for byte; no run folder
    assert not (repo / ".git" / "fixloop").exists()
    assert "[1/1] 1 (P0) mean() divides by zero: at most 2 fix+verify rounds on calc.py" in out
    assert "calc.py holds hunks you staged" in out


def _bytes(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }
