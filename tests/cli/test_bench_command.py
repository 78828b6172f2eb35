"""`fixloop bench efficacy` through the real CLI: the table, the envelope, a corpus refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml
from tests.conftest import REPO_ROOT
from tests.helpers import cli

from fixloop.extras.testing.chat_replay import ChatReplay
from fixloop.extras.testing.chat_server import SCRIPTED_KEY, ChatServer

CORPUS = REPO_ROOT / "bench" / "efficacy" / "corpus"


def fixloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli.fixloop(*args, cwd=cwd)


def test_two_tasks_with_the_scripted_answers(tmp_path: Path) -> None:
    table = tmp_path / "efficacy.md"
    done = fixloop(
        "bench",
        "efficacy",
        str(CORPUS),
        "--task",
        "regex",
        "--task",
        "api-misuse",
        "--markdown",
        str(table),
        "--json",
        "--workers",
        "2",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["command"], out["counts"]) == ("bench efficacy", {"resolved": 2})
    assert [item["id"] for item in out["items"]] == ["regex", "api-misuse"]
    assert out["result"]["totals"]["resolved_rate"] == 1.0
    assert out["result"]["markdown"] == table.read_text()
    assert "| regex | regex | resolved |" in table.read_text()
    # Progress per task, k of N: a long bench says how far it is.
    assert "efficacy [1/2] regex: resolved" in done.stderr
    assert "efficacy [2/2] api-misuse: resolved" in done.stderr
    assert done.stderr.index("[1/2] regex") < done.stderr.index("[2/2] api-misuse")


def test_workers_must_be_a_whole_number_of_one_or_more(tmp_path: Path) -> None:
    for bad in ("0", "two", "-1"):
        done = fixloop("bench", "efficacy", str(CORPUS), "--workers", bad, cwd=tmp_path)
        assert done.returncode == 2
        assert "--workers: expected a whole number >= 1" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_corpus_changed_since_it_was_frozen_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns("__pycache__"))
    (corpus / "tasks/regex/issue.md").write_text("# a different issue\n")
    done = fixloop("bench", "efficacy", str(corpus), cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("corpus/corpus.yaml:1:1: corpus: the corpus is not frozen as it is")
    frozen = fixloop("bench", "efficacy", str(corpus), "--freeze", cwd=tmp_path)
    assert frozen.returncode == 0 and "digest sha256:" in frozen.stdout
    again = fixloop(
        "bench",
        "efficacy",
        str(corpus),
        "--task",
        "regex",
        "--patches",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert "| regex | regex | unresolved |" in again.stdout  # no regex.patch there


def test_a_task_with_the_openai_backend_on_loopback(tmp_path: Path) -> None:
    """The same answer played as Chat Completions tool calls: `--backend openai --base-url`."""
    answer = yaml.safe_load((CORPUS / "tasks/regex/answer.yaml").read_text())
    replay = ChatReplay(answer)
    with ChatServer(replay) as server:
        done = cli.fixloop(
            "bench",
            "efficacy",
            str(CORPUS),
            "--task",
            "regex",
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "scripted-model",
            "--json",
            cwd=tmp_path,
            env={**os.environ, "OPENAI_API_KEY": SCRIPTED_KEY},
        )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["counts"] == {"resolved": 1} and replay.unplayed() == []
    assert {r.model for r in server.requests} == {"scripted-model"}


def test_validate_prints_a_line_per_task_and_exits_1_on_an_invalid_one(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus, ignore=shutil.ignore_patterns("__pycache__"))
    (corpus / "tasks/api-misuse/gold.patch").unlink()
    assert fixloop("bench", "efficacy", str(corpus), "--freeze", cwd=tmp_path).returncode == 0
    argv = ["bench", "efficacy", "validate", str(corpus), "--task", "regex", "--task", "api-misuse"]
    done = fixloop(*argv, "--sandbox", "local", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "valid   regex: fail-to-pass 1 fail at the base; with the reference patch "
        "fail-to-pass 1/1 and pass-to-pass 3/3 pass",
        "INVALID api-misuse: no reference patch (gold.patch)",
        "1 of 2 tasks valid; invalid: api-misuse",
    ]
    as_json = fixloop(*argv[:4], "--task", "regex", "--sandbox", "local", "--json", cwd=tmp_path)
    out = json.loads(as_json.stdout)
    assert as_json.returncode == 0 and out["command"] == "bench efficacy validate"
    assert out["result"]["summary"] == "1 of 1 tasks valid"


def test_import_of_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    source = tmp_path / "instances.jsonl"
    source.write_text('{"instance_id": "a__b-1"}\n{not json\n')
    done = fixloop(
        "bench",
        "efficacy",
        "import",
        source.name,
        "--repos",
        str(tmp_path),
        "--out",
        "c",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "instances.jsonl:2:2: swebench: invalid JSON: "
        "Expecting property name enclosed in double quotes"
    ]
    missing = fixloop("bench", "efficacy", "import", "x.json", "--out", "c", cwd=tmp_path)
    assert missing.returncode == 2 and "--repos" in missing.stderr
    assert not (tmp_path / "c").exists()
