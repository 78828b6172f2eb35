"""SWE-bench in and out, on instances of our own (tests/helpers/swebench.py): records imported
as a corpus of cloned tasks, proved by `validate`, run by an agent and by `--patches`, and the
predictions written as SWE-bench's harness takes them."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers.fix_issue import recorder
from tests.helpers.swebench import PYTEST, instances, make_repository, write_jsonl

from fixloop.agents.backend import AgentOutcome, AgentRequest
from fixloop.agents.scripted import ScriptedBackend
from fixloop.agents.toolbox import Toolbox, ToolReply, ToolSpec
from fixloop.cli.main import main
from fixloop.diagnostics import FixloopError
from fixloop.documents.pack import Pack
from fixloop.extras.efficacy import BenchOptions, load_corpus, run_bench
from fixloop.extras.efficacy.harness import run_task
from fixloop.extras.efficacy.swebench import ImportOptions, import_instances, predictions

PREDICTION_KEYS = {"instance_id", "model_name_or_path", "model_patch"}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("swebench")
    repo, base = make_repository(folder / "mirror" / "acme__calc")
    records = instances(repo, base)
    source = write_jsonl(folder / "instances.jsonl", records)
    corpus = folder / "corpus"
    imported = import_instances(
        ImportOptions(source, str(folder / "mirror"), corpus, test=tuple(PYTEST.split()))
    )
    return {"folder": folder, "repo": repo, "base": base, "corpus": corpus, "ids": imported}


def test_an_import_is_a_frozen_corpus_of_cloned_tasks(made: dict[str, Any]) -> None:
    corpus = load_corpus(made["corpus"])  # frozen: the digest checks
    assert (
        made["ids"]
        == [task.id for task in corpus.tasks]
        == [f"acme__calc-{n}" for n in (1, 2, 3, 4)]
    )
    task = corpus.tasks[0]
    spec = yaml.safe_load((task.folder / "task.yaml").read_text())
    assert spec["repository"] == {"path": str(made["repo"]), "commit": made["base"]}
    # The dataset's JSON-encoded lists are lists here; the files the base has are the agent's
    # tests, the file the test patch adds runs at acceptance only.
    assert spec["fail_to_pass"] == [
        "tests/test_add.py::test_add",
        "tests/test_ops.py::test_add_small",
    ]
    assert spec["tests"] == [[*PYTEST.split(), "tests/test_ops.py"]]
    assert spec["acceptance"] == [[*PYTEST.split(), "tests/test_add.py"]]
    assert spec["meta"]["hints_text"] == "see ops.py" and spec["meta"]["version"] == "0.1"
    assert task.issue.read_text().startswith("add() subtracts")
    assert task.gold is not None and "a + b" in task.gold.read_text()
    assert task.test_patch is not None and "test_add.py" in task.test_patch.read_text()


def test_validate_proves_the_valid_instances_and_names_what_is_wrong_with_the_others(
    made: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "efficacy", "validate", str(made["corpus"]), "--sandbox", "local"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines == [
        "valid   acme__calc-1: fail-to-pass 2 fail at the base; with the reference patch "
        "fail-to-pass 2/2 and pass-to-pass 1/1 pass",
        "valid   acme__calc-2: fail-to-pass 1 fail at the base; with the reference patch "
        "fail-to-pass 1/1 and pass-to-pass 0/0 pass",
        "INVALID acme__calc-3: fail-to-pass passes at the base: tests/test_ops.py::test_mul",
        "INVALID acme__calc-4: the reference patch is rejected: fail-to-pass 0/2, "
        "pass-to-pass 1/1: tests/test_add.py::test_add failed; "
        "tests/test_ops.py::test_add_small failed",
        "2 of 4 tasks valid; invalid: acme__calc-3, acme__calc-4",
    ]


def test_validate_takes_reference_patches_from_a_folder(
    made: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "gold"
    gold.mkdir()
    fixed = made["corpus"] / "tasks" / "acme__calc-1" / "gold.patch"
    (gold / "acme__calc-4.patch").write_text(fixed.read_text())  # the right fix this time
    argv = ["bench", "efficacy", "validate", str(made["corpus"]), "--sandbox", "local"]
    code = main([*argv, "--gold", str(gold), "--task", "acme__calc-4", "--task", "acme__calc-2"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith("valid   acme__calc-4: fail-to-pass 2 fail at the base")
    assert lines[1] == f"INVALID acme__calc-2: no reference patch ({gold}/acme__calc-2.patch)"


def _script(task_id: str) -> dict[str, Any]:
    return {
        f"issue-fixer/{task_id}/attempt-1": {
            "tools": [
                {"name": "read_file", "input": {"path": "calc/ops.py"}},
                {
                    "name": "edit_file",
                    "input": {
                        "path": "calc/ops.py",
                        "version": "@last",
                        "old": "a - b",
                        "new": "a + b",
                    },
                },
                {"name": "run_tests", "input": {}},
            ],
            "output": {"id": task_id, "status": "done", "notes": "add() added"},
        }
    }


def _applies(repo: Path, base: str, patch: str, tmp_path: Path) -> bool:
    """Does `patch` apply to `base` as SWE-bench's harness applies it (`git apply`)?"""
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(repo), str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "checkout", "--quiet", base], check=True)
    done = subprocess.run(
        ["git", "-C", str(checkout), "apply", "--check", "-"], input=patch, text=True, check=False
    )
    return done.returncode == 0


