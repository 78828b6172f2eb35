"""The corpus format: tasks checked, frozen by a digest; the shipped corpus covers the bug kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.extras.efficacy.conftest import CORPUS

from fixloop.diagnostics import FixloopError
from fixloop.extras.efficacy.corpus import freeze, load_corpus
from fixloop.extras.efficacy.materialize import materialize

KINDS = {
    "off-by-one",
    "wrong condition",
    "missing None check",
    "wrong exception",
    "string formatting",
    "state leak",
    "regex",
    "API misuse",
}


def test_the_shipped_corpus_is_frozen_and_covers_eight_kinds_of_bug() -> None:
    corpus = load_corpus(CORPUS)
    assert len(corpus.tasks) >= 8
    assert {task.spec.kind for task in corpus.tasks} >= KINDS
    for task in corpus.tasks:
        assert task.issue.read_text().strip() and task.hidden is not None
        assert task.answer.is_file()
        # The hidden tests are nowhere in the repository the agent works on.
        hidden = {path.name for path in task.hidden.rglob("*.py")}
        assert hidden.isdisjoint(path.name for path in task.repo.rglob("*.py"))


def test_a_changed_corpus_is_refused_until_frozen_again(corpus_copy: Path) -> None:
    issue = corpus_copy / "tasks" / "regex" / "issue.md"
    issue.write_text(issue.read_text() + "\nAlso: trailing hyphens.\n")
    with pytest.raises(FixloopError) as caught:
        load_corpus(corpus_copy)
    assert "corpus.yaml:1:1: corpus: the corpus is not frozen as it is" in str(caught.value)
    digest = freeze(corpus_copy)
    assert load_corpus(corpus_copy).digest == digest != load_corpus(CORPUS).digest


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("corpus.yaml", "  - regex\n", "  - Regex!\n"), "tasks.6: String should match pattern"),
        (("tasks/regex/task.yaml", "kind: regex\n", ""), "kind: Field required"),
        (("corpus.yaml", "tests:\n", "tests: [\n"), "invalid YAML"),
    ],
)
def test_a_broken_corpus_is_one_line_naming_the_file(
    corpus_copy: Path, edit: tuple[str, str, str], message: str
) -> None:
    name, old, new = edit
    path = corpus_copy / name
    path.write_text(path.read_text().replace(old, new))
    with pytest.raises(FixloopError) as caught:
        load_corpus(corpus_copy, check_digest=False)
    assert name.split("/")[-1] in str(caught.value) and message in str(caught.value)


def test_a_task_repository_is_the_same_commit_everywhere(tmp_path: Path) -> None:
    task = load_corpus(CORPUS).tasks[0]
    first = materialize(task, tmp_path / "one")
    second = materialize(task, tmp_path / "two")
    assert first == second and len(first) == 40
