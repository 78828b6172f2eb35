"""A pack of one's own is checked before a workflow runs it: a broken contract refuses the run in
one line, exit 2, with nothing changed (unless --no-contract-check); the bundled pack pays no
check; a pack that passed is not checked again until it changes. Checker calls are counted."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.fix_issue import fixing_script, make_issue_repo, write_issue
from tests.helpers.gitrepo import git

from fixloop import checker
from fixloop.cli.contract_gate import CACHE_FOLDER, pack_digest
from fixloop.cli.main import main
from fixloop.documents.discovery import bundled_pack_root

FOLDERS = ("agents", "commands", "workflows", ".claude-plugin")


def copy_pack(target: Path, change: Callable[[str], str] = lambda text: text) -> Path:
    """The bundled pack's documents copied to `target`, git-protocol.md passed through `change`."""
    root = bundled_pack_root()
    for folder in FOLDERS:
        shutil.copytree(root / folder, target / folder)
    for name in ("plugin.json", "fixloop.toml"):
        shutil.copy(root / name, target / name)
    protocol = target / "workflows/git-protocol.md"
    protocol.write_text(change(protocol.read_text(encoding="utf-8")), encoding="utf-8")
    return target


def no_ff(text: str) -> str:
    assert "merge --ff-only" in text
    return text.replace("merge --ff-only", "merge --no-ff")


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[list[Path]]:
    """Every call of the checker's front door, with the paths it was given."""
    calls: list[list[Path]] = []
    real = checker.check

    def counted(paths: Any, **options: Any) -> Any:
        calls.append([Path(p) for p in paths])
        return real(paths, **options)

    monkeypatch.setattr(checker, "check", counted)
    return calls


def fix_issue(tmp_path: Path, repo: Path, *extra: str) -> int:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(fixing_script()))
    issue = write_issue(tmp_path)
    argv = ["fix-issue", str(issue), "--repo", str(repo), "--test", "python3 -m unittest"]
    return main([*argv, "--sandbox", "local", "--script", str(script), *extra])


def test_a_pack_that_breaks_its_merge_contract_is_refused_in_one_line(
    tmp_path: Path, checks: list[list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    pack = copy_pack(tmp_path / "pack", no_ff)
    repo = make_issue_repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD")
    assert fix_issue(tmp_path, repo, "--pack", str(pack)) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "workflows/git-protocol.md:" in line
    contract = line.split(": ")[1]
    assert contract in ("cleanup-order", "exactly-one-ff-only-merge", "only-ff-merges")
    assert "breaks this contract" in line and "--no-contract-check" in line
    assert len(checks) == 1
    # Nothing changed: no run, no state folder, the branch and the tree as they were.
    assert not (repo / ".git/fixloop").exists()
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_no_contract_check_runs_the_broken_pack_anyway(
    tmp_path: Path, checks: list[list[Path]]
) -> None:
    pack = copy_pack(tmp_path / "pack", no_ff)
    repo = make_issue_repo(tmp_path / "repo")
    assert fix_issue(tmp_path, repo, "--pack", str(pack), "--no-contract-check") == 0
    assert checks == []
    assert not (repo / ".git/fixloop" / CACHE_FOLDER).exists()  # nothing was proved


def test_the_bundled_pack_pays_no_check(tmp_path: Path, checks: list[list[Path]]) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    assert fix_issue(tmp_path, repo) == 0
    assert fix_issue(tmp_path, repo, "--pack", str(bundled_pack_root())) == 0
    assert checks == []


def test_a_pack_that_passed_is_checked_once_per_change(
    tmp_path: Path, checks: list[list[Path]]
) -> None:
    pack = copy_pack(tmp_path / "pack")  # unchanged: every contract holds
    repo = make_issue_repo(tmp_path / "repo")
    assert fix_issue(tmp_path, repo, "--pack", str(pack)) == 0
    assert fix_issue(tmp_path, repo, "--pack", str(pack)) == 0
    assert len(checks) == 1  # the second run found the verdict under the state folder
    assert (repo / ".git/fixloop" / CACHE_FOLDER / pack_digest(pack)).is_file()
    # A change of any document is a new digest: checked again (and refused, here).
    protocol = pack / "workflows/git-protocol.md"
    protocol.write_text(no_ff(protocol.read_text(encoding="utf-8")), encoding="utf-8")
    assert fix_issue(tmp_path, repo, "--pack", str(pack)) == 2
    assert len(checks) == 2


def test_the_bench_checks_a_pack_of_one_s_own_too(
    tmp_path: Path, checks: list[list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    pack = copy_pack(tmp_path / "pack", no_ff)
    code = main(["bench", "efficacy", str(tmp_path / "corpus"), "--pack", str(pack)])
    assert code == 2 and len(checks) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert "workflows/git-protocol.md:" in line and "breaks this contract" in line


def test_a_step_of_a_broken_pack_is_refused_like_its_workflow(
    tmp_path: Path, checks: list[list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`fixloop step run` runs a document's step by itself: a pack of one's own is checked
    first there too, and `--no-contract-check` runs it anyway."""
    pack = copy_pack(tmp_path / "pack", no_ff)
    repo = make_issue_repo(tmp_path / "repo")
    step = ["step", "run", "git-protocol", "preflight", "--repo", str(repo), "--pack", str(pack)]
    assert main(step) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "workflows/git-protocol.md:" in line and "breaks this contract" in line
    assert not (repo / ".git/fixloop").exists()  # refused before a run folder exists
    assert len(checks) == 1

    assert main([*step, "--no-contract-check"]) == 0
    assert "git-protocol#preflight: ok" in capsys.readouterr().err
    assert len(checks) == 1  # not checked: the user said so


def test_a_step_of_a_pack_that_keeps_its_contracts_runs_and_is_checked_once(
    tmp_path: Path, checks: list[list[Path]]
) -> None:
    pack = copy_pack(tmp_path / "pack")
    repo = make_issue_repo(tmp_path / "repo")
    step = ["step", "run", "git-protocol", "preflight", "--repo", str(repo), "--pack", str(pack)]
    assert main(step) == 0
    assert main(step) == 0
    assert len(checks) == 1  # the pass was remembered under the state folder
    assert (repo / ".git/fixloop" / CACHE_FOLDER / pack_digest(pack)).is_file()
