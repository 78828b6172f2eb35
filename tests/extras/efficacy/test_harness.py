"""The harness on the shipped corpus with the scripted model, and what it says when an agent
fails, when another agent's patches are scored, and when the budget is spent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.extras.efficacy.conftest import CORPUS
from tests.helpers.fix_issue import recorder

from fixloop.agents.budget import RunBudget
from fixloop.documents.pack import Pack
from fixloop.extras.efficacy import BenchOptions, export_tasks, load_corpus, markdown, run_bench


@pytest.mark.slow
def test_the_scripted_answers_resolve_every_task_of_the_shipped_corpus(pack: Pack) -> None:
    opener = recorder()
    result = run_bench(BenchOptions(corpus=CORPUS, open_sandbox=opener), pack)
    corpus = load_corpus(CORPUS)
    assert [o.id for o in result.outcomes] == [task.id for task in corpus.tasks]
    assert [(o.id, o.status) for o in result.outcomes if o.status != "resolved"] == []
    assert result.resolved == len(corpus.tasks) and result.rate == 1.0 and result.exit_code == 0
    for outcome in result.outcomes:
        assert outcome.accepted is True and outcome.attempts == 1
        assert outcome.turns == outcome.tool_calls + 1 >= 5
        assert outcome.wall_s > 0 and len(outcome.base) == 40
    # Every command ran in a sandbox: the task's worktree, then the clean checkout.
    assert len(opener.opened) == 2 * len(corpus.tasks)
    table = markdown(result)
    assert table.count("| resolved |") == len(corpus.tasks)
    assert f"**{len(corpus.tasks)}/{len(corpus.tasks)} resolved (100%)**" in table
    assert corpus.digest in table
    totals = result.totals()
    assert totals["tool_calls"] == sum(o.tool_calls for o in result.outcomes)


def _wrong_answers(tmp_path: Path) -> Path:
    weaken = {
        "name": "edit_file",
        "input": {
            "path": "tests/test_slugs.py",
            "version": "@last",
            "old": 'self.assertFalse(is_valid_slug("Hello"))',
            "new": "pass",
        },
    }
    script: dict[str, Any] = {
        # Makes the public tests pass by weakening one: the restored test catches it.
        "regex": {
            "issue-fixer/regex/attempt-1": {
                "tools": [{"name": "read_file", "input": {"path": "tests/test_slugs.py"}}, weaken],
                "output": {"id": "regex", "status": "done", "notes": "made the tests pass"},
            }
        },
        # Gives up without a change, three times.
        "off-by-one": {
            f"issue-fixer/off-by-one/attempt-{n}": {
                "output": {"id": "off-by-one", "status": "failed", "notes": "could not find it"}
            }
            for n in (1, 2, 3)
        },
        # state-leak: no answer at all, so every attempt is inconclusive.
    }
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(script))
    return path


def test_failures_are_measured_not_hidden(tmp_path: Path, pack: Pack) -> None:
    options = BenchOptions(
        corpus=CORPUS,
        open_sandbox=recorder(),
        script=_wrong_answers(tmp_path),
        tasks=("regex", "off-by-one", "state-leak"),
        out=tmp_path / "out",
    )
    result = run_bench(options, pack)
    outcomes = {o.id: o for o in result.outcomes}
    assert outcomes["regex"].status == "rejected"
    assert outcomes["regex"].reason == (
        "acceptance tests did not pass: fail-to-pass 0/1, pass-to-pass 3/3: "
        "tests.test_hidden_slugs.WholeTextTest.test_spaces_and_punctuation failed"
    )
    assert outcomes["off-by-one"].status == "unresolved" and outcomes["off-by-one"].accepted is None
    assert outcomes["off-by-one"].reason.startswith("the fixer could not fix it")
    assert outcomes["state-leak"].status == "unresolved" and outcomes["state-leak"].attempts == 3
    assert "inconclusive (missing_output" in outcomes["state-leak"].reason
    assert result.resolved == 0 and result.exit_code == 0  # measured, not broken
    assert "**0/3 resolved (0%)**" in markdown(result)
    kept = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*"))
    assert (
        "regex/result.json" in kept and "regex/fix.patch" in kept and "regex/events.jsonl" in kept
    )
    assert "regex/evidence.json" in kept and "regex/acceptance-events.jsonl" in kept
    evidence = json.loads((tmp_path / "out/regex/evidence.json").read_text())
    assert evidence["status"] == "rejected" and evidence["reason"] == outcomes["regex"].reason
    assert evidence["fail_to_pass"] == "0/1" and evidence["pass_to_pass"] == "3/3"
    hidden = [t for t in evidence["tests"] if t["role"] == "fail_to_pass"]
    assert hidden == [
        {
            "id": "tests.test_hidden_slugs.WholeTextTest.test_spaces_and_punctuation",
            "role": "fail_to_pass",
            "base": "failed",
            "after_fix": "missing",  # the fixer never saw the hidden test
            "accepted": "failed",
        }
    ]
    assert "is_valid_slug" in evidence["patch"] or "Hello" in evidence["patch"]
    assert "FAILED" in evidence["output"]  # the runner's own words, at acceptance


def _patch(tmp_path: Path, task_id: str, old: str, new: str, path: str) -> str:
    """What another agent does: works on the exported task, hands back its diff."""
    [folder] = export_tasks(CORPUS, tmp_path / "exported", (task_id,))
    assert (folder / "issue.md").read_text() == (
        CORPUS / "tasks" / task_id / "issue.md"
    ).read_text()
    assert not list(folder.rglob("test_hidden_*")), "the hidden tests stay behind"
    repo = folder / "repo"
    target = repo / path
    target.write_text(target.read_text().replace(old, new))
    done = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def test_another_agents_patches_go_through_the_same_acceptance(tmp_path: Path, pack: Pack) -> None:
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "regex.patch").write_text(
        _patch(tmp_path, "regex", "SLUG.match(text)", "SLUG.fullmatch(text)", "web/slugs.py")
    )
    (patches / "string-formatting.patch").write_text(  # right idea, wrong precision
        _patch(
            tmp_path, "string-formatting", "{cents / 100}", "{cents / 100:.1f}", "billing/money.py"
        )
    )
    options = BenchOptions(
        corpus=CORPUS,
        open_sandbox=recorder(),
        patches=patches,
        tasks=("regex", "string-formatting", "api-misuse"),
        out=tmp_path / "out",
    )
    result = run_bench(options, pack)
    statuses = {o.id: (o.status, o.accepted) for o in result.outcomes}
    # With --patches too, every task keeps its evidence.
    regex = json.loads((tmp_path / "out/regex/evidence.json").read_text())
    assert regex["fail_to_pass"] == "1/1" and regex["tests"][0]["after_fix"] == "not run"
    assert (tmp_path / "out/regex/fix.patch").read_text() == (patches / "regex.patch").read_text()
    wrong = json.loads((tmp_path / "out/string-formatting/evidence.json").read_text())
    assert wrong["status"] == "rejected" and wrong["fail_to_pass"].startswith("0/")
    assert "| 1/1 |" in markdown(result)
    assert statuses == {
        "regex": ("resolved", True),
        "string-formatting": ("rejected", False),
        "api-misuse": ("unresolved", None),
    }
    assert result.backend == "patches" and result.resolved == 1


def test_a_spent_budget_starts_no_task(pack: Pack) -> None:
    options = BenchOptions(
        corpus=CORPUS,
        open_sandbox=recorder(),
        budget=RunBudget(max_cost_usd=0.0),
        tasks=("regex", "api-misuse"),
    )
    result = run_bench(options, pack)
    assert [o.status for o in result.outcomes] == ["not-run", "not-run"]
    assert result.outcomes[0].reason.startswith("run cost budget spent")


@pytest.mark.needs("docker")
@pytest.mark.slow
def test_a_task_in_the_docker_sandbox(pack: Pack, docker_image: str) -> None:
    options = BenchOptions(
        corpus=CORPUS, sandbox="docker", image=docker_image, tasks=("string-formatting",)
    )
    result = run_bench(options, pack)
    [outcome] = result.outcomes
    assert outcome.status == "resolved", outcome.reason
    assert result.sandbox.startswith("sandbox: docker")
