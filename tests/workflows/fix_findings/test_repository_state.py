"""fix-findings works in the user's own tree: a fixer that commits, and a stale index lock.

A fixer that runs `git commit` would put the user's staged work into a commit nobody asked for;
the commit is undone (the branch goes back, the index and the files stay as they were) and the
attempt fails, loudly. A stale `.git/index.lock` stops the run before anything changes, with
the cause; one that appears mid-run stops it with the cause too, the fixer's unverified edit is
taken back out of the user's file (and kept in the run folder), and `recover` names the run and
how to continue it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.fix_findings import (
    BUGGY,
    FIXED,
    UserWork,
    finding,
    fix,
    git,
    keys,
    run,
    run_with,
    staged,
    verdict,
)

from fixloop.agents.scripted import ScriptedBackend
from fixloop.cli.main import main
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack


def test_a_fixer_that_commits_is_undone_and_its_attempt_fails(pack: Pack, repo: Path) -> None:
    work = UserWork.capture(repo)
    target = finding()
    sneaky = {
        "edits": [{"path": "calc.py", "content": FIXED}],
        "bash": ["git add -A && git commit -q -m 'fixer: done'"],
        "output": {
            "files_changed": ["calc.py"],
            "summary": "fixed and committed",
            "concerns": None,
        },
    }
    script = {
        "fixer/1/round-1": sneaky,
        "fixer/1/round-2": fix(FIXED),
        "verifier/1/round-2": {"output": verdict(target, "rejected")},
    }
    session, backend, _ = run(pack, repo, [target], script)
    # HEAD is back where it was: the user's staged other.py is staged again, not committed.
    work.assert_intact(repo)
    assert keys(backend) == ["fixer/1/round-1", "fixer/1/round-2", "verifier/1/round-2"]
    [record] = session.state.records
    assert record.rounds[0].phase == "verified" and "committed" in record.rounds[0].summary
    assert any("undone" in note for note in record.notes)
    assert session.state.output().resolved == [1]  # Round 2 fixed it the proper way
    assert staged(repo) == FIXED


def test_a_stale_index_lock_stops_before_anything_changes(pack: Pack, repo: Path) -> None:
    (repo / ".git" / "index.lock").write_text("")
    work = UserWork.capture(repo)
    findings = repo.parent / "findings.json"
    findings.write_text(json.dumps([finding()]))
    backend = ScriptedBackend({"fixer/1/round-1": fix()})
    with pytest.raises(FixloopError) as caught:
        run_with(pack, backend, findings, repo)
    assert caught.value.exit_code == 2
    assert "index.lock exists" in caught.value.diagnostics[0].message
    assert backend.calls == []
    assert not (repo / ".git" / "fixloop" / "runs").exists()
    work.assert_intact(repo)


def test_an_index_lock_mid_run_keeps_the_cause_and_the_users_file(
    pack: Pack, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = finding()
    # The fixer's edit is made; then git's index is locked before the fix can be staged.
    script = {"fixer/1/round-1": {**fix(), "bash": ["touch .git/index.lock"]}}
    findings = repo.parent / "findings.json"
    findings.write_text(json.dumps([target]))
    script_path = repo.parent / "script.json"
    script_path.write_text(json.dumps(script))
    # Under bwrap or docker the shell cannot write `.git` at all; locally it can.
    args = ["fix-findings", str(findings), "--repo", str(repo), "--script", str(script_path)]
    code = main([*args, "--sandbox", "local"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "index.lock" in err and "File exists" in err  # the cause, not git's last hint line
    assert (repo / "calc.py").read_text() == BUGGY  # the unverified edit is out of the user's file
    [run_dir] = (repo / ".git" / "fixloop" / "runs").iterdir()
    assert (run_dir / "unverified" / "calc.py").read_text() == FIXED  # and kept
    assert main(["recover", "--repo", str(repo)]) == 0
    said = capsys.readouterr().out
    assert f"run {run_dir.name} (fix-findings) stopped" in said and "--resume" in said
    (repo / ".git" / "index.lock").unlink()
    resumed = ScriptedBackend(
        {"fixer/1/round-1": fix(), "verifier/1/round-1": {"output": verdict(target, "rejected")}}
    )
    session = run_with(pack, resumed, findings, repo, resume=run_dir.name)
    assert session.state.output().resolved == [1]
    assert staged(repo) == FIXED
    assert git(repo, "status", "--porcelain", "--", "calc.py").startswith("M ")
