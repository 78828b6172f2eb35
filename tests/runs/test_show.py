"""`fixloop runs show RUN_ID`: what a real run did, read back from its folder alone."""

from __future__ import annotations

import json
import re
import secrets
import string
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fix_findings import FIXED, finding, fix, make_repo, verdict
from tests.helpers.fix_findings import run as run_fix_findings
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, review_text, run, write_review
from tests.helpers.reviews import finding as review_finding

from fixloop.cli.main import main
from fixloop.documents.pack import Pack, default_pack_root, load_pack

SECRET = "sk-ant-api03-" + "".join(secrets.choice(string.ascii_letters) for _ in range(40))


def _show(repo: Path, run_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["runs", "show", run_id, "--repo", str(repo), "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert data["command"] == "runs show" and data["run_id"] == run_id
    return data


def test_a_review_fix_run_per_finding_and_in_total(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    write_review(
        user_repo.path,
        review_text(
            review_finding("CR-01", "add subtracts", "src/app.py"),
            review_finding("CR-02", "util name", "src/util.py"),
        ),
    )
    reaching = {
        "edits": [{"path": "src/app.py", "content": "x = 1\n"}],  # refused: not its file
        "output": {
            "needs_scope_expansion": True,
            "additional_files": ["src/app.py"],
            "justification": "shared helper",
        },
        "cost_usd": 0.25,
    }
    script = {
        "fixer/CR-01/iteration-1": {**APP_FIX, "cost_usd": 0.5},
        "fixer/CR-02/iteration-1": reaching,
    }
    result, _ = run(user_repo.path, script)
    data = _show(user_repo.path, result.run_id, capsys)
    first, second = data["items"]
    assert (first["id"], first["status"], first["commit"]) == (
        "CR-01",
        "fixed",
        result.outcomes[0].commit,
    )
    assert "+    return a + b" in first["diff"]
    usage = dict(first["usage"])
    assert usage.pop("elapsed_s") >= 0  # the call's own wall time
    assert usage == {
        "calls": 1,
        "attempts": 1,
        "turns": 1,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.5,
    }
    commit_step = next(s for s in first["steps"] if s["step"] == "commit-paths")
    sites = [at for at, _ in commit_step["ran"] if at]
    assert sites and all(re.search(r"\.(md|sh):\d+$", at) for at in sites), sites
    assert len(commit_step["ran"]) > 5
    assert second["status"] == "skipped"
    assert second["scope_requests"] == ["src/app.py"]
    assert second["denied"][0].startswith("src/app.py (Write: not among the files")
    assert data["result"]["usage"]["cost_usd"] == 0.75
    assert data["result"]["wall_s"] > 0
    capsys.readouterr()
    assert main(["runs", "show", "latest", "--repo", str(user_repo.path)]) == 0
    text = capsys.readouterr().out
    assert f"run {result.run_id}  review-fix  finished" in text
    assert "CR-01  fixed  add subtracts" in text and "scope request: src/app.py" in text
    assert any(line.startswith("total: 2 agent call(s), 2 turn(s)") for line in text.splitlines())


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(default_pack_root())
    return loaded


def test_a_fix_findings_run_shows_the_staged_diff_masked(
    pack: Pack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path)
    target = finding()
    leaky = FIXED + f'KEY = "{SECRET}"\n'
    script = {
        "fixer/1/round-1": fix(leaky),
        "verifier/1/round-1": {"output": verdict(target, "rejected")},
    }
    session, _, _ = run_fix_findings(pack, repo, [target], script)
    data = _show(repo, session.run_id, capsys)
    [item] = data["items"]
    assert (
        item["status"] == "resolved"
        and "+    return sum(xs) / len(xs) if xs else 0.0" in item["diff"]
    )
    assert SECRET not in item["diff"] and "«masked:" in item["diff"]
    for path in session.run_dir.rglob("*"):  # the saved diff too: no secret on disk
        if path.is_file() and path.suffix == ".diff":
            assert SECRET not in path.read_text()


def test_an_unknown_run_is_one_line_exit_2(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "show", "nope", "--repo", str(user_repo.path)]) == 2
    assert capsys.readouterr().err.strip() == "nope:1:1: usage: no such run in this repository"
    assert main(["runs", "show", "../etc", "--repo", str(user_repo.path)]) == 2


@pytest.mark.parametrize(
    "line",
    [
        '{"event": "step", "ran": [1]}',
        '{"event": "step", "exit_code": "x"}',
        '{"event": "agent", "key": "fixer/CR-01/iteration-1", "turns": "many"}',
        '{"event": "note", "item": "CR-01", "scope_request": 5}',
    ],
)
def test_a_corrupt_event_is_one_line_naming_its_line(
    user_repo: UserRepo, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    write_review(
        user_repo.path, review_text(review_finding("CR-01", "add subtracts", "src/app.py"))
    )
    result, _ = run(user_repo.path, {"fixer/CR-01/iteration-1": APP_FIX})
    trace = user_repo.path / ".git" / "fixloop" / "runs" / result.run_id / "events.jsonl"
    lines = trace.read_text().splitlines()
    trace.write_text("\n".join([*lines[:2], line, *lines[2:]]) + "\n")
    for options in (["--json"], []):
        capsys.readouterr()
        argv = ["runs", "show", result.run_id, "--repo", str(user_repo.path), *options]
        assert main(argv) == 2
        [said] = capsys.readouterr().err.splitlines()
        assert said.startswith(f"{trace}:3:1: events: not an event as fixloop writes it (")
