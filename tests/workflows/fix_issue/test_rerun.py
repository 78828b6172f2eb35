"""Running fix-issue again on an issue it resolved on the same commit with the same tests says
so and does nothing (the patch is there already); other tests, another commit or an edited issue,
and it runs again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.fix_issue import fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import git

from fixloop.cli.main import main

UNITTEST = "python3 -m unittest"


def fix_issue(
    repo: Path, issue: Path, script: Path, capsys: pytest.CaptureFixture[str], *more: str
) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    argv = ["fix-issue", str(issue), "--repo", str(repo), "--script", str(script)]
    code = main([*argv, "--sandbox", "local", "--json", *more])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def resolved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path, str]:
    repo = make_issue_repo(tmp_path / "repo")
    issue = write_issue(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(fixing_script()))
    code, first = fix_issue(repo, issue, script, capsys, "--test", UNITTEST)
    assert code == 0, first
    return repo, issue, script, str(first["run_id"])


def runs(repo: Path) -> list[str]:
    return sorted(path.name for path in (repo / ".git/fixloop/runs").iterdir())


def test_a_resolved_issue_is_not_fixed_again(
    resolved: tuple[Path, Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, issue, script, first = resolved
    before = runs(repo)

    code, again = fix_issue(repo, issue, script, capsys, "--test", UNITTEST)

    assert (code, again["run_id"], again["ok"]) == (0, "", True)
    result = again["result"]
    assert isinstance(result, dict)
    said = str(result["nothing_to_do"])
    assert f"was resolved by run {first} on " in said and "nothing to do" in said
    assert result["patch"] == {
        "path": str(repo / ".git/fixloop/runs" / first / "fix.patch"),
        "files": 1,
    }
    assert runs(repo) == before, "no run started"


@pytest.mark.parametrize("change", ["other tests", "a new commit", "an edited issue"])
def test_anything_that_decides_resolved_changed_and_it_runs_again(
    resolved: tuple[Path, Path, Path, str], capsys: pytest.CaptureFixture[str], change: str
) -> None:
    repo, issue, script, _ = resolved
    tests = ["--test", UNITTEST]
    if change == "other tests":
        tests += ["--test", "python3 -m unittest tests.test_stats"]
    elif change == "a new commit":
        (repo / "NOTES.md").write_text("notes\n")
        git(repo, "add", "NOTES.md")
        git(repo, "commit", "-q", "-m", "notes")
    else:
        issue.write_text(issue.read_text() + "\nStill broken.\n")

    code, again = fix_issue(repo, issue, script, capsys, *tests)

    assert again["run_id"] and not again["result"]["nothing_to_do"], again  # type: ignore[index]
    assert code == 0
