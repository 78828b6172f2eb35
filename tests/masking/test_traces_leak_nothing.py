"""No secret reaches disk: canaries planted where secrets really come from, then every file grepped.

Canaries sit in the environment (a deploy token), in a repository file the scripted model quotes
in its answers (Anthropic, GitHub and AWS keys, a private key), and in step output (the error of
a syntax check, the stderr of a failing step). Review-fix and fix-findings run for real through
the CLI (real git, worktrees, steps; only the model is scripted); then every file under the
repository's fixloop state folder and the reports must hold no canary, and the placeholders must
be there (proof the canaries did reach the writers and were masked, not lost).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.fix_findings import finding as fix_finding
from tests.helpers.fix_findings import fix, make_repo, verdict
from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import REPORT_REL, REVIEW_REL, finding, review_text, write_review
from tests.helpers.workflows import write_workflow

from fixloop.runs.run import Run
from fixloop.steps.runner import run_step

_ALNUM = string.ascii_letters + string.digits


def _random(length: int, alphabet: str = _ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


ENV_NAME = "CANARY_DEPLOY_TOKEN"
ENV_CANARY = "canary-env-" + secrets.token_hex(12)
ANTHROPIC = "sk-ant-api03-" + _random(40)
GITHUB = "ghp_" + _random(36)
GITHUB_IN_STEP = "ghp_" + _random(36)
BEARER = _random(32)
AWS_ID = "AKIA" + _random(16, string.ascii_uppercase + string.digits)
AWS_SECRET = _random(36) + "/+Zq"
PEM_BODY = _random(64)
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
CANARIES = {
    "environment": ENV_CANARY,
    "anthropic": ANTHROPIC,
    "github": GITHUB,
    "github in step output": GITHUB_IN_STEP,
    "aws id": AWS_ID,
    "aws secret": AWS_SECRET,
    "private key": PEM_BODY,
    "bearer token": BEARER,
}
SETTINGS = (
    f'ANTHROPIC = "{ANTHROPIC}"\nGITHUB = "{GITHUB}"\n'
    f'aws_access_key_id = "{AWS_ID}"\naws_secret_access_key = "{AWS_SECRET}"\n'
    f'DEPLOY_KEY = """{PEM}"""\n'
)
# What a model says after reading settings.py and the environment.
QUOTE = (
    f"settings.py holds ANTHROPIC = {ANTHROPIC!r} and GITHUB = {GITHUB!r}; AWS {AWS_ID} / "
    f"{AWS_SECRET}; the environment has {ENV_NAME}={ENV_CANARY}"
)


def _fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ENV_NAME: ENV_CANARY}
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _commit_settings(repo: Path) -> None:
    (repo / "settings.py").write_text(SETTINGS, encoding="utf-8")
    git(repo, "add", "--", "settings.py")
    git(repo, "commit", "--quiet", "-m", "settings", "--", "settings.py")


def _leaks(paths: list[Path]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in paths:
        data = path.read_bytes()
        for name, canary in CANARIES.items():
            if canary.encode() in data:
                found.setdefault(str(path), []).append(name)
    return found


def _state_files(repo: Path) -> list[Path]:
    state = repo / ".git" / "fixloop"
    files = sorted(p for p in state.rglob("*") if p.is_file())
    assert files, f"nothing written under {state}"
    return files


def _placeholders(paths: list[Path]) -> set[str]:
    """The «masked:…» placeholders the files hold, written as is or JSON-escaped."""
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths)
    text = text.replace("\\u00ab", "«").replace("\\u00bb", "»")
    return set(re.findall(r"«masked:([^»]+)»", text))


def test_review_fix_writes_no_canary(user_repo: UserRepo, tmp_path: Path) -> None:
    repo = user_repo.path
    _commit_settings(repo)
    write_review(
        repo,
        review_text(
            finding("CR-01", "add subtracts", "src/app.py"),
            finding("CR-02", "runner prints nothing useful", "tools/run.sh"),
            finding("WR-01", "util name unclear", "src/util.py"),
        ),
    )
    broken_script = f"#!/bin/sh\nTOKEN={GITHUB_IN_STEP} )\n"
    script: dict[str, Any] = {
        "fixer/CR-01/iteration-1": {
            "edits": [{"path": "src/app.py", "old": "a - b", "new": "a + b"}],
            "output": {
                "files_changed": ["src/app.py"],
                "summary": f"fixed: add adds. Also: {QUOTE}",
                "concerns": [f"private key in settings.py: {PEM}"],
            },
        },
        # A fix that breaks the script's syntax on a line holding a token: the syntax check's
        # error (step output) quotes that line.
        "fixer/CR-02/iteration-1": {
            "edits": [{"path": "tools/run.sh", "content": broken_script}],
            "output": {"files_changed": ["tools/run.sh"], "summary": "fixed", "concerns": None},
        },
        # A model answer that is not the result JSON: its text lands in the trace as detail.
        "fixer/WR-01/iteration-1": {"fail": "malformed", "raw": f"I found:\n{PEM}\n{QUOTE}"},
    }
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    done = _fixloop("review-fix", REVIEW_REL, "--script", str(script_path), "--json", cwd=repo)
    assert done.returncode == 1, done.stderr  # CR-02 and WR-01 are skipped
    result = json.loads(done.stdout)
    assert [f["id"] for f in result["items"]] == ["CR-01", "CR-02", "WR-01"]

    written = [*_state_files(repo), repo / REPORT_REL]
    assert _leaks(written) == {}
    assert _placeholders(written) >= {
        "anthropic-key",
        "github-token",
        "aws-access-key-id",
        "aws-secret-access-key",
        "private-key",
        ENV_NAME,
    }
    report = (repo / REPORT_REL).read_text(encoding="utf-8")
    assert "«masked:github-token»" in report  # the syntax error of CR-02, in its skip reason
    assert "«masked:anthropic-key»" in report  # CR-01's summary, the applied fix
    # The report as committed on the user's branch is the masked one.
    assert git(repo, "show", f"main:{REPORT_REL}") == report


def test_fix_findings_writes_no_canary(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _commit_settings(repo)
    target = fix_finding(1, evidence=f"Verifier: traced it; {QUOTE}")
    fixer = fix()
    fixer["output"]["summary"] = f"fixed: guard. {QUOTE}"
    judged = verdict(target, "rejected")
    judged["findings"][0]["evidence"] = f"no longer reproduces; settings.py also holds {PEM}"
    script = {"fixer/1/round-1": fixer, "verifier/1/round-1": {"output": judged}}
    findings_path = tmp_path / "findings.json"
    findings_path.write_text(json.dumps([target]), encoding="utf-8")
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    done = _fixloop(
        "fix-findings",
        str(findings_path),
        "--repo",
        str(repo),
        "--script",
        str(script_path),
        "--json",
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["buckets"]["resolved"] == [1]

    written = _state_files(repo)
    assert _leaks(written) == {}
    assert _placeholders(written) >= {
        "anthropic-key",
        "github-token",
        "aws-access-key-id",
        "aws-secret-access-key",
        "private-key",
        ENV_NAME,
    }


def test_a_failing_steps_stderr_is_masked_in_the_trace(
    tmp_path: Path, user_repo: UserRepo, monkeypatch: Any
) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_CANARY)
    workflow = write_workflow(
        tmp_path / "pack",
        "---\nname: demo\ndescription: A step that fails loudly.\n---\n\n# Demo\n\n"
        "## Leak {#leak}\n\n```bash\n"
        'echo "deploying with $CANARY_DEPLOY_TOKEN" >&2\n'
        f"echo 'curl -H \"Authorization: Bearer {BEARER}\"' >&2\n"
        f"echo '{AWS_ID} {AWS_SECRET}' >&2\n"
        "exit 3\n```\n",
    )
    with Run.start(user_repo.path, "demo") as run:
        result = run_step(workflow, "leak", cwd=user_repo.path, inputs={}, run=run)
    assert result.exit_code == 3
    assert ENV_CANARY in result.stderr  # the step really printed it
    written = _state_files(user_repo.path)
    assert _leaks(written) == {}
    events = (run.dir / "events.jsonl").read_text(encoding="utf-8")
    assert f"deploying with «masked:{ENV_NAME}»" in events
    assert "Authorization: Bearer «masked:bearer-token»" in events
    assert "«masked:aws-access-key-id» «masked:aws-secret-access-key»" in events