def test_an_agent_fixes_an_imported_task_and_its_prediction_applies_upstream(
    made: dict[str, Any], pack: Pack, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"acme__calc-2": _script("acme__calc-2")}))
    options = BenchOptions(
        corpus=made["corpus"],
        script=script,
        open_sandbox=recorder(),
        tasks=("acme__calc-2", "acme__calc-3"),
        sandbox="local",
    )
    result = run_bench(options, pack)
    fixed, unanswered = result.outcomes
    assert fixed.status == "resolved", fixed.reason
    assert fixed.base == made["base"]  # the upstream commit itself, not a snapshot of it
    assert unanswered.status == "unresolved"
    rows = predictions(result, "fixloop-scripted")
    assert [row["instance_id"] for row in rows] == ["acme__calc-2", "acme__calc-3"]
    assert rows[1]["model_patch"] == ""
    assert _applies(made["repo"], made["base"], rows[0]["model_patch"], tmp_path)


def _swebench_loader() -> Any:
    """SWE-bench's own predictions loader, where its package imports (it needs docker,
    datasets and more); None elsewhere."""
    try:
        from swebench.harness.utils import get_predictions_from_file  # type: ignore[import-not-found]
    except ImportError:
        return None
    return get_predictions_from_file


def test_predictions_are_the_jsonl_swebench_reads(
    made: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold = tmp_path / "gold"
    gold.mkdir()
    for task_id in ("acme__calc-1", "acme__calc-4"):
        source = made["corpus"] / "tasks" / task_id / "gold.patch"
        (gold / f"{task_id}.patch").write_text(source.read_text())
    written = tmp_path / "preds.jsonl"
    argv = ["bench", "efficacy", str(made["corpus"]), "--sandbox", "local", "--patches", str(gold)]
    argv += ["--task", "acme__calc-1", "--task", "acme__calc-4", "--predictions", str(written)]
    assert main(argv) == 0
    capsys.readouterr()
    lines = written.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    # SWE-bench's documented schema: one object a line, these three keys, strings.
    for row in rows:
        assert set(row) == PREDICTION_KEYS and all(isinstance(v, str) for v in row.values())
        assert row["model_name_or_path"] == "fixloop-patches"
        assert row["model_patch"] == (gold / f"{row['instance_id']}.patch").read_text()
        assert _applies(
            made["repo"], made["base"], row["model_patch"], tmp_path / row["instance_id"]
        )
    assert [row["instance_id"] for row in rows] == ["acme__calc-1", "acme__calc-4"]
    loader = _swebench_loader()
    if loader is not None:
        assert loader(str(written), "unused", "test") == rows


def test_an_import_from_a_url_base_clones_the_repository(
    made: dict[str, Any], tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "one.jsonl", instances(made["repo"], made["base"])[1:2])
    corpus = tmp_path / "corpus"
    base_url = (made["folder"] / "mirror").as_uri()
    # A url is not looked into at import (the clone is validate's and the run's); a file://
    # one names the mirror's folder as OWNER/NAME under it.
    mirror = made["folder"] / "mirror" / "acme"
    mirror.mkdir(exist_ok=True)
    link = mirror / "calc"
    if not link.exists():
        link.symlink_to(made["repo"])
    import_instances(ImportOptions(source, base_url, corpus, test=tuple(PYTEST.split())))
    spec = yaml.safe_load((corpus / "tasks" / "acme__calc-2" / "task.yaml").read_text())
    assert spec["repository"] == {"url": f"{base_url}/acme/calc", "commit": made["base"]}
    from fixloop.extras.efficacy.materialize import materialize

    clone = tmp_path / "clone"
    assert materialize(load_corpus(corpus).tasks[0], clone) == made["base"]
    assert (clone / "docs" / "README.md").is_symlink()  # kept as git has it
    assert (clone / "bin" / "check.sh").stat().st_mode & 0o111


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "instance_id": "acme__calc-9",
        "repo": "acme/calc",
        "base_commit": "0" * 40,
        "problem_statement": "add() subtracts",
        "patch": "diff",
        "test_patch": "diff",
        "FAIL_TO_PASS": '["tests/test_add.py::test_add"]',
        "PASS_TO_PASS": "[]",
    }
    record.update(changes)
    return {key: value for key, value in record.items() if value is not None}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            _record(patch=None),
            "instances.jsonl:2:1: swebench: instance acme__calc-9: patch: missing",
        ),
        (
            _record(FAIL_TO_PASS="[not json"),
            "instances.jsonl:2:{FAIL_TO_PASS}: swebench: instance acme__calc-9: FAIL_TO_PASS: "
            "a list of test ids, or a JSON-encoded one",
        ),
        (
            _record(FAIL_TO_PASS=["test_add"]),
            "instance acme__calc-9: FAIL_TO_PASS: 'test_add' is not a pytest node id",
        ),
        (_record(FAIL_TO_PASS="[]"), "FAIL_TO_PASS: empty: nothing would show the issue fixed"),
        (_record(base_commit="main"), "base_commit: a full commit id (40 hex digits) is expected"),
        (_record(), "base_commit: not in"),
        (_record(repo="acme/other"), "repo: no repository for acme/other in"),
        (_record(instance_id="../up"), "instance_id: '../up' is not a usable task id"),
    ],
)
def test_a_bad_record_is_one_located_line_and_nothing_is_written(
    made: dict[str, Any], tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    good = instances(made["repo"], made["base"])[0]
    source = write_jsonl(tmp_path / "instances.jsonl", [good, record])
    corpus = tmp_path / "corpus"
    with pytest.raises(FixloopError) as caught:
        import_instances(ImportOptions(source, str(made["folder"] / "mirror"), corpus))
    line = source.read_text().splitlines()[1]  # the column of a key is where it is written
    message = message.format(**{key: line.index(json.dumps(key)) + 1 for key in record})
    assert message in str(caught.value) and len(str(caught.value).splitlines()) == 1
    assert not corpus.exists()


def test_a_json_list_is_read_too_and_its_errors_located(
    made: dict[str, Any], tmp_path: Path
) -> None:
    good = instances(made["repo"], made["base"])[:2]
    source = tmp_path / "instances.json"
    source.write_text(json.dumps([*good, _record(repo="nope")], indent=1))
    with pytest.raises(FixloopError) as caught:
        import_instances(ImportOptions(source, str(made["folder"] / "mirror"), tmp_path / "c"))
    text = source.read_text()
    line = text[: text.index('"repo": "nope"')].count("\n") + 1
    assert f"instances.json:{line}:3: swebench: instance acme__calc-9: repo: 'nope'" in str(
        caught.value
    )
    source.write_text(json.dumps(good))
    assert import_instances(
        ImportOptions(source, str(made["folder"] / "mirror"), tmp_path / "d")
    ) == [
        "acme__calc-1",
        "acme__calc-2",
    ]


class _Toolbox:
    """The lent tools, each answer kept: what the agent could see."""

    def __init__(self, inner: Toolbox, answers: list[tuple[str, str]]) -> None:
        self.inner, self.answers = inner, answers

    @property
    def replaces(self) -> frozenset[str]:
        return self.inner.replaces

    def specs(self) -> Sequence[ToolSpec]:
        return self.inner.specs()

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        answer = self.inner.call(name, arguments)
        self.answers.append((name, answer.text))
        return answer


class _Spy(ScriptedBackend):
    def __init__(self, script: dict[str, Any]) -> None:
        super().__init__(script, origin="spy")
        self.answers: list[tuple[str, str]] = []

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        assert request.toolbox is not None
        spied = dataclasses.replace(request, toolbox=_Toolbox(request.toolbox, self.answers))
        return super().dispatch(spied)


def test_an_agent_looking_for_the_hidden_tests_and_the_gold_patch_finds_neither(
    made: dict[str, Any], pack: Pack
) -> None:
    script = _script("acme__calc-1")
    key = "issue-fixer/acme__calc-1/attempt-1"
    script[key]["tools"][:0] = [
        {"name": "list_files", "input": {}},
        {"name": "read_file", "input": {"path": "tests/test_add.py"}},  # test.patch adds it
        {"name": "search_code", "input": {"query": "test_add_small"}},  # test.patch's too
        {"name": "search_code", "input": {"query": "a + b"}},  # the gold patch's line
        {"name": "read_file", "input": {"path": "../../gold.patch"}},
        {"name": "read_file", "input": {"path": str(made["corpus"] / "tasks")}},
    ]
    spy = _Spy(script)
    options = BenchOptions(corpus=made["corpus"], open_sandbox=recorder(), sandbox="local")
    [task] = load_corpus(made["corpus"]).select(["acme__calc-1"])
    outcome = run_task(options, pack, task, lambda _: spy)
    assert outcome.status == "resolved", outcome.reason  # the hidden tests judged the fix
    listed, hidden, searched, fix_line, up, absolute = (text for _, text in spy.answers[:6])
    assert "calc/ops.py" in listed and "test_add.py" not in listed and "gold" not in listed
    assert "not_found" in hidden
    assert "test_add_small" not in searched.replace('"query": "test_add_small"', "")
    assert "ops.py" not in fix_line and "unsafe_path" in up and "unsafe_path" in absolute
