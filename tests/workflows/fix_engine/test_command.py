"""`fixloop fix-engine` as a user runs it: exit codes, one-line refusals, the JSON envelope.

Bad input is one line on stderr naming the file, the line and the key, exit 2, and nothing in
the repository (its refs, the user's work, the state folder) changed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.workflows.fix_engine.scenario import MINI_PRD, make_section_repo, run, state_dir
from tests.workflows.fix_engine.test_workflow import passing

from fixloop.agents.budget import RunBudget
from fixloop.cli.main import main


@pytest.fixture
def section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UserRepo:
    """The repository, as the current directory: problems name paths from there."""
    made = make_section_repo(tmp_path / "repo")
    monkeypatch.chdir(made.path)
    return made


def snapshot(repo: UserRepo) -> tuple[object, ...]:
    """Everything a run could touch: refs, the user's work, the state folder's files."""
    state = repo.path / ".git" / "fixloop"
    files = (
        {
            str(path.relative_to(state)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(state.rglob("*"))
            if path.is_file()
        }
        if state.exists()
        else {}
    )
    return repo.git("show-ref"), repo.user_work(), repo.git("status", "--porcelain"), files


def fix_engine(repo: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    script = repo.parent / "script.json"
    script.write_text(json.dumps(passing()), encoding="utf-8")
    argv = ["fix-engine", str(repo / MINI_PRD), "--repo", str(repo), "--script", str(script)]
    code = main([*argv, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_envelope_items_and_exit_zero_for_a_complete_section(
    section: UserRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = fix_engine(section.path, capsys, "--json")
    assert code == 0, err
    envelope = json.loads(out)
    assert (envelope["ok"], envelope["command"], envelope["exit_code"]) == (True, "fix-engine", 0)
    assert envelope["counts"] == {"done": 2}
    assert [(i["id"], i["status"], i["attempts"]) for i in envelope["items"]] == [
        ("AC-1", "done", 2),
        ("check-2", "done", 1),
    ]
    assert envelope["result"]["status"] == "completed"
    assert len(envelope["result"]["commits"]) == 2
    # Progress went to stderr, item by item, live.
    assert "fix-engine [1/2] AC-1: done after 2 attempt(s)" in err
    assert "-- AC-1 attempt 1: not passed (confirmed)" in err


def test_the_closing_summary_counts_items_attempts_and_commits(
    section: UserRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = fix_engine(section.path, capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.endswith(
        "2 item(s), 2 done, 0 failed; 3 attempt(s), 2 commit(s); section completed"
    )
    assert "Complete: " in out


@pytest.mark.parametrize(
    ("prd", "expected"),
    [
        ("# Calc\n\nJust prose.\n", f"{MINI_PRD}:1:1: mini-prd: acceptance criteria: no "),
        (
            "# Calc\n\n## Acceptance Criteria\n\n- AC-1: one\n- AC-1: two\n",
            f"{MINI_PRD}:6:1: mini-prd: AC-1: duplicate id (also line 5)",
        ),
    ],
    ids=["no-items", "duplicate-ids"],
)
def test_a_bad_mini_prd_is_one_line_exit_2_and_nothing_touched(
    section: UserRepo, capsys: pytest.CaptureFixture[str], prd: str, expected: str
) -> None:
    (section.path / MINI_PRD).write_text(prd, encoding="utf-8")
    before = snapshot(section)
    code, out, err = fix_engine(section.path, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(expected), err
    assert snapshot(section) == before


def test_a_mini_prd_outside_the_repository_is_refused(
    section: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "mini-prd.md"
    outside.write_text("# X\n## Acceptance Criteria\n- a\n", encoding="utf-8")
    before = snapshot(section)
    script = tmp_path / "script.json"
    script.write_text("{}", encoding="utf-8")
    code = main(["fix-engine", str(outside), "--repo", str(section.path), "--script", str(script)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "must be inside the repository" in err
    assert snapshot(section) == before


def _stopped(section: UserRepo) -> Path:
    """A section a spent budget stopped before its first call: state on disk, in progress."""
    result, _ = run(section.path, passing(), budget=RunBudget(max_cost_usd=0))
    assert result.status == "stopped"
    return state_dir(section.path)


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        ("checklist.md", ("- [ ] check-2:", "- [ ]check-2"), ":4:1: checklist: check-2: "),
        ("meta.yaml", ("progress: 0/2", "progress: [0/2"), ":7:1: meta: max_attempts: not valid"),
        ("meta.yaml", ("    status: pending", "    status: 7"), ":11:1: meta: items.AC-1.status"),
    ],
    ids=["checklist-shape", "meta-syntax", "meta-value"],
)
def test_state_files_edited_into_another_shape_stop_a_resume_naming_line_and_key(
    section: UserRepo,
    capsys: pytest.CaptureFixture[str],
    name: str,
    edit: tuple[str, str],
    expected: str,
) -> None:
    state = _stopped(section)
    target = state / name
    old, new = edit
    assert old in target.read_text()
    target.write_text(target.read_text().replace(old, new, 1), encoding="utf-8")
    capsys.readouterr()
    before = snapshot(section)
    code, out, err = fix_engine(section.path, capsys, "--resume")
    assert code == 2 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"{target.relative_to(section.path)}{expected}"), err
    assert snapshot(section) == before
