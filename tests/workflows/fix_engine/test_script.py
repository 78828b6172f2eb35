"""workflows/lib/fix_engine.py, the one owner of the section's state files, run as the steps run it.

Each command runs as its own process, in a real repository, with its outputs written to a file
the way a step's `$FIXLOOP_OUTPUT` receives them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import REPO_ROOT
from tests.helpers.gitrepo import git

SCRIPT = REPO_ROOT / "workflows" / "lib" / "fix_engine.py"
PRD = "sec/auth/mini-prd.md"


def fix_engine(repo: Path, *args: str) -> tuple[int, dict[str, str], str]:
    output = repo.parent / "output"
    output.write_text("", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--output", str(output)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return done.returncode, outputs, done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "README.md").write_text("readme\n")
    git(path, "add", ".")
    git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "initial")
    return path


def write_prd(repo: Path, text: str) -> None:
    target = repo / PRD
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def load(repo: Path, resume: str = "no") -> tuple[int, dict[str, str], str]:
    root = str(repo / ".git" / "fixloop" / "sections")
    return fix_engine(repo, "load", "--mini-prd", PRD, "--state-root", root, "--resume", resume)


def items(outputs: dict[str, str]) -> list[tuple[str, str]]:
    return [(item["id"], item["text"]) for item in json.loads(outputs["ITEMS"])]


def test_items_are_the_bullets_under_the_acceptance_criteria(repo: Path) -> None:
    write_prd(
        repo,
        "# Auth\n\nIntro\n\n## 验收标准\n\n"
        "- 用户可以使用邮箱/密码注册\n"
        "- AC-7: Login issues a JWT\n  that expires after an hour\n  - refreshed on use\n"
        "1. [ ] Refresh tokens rotate\n\n"
        "```\n- inside a fence\n```\n\n"
        "### Security\n\n- Passwords are hashed\n\n"
        "## Notes\n\n- not a criterion\n",
    )
    code, outputs, _ = load(repo)
    assert code == 0
    assert (outputs["SECTION_ID"], outputs["MODE"], outputs["TITLE"]) == ("auth", "start", "Auth")
    assert items(outputs) == [
        ("check-1", "用户可以使用邮箱/密码注册"),
        ("AC-7", "Login issues a JWT that expires after an hour refreshed on use"),
        ("check-3", "Refresh tokens rotate"),
        ("check-4", "Passwords are hashed"),
    ]
    assert not (repo / ".git" / "fixloop").exists(), "load changes nothing"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("# Auth\n\nNo criteria here.\n", 1, "acceptance criteria: no 'Acceptance Criteria'"),
        ("# A\n\n## Acceptance Criteria\n\nProse only.\n", 3, "acceptance criteria: no bullet"),
        (
            "# A\n## Acceptance criteria\n- AC-1: a\n- AC-1: b\n",
            4,
            "AC-1: duplicate id (also line 3)",
        ),
        ("# A\n## Acceptance criteria\n- a\n- check-1: b\n", 4, "check-1: duplicate id"),
        ("# A\n## Acceptance criteria\n- AC-2:\n", 3, "AC-2: the criterion is empty"),
    ],
    ids=["no-heading", "no-bullets", "duplicate-id", "duplicate-with-a-position-id", "empty"],
)
def test_a_mini_prd_with_nothing_to_do_or_clashing_ids_is_refused(
    repo: Path, text: str, line: int, message: str
) -> None:
    write_prd(repo, text)
    code, outputs, stderr = load(repo)
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith(f"{PRD}:{line}:1: mini-prd: {message}")
    problem = json.loads(outputs["PROBLEM"])
    assert (problem["path"], problem["line"], problem["rule"]) == (PRD, line, "mini-prd")


def _made(repo: Path) -> Path:
    write_prd(repo, "# Auth\n\n## Acceptance Criteria\n\n- AC-1: sign up\n- log in\n")
    code, outputs, _ = load(repo)
    state = Path(outputs["STATE"])
    assert code == 0
    code, _, _ = fix_engine(
        repo, "make", "--mini-prd", PRD, "--state", str(state), "--run-id", "r1"
    )
    assert code == 0
    return state


def _verdict(path: Path, item: str, verdict: str, evidence: str = "seen at a.py:1") -> Path:
    finding = {"id": item, "verdict": verdict, "evidence": evidence}
    path.write_text(json.dumps({"schema_version": "v1", "findings": [finding]}))
    return path


def record(
    repo: Path, state: Path, item: str, attempt: int, verdict: Path | None
) -> dict[str, Any]:
    code, outputs, stderr = fix_engine(
        repo,
        "record",
        "--state",
        str(state),
        "--item",
        item,
        "--attempt",
        str(attempt),
        "--verdict",
        str(verdict or ""),
        "--run-id",
        "r1",
    )
    assert code == 0, stderr
    recorded: dict[str, Any] = json.loads(outputs["ITEM"])
    return recorded


def test_make_writes_the_checklist_and_meta_yaml(repo: Path) -> None:
    state = _made(repo)
    assert (state / "checklist.md").read_text() == (
        "## Auth checklist\n\n- [ ] AC-1: sign up\n- [ ] check-2: log in\n\n**Progress: 0/2**\n"
    )
    meta = yaml.safe_load((state / "meta.yaml").read_text())
    assert (meta["section_id"], meta["status"], meta["progress"]) == ("auth", "in_progress", "0/2")
    assert meta["items"]["AC-1"] == {"status": "pending", "commit": "", "attempts": []}
    assert (state / "mini-prd.md").read_bytes() == (repo / PRD).read_bytes()


def test_verdicts_tick_boxes_and_three_failures_fail_the_item(repo: Path, tmp_path: Path) -> None:
    state = _made(repo)
    passed = record(repo, state, "AC-1", 1, _verdict(tmp_path / "v1", "AC-1", "rejected"))
    assert passed["status"] == "passed"
    assert "- [x] AC-1: sign up" in (state / "checklist.md").read_text()
    assert "**Progress: 1/2**" in (state / "checklist.md").read_text()
    bad = [
        None,  # no verdict at all
        _verdict(tmp_path / "v2", "AC-1", "rejected"),  # about another item
        _verdict(tmp_path / "v3", "check-2", "maybe"),  # not a verdict
    ]
    recorded = [record(repo, state, "check-2", n, verdict) for n, verdict in enumerate(bad, 1)]
    assert [r["status"] for r in recorded] == ["pending", "pending", "failed"]
    assert all(not a["passed"] and a["verdict"] is None for a in recorded[-1]["attempts"])
    evidence = [a["evidence"] for a in recorded[-1]["attempts"]]
    assert evidence[0].startswith("no verdict") and "not 'check-2'" in evidence[1]
    code, _, stderr = fix_engine(
        repo, "commit", "--state", str(state), "--item", "check-2", "--commit", "0" * 40
    )
    assert code == 1 and "only a passed item gets its commit" in stderr


def test_complete_refuses_an_open_section_and_writes_complete_last(
    repo: Path, tmp_path: Path
) -> None:
    state = _made(repo)
    code, _, stderr = fix_engine(repo, "complete", "--state", str(state))
    assert code == 1 and "not every item is done" in stderr and not (state / "COMPLETE").exists()
    head = git(repo, "rev-parse", "HEAD").strip()
    for item in ("AC-1", "check-2"):
        record(repo, state, item, 1, _verdict(tmp_path / item, item, "rejected"))
        code, _, _ = fix_engine(
            repo, "commit", "--state", str(state), "--item", item, "--commit", head
        )
        assert code == 0
    code, outputs, _ = fix_engine(repo, "complete", "--state", str(state))
    assert (code, outputs["STATUS"]) == (0, "completed")
    assert yaml.safe_load((state / "COMPLETE").read_text()) == {
        "section_id": "auth",
        "commits": [head, head],
    }
    assert yaml.safe_load((state / "meta.yaml").read_text())["status"] == "completed"
    assert load(repo)[1]["MODE"] == "complete"


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (
            lambda t: t.replace("- [ ] check-2: log in", "* check-2 log in"),
            4,
            "checklist: check-2:",
        ),
        (
            lambda t: t.replace("- [ ] check-2: log in", "- [ ] AC-1: again"),
            4,
            "checklist: AC-1: dup",
        ),
        (
            lambda t: t.replace("- [ ] check-2: log in", "- [ ] AC-9: new"),
            4,
            "checklist: AC-9: not an",
        ),
        (lambda t: t.replace("- [ ] check-2: log in\n", ""), 1, "checklist: check-2: meta.yaml"),
    ],
    ids=["not-a-box", "duplicate", "unknown", "missing"],
)
def test_a_checklist_edited_into_another_shape_is_refused(
    repo: Path, edit: Any, line: int, message: str
) -> None:
    state = _made(repo)
    checklist = state / "checklist.md"
    checklist.write_text(edit(checklist.read_text()))
    code, _, stderr = load(repo, resume="yes")
    assert code == 2
    assert stderr.startswith(f"{checklist.relative_to(repo)}:{line}:1: {message}"), stderr


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (
            lambda t: t.replace("status: in_progress", "status: [in_progress"),
            6,
            "meta: progress: not valid YAML",
        ),
        (
            lambda t: t.replace("status: in_progress", "status: half-done"),
            5,
            "meta: status: unexpected value",
        ),
        (
            lambda t: t.replace("    status: pending", "    status: maybe", 1),
            11,
            "meta: items.AC-1.status: expected",
        ),
        (lambda t: t.replace("prd_digest", "digest"), 1, "meta: prd_digest: missing"),
    ],
    ids=["syntax", "status", "item-status", "missing-key"],
)
def test_a_meta_yaml_that_does_not_parse_is_refused_naming_line_and_key(
    repo: Path, edit: Any, line: int, message: str
) -> None:
    state = _made(repo)
    meta = state / "meta.yaml"
    meta.write_text(edit(meta.read_text()))
    code, _, stderr = load(repo, resume="yes")
    assert code == 2
    assert stderr.startswith(f"{meta.relative_to(repo)}:{line}:1: {message}"), stderr


def test_a_stopped_section_needs_resume_and_a_changed_mini_prd_cannot_resume(repo: Path) -> None:
    _made(repo)
    code, _, stderr = load(repo)
    assert code == 2 and "a stopped run left this section in progress: add --resume" in stderr
    assert load(repo, resume="yes")[1]["MODE"] == "resume"
    (repo / PRD).write_text((repo / PRD).read_text() + "- one more\n")
    code, _, stderr = load(repo, resume="yes")
    assert code == 2 and stderr.startswith(f"{PRD}:1:1: mini-prd: prd_digest: changed")


def test_an_error_report_names_each_failed_item_before_the_status_says_so(
    repo: Path, tmp_path: Path
) -> None:
    state = _made(repo)
    for attempt in (1, 2, 3):
        verdict = _verdict(
            tmp_path / f"v{attempt}", "AC-1", "confirmed", f"still no form ({attempt})"
        )
        record(repo, state, "AC-1", attempt, verdict)
    code, outputs, _ = fix_engine(repo, "report", "--state", str(state))
    assert (code, outputs["STATUS"]) == (0, "escalated")
    report = yaml.safe_load(Path(outputs["ERROR_REPORT"]).read_text())["error_report"]
    assert report["final_failures"] == [
        {
            "check_id": "AC-1",
            "expected": "sign up",
            "actual": "still no form (3)",
            "last_verdict": "confirmed",
            "attempts": 3,
        },
    ]
    assert [h["attempt"] for h in report["history"]] == [1, 2, 3]
    assert yaml.safe_load((state / "meta.yaml").read_text())["status"] == "escalated"
