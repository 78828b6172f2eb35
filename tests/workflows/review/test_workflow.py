"""`fixloop review`: the reviewer headless; its REVIEW.md and findings JSON taken as they are.

Real git and the real document step (`phase-files`); only the reviewer is scripted. What the
review writes is then handed to review-fix and to fix-findings' intake unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, APP_FIXED, pack

from fixloop.agents.scripted import ScriptedBackend
from fixloop.cli.main import main
from fixloop.diagnostics import FixloopError
from fixloop.events import EventStream
from fixloop.reviews.parser import load_review
from fixloop.workflows.fix_findings.intake import load_state, needs_pre_gate
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review import ReviewOptions, ReviewResult, run_review
from fixloop.workflows.review_fix import ReviewFixOptions, run_review_fix

PHASE_DIR = ".planning/phases/02-auth"


def _finding(
    number: int, severity: str, file: str | None, line: int | None = None
) -> dict[str, Any]:
    return {
        "id": number,
        "severity": severity,
        "title": f"problem {number}",
        "body": f"evidence {number}",
        "file": file,
        "line_start": line,
        "line_end": line,
        "confidence": 0.8,
        "criterion": f"criterion {number}",
        "verdict": None,
        "evidence": None,
    }


FOUND = {
    "schema_version": "v1",
    "findings": [
        _finding(1, "P2", "src/util.py", 2),
        _finding(2, "P0", "src/app.py", 2),
        _finding(3, "P3", None),
    ],
    "checks_run": ["src/app.py read"],
}


@pytest.fixture
def phased(user_repo: UserRepo) -> UserRepo:
    """Phase 02's folder, and one commit of the phase that touched src/app.py."""
    (user_repo.path / PHASE_DIR).mkdir(parents=True)
    (user_repo.path / "src" / "app.py").write_text("def add(a, b):\n    return a - b  # 02\n")
    user_repo.git("add", "--", "src/app.py")
    user_repo.git("commit", "--quiet", "-m", "feat(02-01): add", "--", "src/app.py")
    return user_repo


def _review(repo: Path, *paths: str, **options: Any) -> tuple[ReviewResult, ScriptedBackend]:
    script = options.pop("script", {"reviewer/review/findings": {"output": FOUND}})
    backend = ScriptedBackend(script)
    context = Context(pack(), backend, EventStream())
    result = run_review(ReviewOptions(paths=paths, repo=repo, **options), context)
    return result, backend


def test_a_phase_number_reviews_its_commits_and_writes_a_review_review_fix_takes(
    phased: UserRepo,
) -> None:
    before = phased.user_work()
    result, backend = _review(phased.path, "02")
    [call] = backend.calls
    assert call.writable == ()  # the reviewer writes nothing
    assert '"src/app.py"' in call.system_prompt and "src/util.py" not in call.system_prompt
    assert result.files == ["src/app.py"]
    target = phased.path / PHASE_DIR / "02-REVIEW.md"
    assert target.is_file() and result.output_path.endswith(f"{PHASE_DIR}/02-REVIEW.md")
    review = load_review(target)
    assert (review.phase, review.status) == ("02", "issues_found")
    assert [(f.id, f.file, f.line) for f in review.findings] == [
        ("CR-01", "src/app.py", 2),
        ("WR-01", "src/util.py", 2),
    ]
    assert review.files_reviewed_list == ("src/app.py",)
    assert "P3: problem 3: evidence 3" in target.read_text()  # no file: a note, not a finding
    assert [str(n.id) for n in result.notes] == ["3"]
    assert phased.user_work() == before
    # review-fix takes it as it is.
    fixer = {
        "fixer/CR-01/iteration-1": {
            **APP_FIX,
            "edits": [{"path": "src/app.py", "old": "a - b", "new": "a + b"}],
        },
        "fixer/WR-01/iteration-1": {"fail": "crash"},
    }
    fixed = run_review_fix(
        ReviewFixOptions(review=target, repo=phased.path),
        Context(pack(), ScriptedBackend(fixer), EventStream()),
    )
    assert [o.label for o in fixed.outcomes] == [
        "fixed",
        "skipped: fixer result inconclusive (crash)",
    ]
    assert (phased.path / "src/app.py").read_text().startswith(APP_FIXED.rstrip("\n"))


