"""The corpus format: tasks checked, frozen by a digest; the shipped corpus covers the bug kinds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.extras.efficacy.conftest import CORPUS
from tests.helpers.swebench import git, make_repository

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


def _task_yaml(corpus: Path, task_id: str, text: str) -> None:
    (corpus / "tasks" / task_id / "task.yaml").write_text(text)


def test_meta_holds_anything_and_another_unknown_key_is_located(corpus_copy: Path) -> None:
    _task_yaml(
        corpus_copy,
        "regex",
        "kind: regex\ntitle: t\nmeta:\n  upstream: {url: x, pr: 12}\n  notes: [a, b]\n",
    )
    digest = load_corpus(corpus_copy, check_digest=False).digest
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\nmeta: {other: provenance}\n")
    # meta: is no input of a run: the digest does not move.
    assert load_corpus(corpus_copy, check_digest=False).digest == digest
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\n\n  # why\nprovenance: upstream\n")
    with pytest.raises(FixloopError) as caught:
        load_corpus(corpus_copy, check_digest=False)
    assert str(caught.value).endswith(
        "tasks/regex/task.yaml:5:1: corpus: provenance: unknown key; "
        "notes and provenance go under meta:"
    )
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\nrepository:\n  url: u\n  comit: x\n")
    with pytest.raises(FixloopError) as caught:
        load_corpus(corpus_copy, check_digest=False)
    assert "task.yaml:5:3: corpus: repository.comit: unknown key" in str(caught.value)


def test_the_digest_covers_what_a_run_uses(corpus_copy: Path) -> None:
    def digest() -> str:
        return load_corpus(corpus_copy, check_digest=False).digest

    first = digest()
    spec = corpus_copy / "corpus.yaml"
    spec.write_text(
        spec.read_text().replace("[python3, -m, unittest]", "[python3, -m, unittest, -v]")
    )
    second = digest()  # the corpus's test command is every task's
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\nimage: python:3.12\n")
    third = digest()
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\nimage: python:3.12\nsetup: [[make]]\n")
    fourth = digest()
    _task_yaml(
        corpus_copy,
        "regex",
        "# a comment\nkind: regex\ntitle: t\nimage: python:3.12\nsetup: [[make]]\n",
    )
    assert len({first, second, third, fourth}) == 4 and digest() == fourth


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("repository: {url: u, commit: main}\n", "repository.commit: String should match pattern"),
        (
            f"repository: {{url: u, path: p, commit: {'a' * 40}}}\n",
            "name the repository by url or by path, one of them",
        ),
        (
            f"repository: {{path: p, commit: {'a' * 40}}}\n",
            "task regex has both a repo/ folder and a repository: key",
        ),
    ],
)
def test_a_repository_is_named_once_by_a_full_commit(
    corpus_copy: Path, text: str, message: str
) -> None:
    _task_yaml(corpus_copy, "regex", "kind: regex\ntitle: t\n" + text)
    with pytest.raises(FixloopError) as caught:
        load_corpus(corpus_copy, check_digest=False)
    assert message in str(caught.value)


def test_a_vendored_repository_keeps_its_links_and_refuses_one_out(
    corpus_copy: Path, tmp_path: Path
) -> None:
    repo = corpus_copy / "tasks" / "regex" / "repo"
    (repo / "LINKED.md").symlink_to("web/slugs.py")
    task = load_corpus(corpus_copy, check_digest=False).select(["regex"])[0]
    built = tmp_path / "built"
    materialize(task, built)
    assert (built / "LINKED.md").is_symlink()
    (repo / "host").symlink_to("/etc/hostname")
    with pytest.raises(FixloopError) as caught:
        materialize(task, tmp_path / "again")
    assert (
        "task regex: repo/ holds host -> /etc/hostname: a symbolic link that leads outside"
        in str(caught.value)
    )


def test_a_cloned_repository_with_a_link_out_is_refused(corpus_copy: Path, tmp_path: Path) -> None:
    upstream, base = make_repository(tmp_path / "upstream")
    (upstream / "escape").symlink_to("../../outside")
    git(upstream, "add", "escape")
    git(upstream, "commit", "--quiet", "-m", "a link out")
    bad = git(upstream, "rev-parse", "HEAD").strip()
    shutil.rmtree(corpus_copy / "tasks" / "regex" / "repo")
    for commit, built in ((base, True), (bad, False)):
        _task_yaml(
            corpus_copy,
            "regex",
            f"kind: regex\ntitle: t\nrepository: {{path: {upstream}, commit: {commit}}}\n",
        )
        task = load_corpus(corpus_copy, check_digest=False).select(["regex"])[0]
        target = tmp_path / commit
        if built:
            assert materialize(task, target) == base
            assert (target / "docs" / "README.md").is_symlink()
            assert git(target, "branch", "--show-current").strip() == "main"
            assert git(target, "remote").strip() == ""
            continue
        with pytest.raises(FixloopError) as caught:
            materialize(task, target)
        assert f"commit {bad[:12]} holds escape -> ../../outside" in str(caught.value)


def test_a_link_is_in_the_digest_as_a_link_not_as_what_it_points_to(
    corpus_copy: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "host.txt"
    outside.write_text("one")
    (corpus_copy / "tasks" / "regex" / "repo" / "host").symlink_to(outside)
    first = load_corpus(corpus_copy, check_digest=False).digest
    outside.write_text("two")  # a host file's bytes never reach the digest
    assert load_corpus(corpus_copy, check_digest=False).digest == first
