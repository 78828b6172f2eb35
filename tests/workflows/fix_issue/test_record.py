"""The run's record: a snapshot when it starts (version, options, pack digest, model), a record of
every test command run, and the SHA-256 of every file it left once it is over."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.helpers.fix_issue import UNITTEST, fixing_script, make_issue_repo, recorder, write_issue

from fixloop import __version__
from fixloop.agents.budget import BudgetedBackend, RunBudget
from fixloop.agents.openai_backend import OpenAIBackend
from fixloop.agents.openai_config import OpenAITarget
from fixloop.agents.scripted import ScriptedBackend
from fixloop.documents.digest import pack_digest
from fixloop.documents.pack import Pack
from fixloop.workflows.fix_issue import FixIssueOptions, IssueStatus, run_fix_issue
from fixloop.workflows.fix_issue.record import model_of
from fixloop.workflows.kernel.workflow import Context


def test_a_run_records_what_ran_and_what_it_left(tmp_path: Path, pack: Pack) -> None:
    repo = make_issue_repo(tmp_path / "repo")
    opener = recorder()
    options = FixIssueOptions(
        issue=write_issue(tmp_path), repo=repo, tests=[UNITTEST], open_sandbox=opener
    )
    context = Context(pack, ScriptedBackend(fixing_script()), models={"issue-fixer": "haiku"})
    result = run_fix_issue(options, context)
    assert result.status is IssueStatus.RESOLVED, result.reason
    run_dir = Path(result.result_path).parent
    verify_dir = run_dir.with_name(run_dir.name + "-verify")

    snapshot = json.loads((run_dir / "snapshot.json").read_text())
    assert snapshot["fixloop_version"] == __version__
    assert snapshot["options"]["tests"] == [UNITTEST]
    assert snapshot["options"]["max_tokens"] == 150_000
    assert snapshot["options"]["sandbox"] == "auto"
    assert snapshot["pack"] == {"root": str(pack.root), "digest": pack_digest(pack.root)}
    # The run's choice (--model, --model-profile) over the role document's `model: opus`.
    assert snapshot["fixer"] == {"backend": "scripted", "role_model": "haiku"}

    # One record per command run, in the run's worktree and in the acceptance run's.
    for folder, sandbox in ((run_dir, opener.opened[0]), (verify_dir, opener.opened[1])):
        records = sorted((folder / "test-runs").glob("*.json"))
        assert len(records) == len(sandbox.commands) > 0
        first = json.loads(records[0].read_text())
        assert first["number"] == 1 and first["command"] == " ".join(UNITTEST)
        assert first["revision"] and first["status"] in ("passed", "failed")
        assert first["tests"]  # each test's status from the runner's report
    before = json.loads(sorted((run_dir / "test-runs").glob("*.json"))[0].read_text())
    assert before["status"] == "failed"
    assert before["tests"]["tests.test_stats.StatsTest.test_average"] == "failed"

    manifest = json.loads((run_dir / "artifacts.json").read_text())["files"]
    on_disk = {
        p.relative_to(run_dir.parent).as_posix()
        for folder in (run_dir, verify_dir)
        for p in folder.rglob("*")
        if p.is_file() and p.name not in ("lock", "artifacts.json")
    }
    assert set(manifest) == on_disk
    name = f"{run_dir.name}/result.json"
    assert {f"{run_dir.name}/fix.patch", f"{run_dir.name}/events.jsonl", name} <= set(manifest)
    for relative, entry in manifest.items():
        data = (run_dir.parent / relative).read_bytes()  # written last: nothing changed since
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_the_snapshot_names_an_openai_compatible_server_s_model_never_its_key() -> None:
    target = OpenAITarget(
        provider="deepseek",
        base_url="https://api.deepseek.com/v1",
        model="deepseek-chat",
        key_variable="DEEPSEEK_API_KEY",
        models={"opus": "deepseek-reasoner"},
    )
    secret = "sk-" + "x" * 40
    wrapped = BudgetedBackend(
        OpenAIBackend(target, environ={"DEEPSEEK_API_KEY": secret}), RunBudget()
    )
    played = model_of(wrapped, "opus")
    assert played == {
        "backend": "openai",
        "role_model": "opus",
        "provider": "deepseek",
        "base_url": "https://api.deepseek.com/v1",
        "model": "deepseek-reasoner",
    }
    assert secret not in json.dumps(played)