def test_findings_json_is_taken_by_fix_findings_and_every_finding_is_pre_gated(
    phased: UserRepo,
) -> None:
    result, _ = _review(phased.path, "src/app.py", "src/util.py", format="findings-json", phase="2")
    target = phased.path / PHASE_DIR / "02-FINDINGS.json"
    data = json.loads(target.read_text())
    assert [f["verdict"] for f in data["findings"]] == ["confirmed"] * 3
    state = load_state(target, phased.path, None)
    assert [r.finding.id for r in state.records] == [2]  # the P0; P2 and P3 are out of scope
    assert needs_pre_gate(state.records[0].finding)
    assert result.files == ["src/app.py", "src/util.py"]


def test_without_paths_or_a_phase_the_working_trees_changes_are_reviewed(
    user_repo: UserRepo, tmp_path: Path
) -> None:
    out = tmp_path / "findings.json"
    result, _ = _review(user_repo.path, format="findings-json", output=out)
    assert result.files == ["README.md", "notes.txt", "scratch/todo.txt"]
    assert out.is_file()


@pytest.mark.parametrize(
    ("paths", "options", "problem"),
    [
        ((), {}, "a REVIEW.md needs a phase"),
        ((), {}, "with a folder .planning/phases/02-NAME) or --phase; or write a findings JSON"),
        (
            ("7",),
            {},
            "make one (`mkdir -p .planning/phases/07-NAME`), or review files without a phase",
        ),
        (("7",), {}, "`fixloop review PATHS --format findings-json --output FILE`"),
        (("02", "../outside.py"), {}, "outside the repository"),
        (("02", "src/none.py"), {}, "no such file or folder"),
        (("src/app.py",), {"format": "findings-json"}, "name the file to write with --output"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    phased: UserRepo, paths: tuple[str, ...], options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(FixloopError) as caught:
        _review(phased.path, *paths, **options)
    assert caught.value.exit_code == 2
    assert problem in caught.value.diagnostics[0].message
    assert list((phased.path / PHASE_DIR).iterdir()) == []
    assert not (phased.path / ".git" / "fixloop" / "runs").exists()


def test_an_existing_review_is_replaced_only_with_overwrite(phased: UserRepo) -> None:
    target = phased.path / PHASE_DIR / "02-REVIEW.md"
    target.write_text("mine\n")
    with pytest.raises(FixloopError, match="--overwrite replaces it"):
        _review(phased.path, "02")
    assert target.read_text() == "mine\n"
    _review(phased.path, "02", overwrite=True)
    assert load_review(target).findings


def test_an_inconclusive_reviewer_writes_nothing(
    phased: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"reviewer/review/findings": {"fail": "malformed"}}))
    code = main(["review", "02", "--repo", str(phased.path), "--script", str(script)])
    assert code == 1
    assert "the reviewer's answer is inconclusive (malformed_output)" in capsys.readouterr().err
    assert list((phased.path / PHASE_DIR).iterdir()) == []


@pytest.mark.parametrize("form", ["findings-json", "review-md"])
@pytest.mark.parametrize("file", ["../../etc/passwd", "/etc/passwd", "src/../../x.py"])
def test_a_finding_naming_a_file_outside_the_repository_is_refused(
    phased: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str, file: str
) -> None:
    # The reviewer is a model: a file it names is checked by the repository's safe-path rule
    # before a fixer would be pointed at it.
    answer = {**FOUND, "findings": [_finding(1, "P0", "src/app.py", 2), _finding(2, "P0", file)]}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"reviewer/review/findings": {"output": answer}}))
    argv = ["review", "02", "--repo", str(phased.path), "--script", str(script), "--format", form]
    assert main(argv) == 1
    said = capsys.readouterr().err.strip().splitlines()
    [line] = [line for line in said if not line.startswith("-- ")]  # progress lines aside
    assert line.startswith(f"review:1:1: review: the reviewer's finding 2 names {file!r}: ")
    assert list((phased.path / PHASE_DIR).iterdir()) == []


def test_the_command_line_prints_the_envelope(
    phased: UserRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"reviewer/review/findings": {"output": FOUND}}))
    code = main(["review", "02", "--repo", str(phased.path), "--script", str(script), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["command"] == "review" and data["counts"] == {"found": 3}
    assert data["result"]["files"] == ["src/app.py"] and data["result"]["totals"]["calls"] == 1
