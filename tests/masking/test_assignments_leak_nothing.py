"""A secret written as `NAME=value` (the `.env` and shell form) reaches neither disk nor screen.

A scripted fixer of review-fix quotes an AWS secret access key as `AWS_SECRET_ACCESS_KEY=…`,
a token as `export API_TOKEN=…` and a password as `DB_PASSWORD: …`, in its summary, in its
concerns, in a shell command's output and in an answer that is not the result JSON; the review
quotes the token in a finding's title, which the progress lines print. Then the run's folder,
the committed REVIEW-FIX.md, review-fix's own stdout and stderr (progress, summary, `--json`)
and `runs show` (text and `--json`) must hold none of them, and the placeholders must be there.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

from tests.helpers.gitrepo import UserRepo, git
from tests.helpers.reviews import REPORT_REL, REVIEW_REL, finding, review_text, write_review

_BASE64 = string.ascii_letters + string.digits + "/+"


def _random(length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


AWS_SECRET = _random(38, _BASE64) + "/+"
TOKEN = _random(24)
PASSWORD = "pw-" + _random(16)
ENV_FORM = (
    f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nexport API_TOKEN={TOKEN}\nDB_PASSWORD: {PASSWORD}\n"
)
CANARIES = {"aws secret": AWS_SECRET, "token": TOKEN, "password": PASSWORD}


def _fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", *args],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _leaks(texts: dict[str, str]) -> dict[str, list[str]]:
    return {
        where: found
        for where, text in texts.items()
        if (found := [name for name, canary in CANARIES.items() if canary in text])
    }


def test_secrets_in_env_form_are_masked_on_disk_and_on_screen(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    repo = user_repo.path
    write_review(
        repo,
        review_text(
            # A reviewer quoting the secret in a title: progress lines print titles.
            finding("CR-01", f"add subtracts (and API_TOKEN={TOKEN} is committed)", "src/app.py"),
            finding("WR-01", "util name unclear", "src/util.py"),
        ),
    )
    script = {
        "fixer/CR-01/iteration-1": {
            "edits": [{"path": "src/app.py", "old": "a - b", "new": "a + b"}],
            "bash": [f"printf '%s\\n' 'AWS_SECRET_ACCESS_KEY={AWS_SECRET}'"],
            "output": {
                "files_changed": ["src/app.py"],
                "summary": f"fixed: add adds. The .env holds {ENV_FORM}",
                "concerns": [f"found credentials: {ENV_FORM}"],
            },
        },
        # Not the result JSON: the run quotes the answer as the item's reason.
        "fixer/WR-01/iteration-1": {"fail": "malformed", "raw": f"I read .env:\n{ENV_FORM}"},
    }
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    done = _fixloop("review-fix", REVIEW_REL, "--script", str(script_path), "--json", cwd=repo)
    assert done.returncode == 1, done.stderr  # WR-01 is skipped
    result = json.loads(done.stdout)  # still JSON once masked
    run_id = result["run_id"] if "run_id" in result else result["result"]["run_id"]
    shown = _fixloop("runs", "show", run_id, cwd=repo)
    shown_json = _fixloop("runs", "show", run_id, "--json", cwd=repo)
    assert shown.returncode == 0 and shown_json.returncode == 0, shown.stderr
    json.loads(shown_json.stdout)

    state = repo / ".git" / "fixloop"
    files = {str(p): p.read_text("utf-8", "replace") for p in state.rglob("*") if p.is_file()}
    assert any(p.endswith("events.jsonl") for p in files) and any(
        p.endswith("state.json") for p in files
    )
    texts = {
        **files,
        "REVIEW-FIX.md": (repo / REPORT_REL).read_text("utf-8"),
        "REVIEW-FIX.md on main": git(repo, "show", f"main:{REPORT_REL}"),
        "review-fix stdout (--json)": done.stdout,
        "review-fix stderr": done.stderr,
        "runs show": shown.stdout + shown.stderr,
        "runs show --json": shown_json.stdout,
    }
    assert _leaks(texts) == {}
    everything = "\n".join(texts.values()).replace("\\u00ab", "«").replace("\\u00bb", "»")
    for name in ("AWS_SECRET_ACCESS_KEY", "API_TOKEN", "DB_PASSWORD"):
        assert f"«masked:{name}»" in everything or name == "AWS_SECRET_ACCESS_KEY", name
    assert "«masked:aws-secret-access-key»" in everything or (
        "«masked:AWS_SECRET_ACCESS_KEY»" in everything
    )
    assert "«masked:" in texts["REVIEW-FIX.md"]
