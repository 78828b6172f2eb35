"""Running fix-findings again on a findings file it already settled says so and does nothing,
while what it staged is still in the index; unstaged since, and the file runs again."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.fix_findings import finding, fix, git, keys, make_repo, run, staged, verdict

from fixloop.documents.pack import Pack

FIXED_AND_PASSED = {
    "fixer/1/round-1": fix(),
    "verifier/1/round-1": {"output": verdict(finding(), "rejected")},
}


def test_a_settled_findings_file_is_not_fixed_again(pack: Pack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    first, _, _ = run(pack, repo, [finding()], FIXED_AND_PASSED)
    assert first.state.output().resolved == [1] and first.exit_code == 0
    index, runs = staged(repo), sorted((repo / ".git/fixloop/runs").iterdir())

    again, backend, _ = run(pack, repo, [finding()], FIXED_AND_PASSED)

    assert keys(backend) == [], "no fixer or verifier dispatched"
    assert (again.exit_code, again.run_id) == (0, "")
    assert f"was settled by run {first.run_id} (1 resolved" in again.nothing_to_do
    assert again.summary_lines() == [again.nothing_to_do]
    assert staged(repo) == index and sorted((repo / ".git/fixloop/runs").iterdir()) == runs

    git(repo, "commit", "-q", "-m", "the fix")  # committed: the index holds it still
    committed, backend, _ = run(pack, repo, [finding()], FIXED_AND_PASSED)
    assert keys(backend) == [] and committed.nothing_to_do


def test_a_fix_unstaged_since_runs_again(pack: Pack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    run(pack, repo, [finding()], FIXED_AND_PASSED)
    git(repo, "restore", "--staged", "--worktree", "--", "calc.py")

    again, backend, _ = run(pack, repo, [finding()], FIXED_AND_PASSED)

    assert not again.nothing_to_do
    assert keys(backend) == ["fixer/1/round-1", "verifier/1/round-1"]


def test_an_escalated_finding_runs_again(pack: Pack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    confirmed = {"output": verdict(finding(), "confirmed")}
    script = {
        "fixer/1/round-1": fix(),
        "verifier/1/round-1": confirmed,
        "fixer/1/round-2": fix(),
        "verifier/1/round-2": confirmed,
    }
    first, _, _ = run(pack, repo, [finding()], script)
    assert first.state.output().escalated

    again, backend, _ = run(pack, repo, [finding()], script)

    assert not again.nothing_to_do and keys(backend)
