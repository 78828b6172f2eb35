"""Promises about the documentation: one index of every page, and user pages that speak of the
product (where a design came from is history, kept on the history pages)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers import cli
from tests.helpers.gitrepo import git

from fixloop.documents.blocks import FencedBlock, parse_markdown
from fixloop.documents.source import load_document

DOCS = REPO_ROOT / "docs"
INDEX = DOCS / "README.md"
HISTORY_HEADING = "## History and measurements"
HISTORY_WORDS = re.compile(
    r"\bseeds?\b|(?<![-\w])issue #?\d+\b|\blead's decision\b|\bthe original('s| loop)",
    re.IGNORECASE,
)


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)#\s]+\.md)\)", text)


def test_the_index_lists_every_page_and_only_pages_that_exist() -> None:
    listed = _links(INDEX.read_text(encoding="utf-8"))
    pages = sorted(p.name for p in DOCS.glob("*.md") if p != INDEX)
    assert sorted(name for name in listed if "/" not in name) == pages
    for name in listed:
        assert (DOCS / name).is_file(), name
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/README.md)" in readme


def history_pages() -> set[str]:
    text = INDEX.read_text(encoding="utf-8")
    assert HISTORY_HEADING in text
    return set(_links(text.split(HISTORY_HEADING, 1)[1].split("\n## ", 1)[0]))


def test_user_pages_say_what_things_are_not_where_they_came_from() -> None:
    history = history_pages()
    assert "provenance.md" in history
    user_pages = [REPO_ROOT / "README.md", INDEX]
    user_pages += [p for p in sorted(DOCS.glob("*.md")) if p.name not in history]
    found = []
    for page in user_pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY_WORDS.search(line):
                found.append(f"{page.relative_to(REPO_ROOT)}:{number}: {line.strip()}")
    assert found == [], "history belongs in docs/provenance.md:\n" + "\n".join(found)


# docs/scripted-backend.md: a minimal script per workflow, run as the page writes it. The page's
# fences say what they are: `LANG file=PATH` a file to write (relative to the example
# repository; `../` next to it), `bash run` the commands, `text prints` lines the run must print.
SCRIPTED = DOCS / "scripted-backend.md"
EXAMPLE = "The example repository"
WORKFLOWS = ("review", "review-fix", "fix-findings", "fix-engine", "execute-wave", "fix-issue")


def _sections() -> dict[str, list[FencedBlock]]:
    document = parse_markdown(load_document(SCRIPTED))
    sections: dict[str, list[FencedBlock]] = {}
    for block in document.blocks:
        if block.section:
            sections.setdefault(block.section[-1], []).append(block)
    return sections


def _files(blocks: list[FencedBlock]) -> dict[str, str]:
    files = {}
    for block in blocks:
        words = block.info.split()
        for word in words[1:]:
            if word.startswith("file="):
                files[word.removeprefix("file=")] = block.content
    return files


def test_the_page_has_a_script_for_every_workflow() -> None:
    sections = _sections()
    assert EXAMPLE in sections
    for workflow in WORKFLOWS:
        infos = [block.info for block in sections.get(workflow, [])]
        assert "bash run" in infos, workflow
        assert "text prints" in infos, workflow
        assert any(info.startswith("yaml file=../") for info in infos), workflow
    from fixloop.workflows.registry import WORKFLOWS as REGISTERED

    assert set(WORKFLOWS) == set(REGISTERED), "a new workflow needs its minimal script here"


@pytest.mark.parametrize("workflow", WORKFLOWS)
def test_each_documented_script_runs_as_written(workflow: str, tmp_path: Path) -> None:
    sections = _sections()
    repo = tmp_path / "calc"
    repo.mkdir()
    for name, content in _files(sections[EXAMPLE]).items():
        (repo / name).write_text(content, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "calc")
    blocks = sections[workflow]
    for name, content in _files(blocks).items():
        target = (repo / name).resolve()
        assert target.is_relative_to(tmp_path), name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    (run,) = [b for b in blocks if b.info == "bash run"]
    (prints,) = [b for b in blocks if b.info == "text prints"]
    output = ""
    for line in run.content.splitlines():
        argv = shlex.split(line)
        assert argv[0] == "fixloop", line
        done = cli.fixloop(*argv[1:], cwd=repo)
        output += done.stdout + done.stderr
        assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
    for expected in prints.content.splitlines():
        assert expected in output, f"{expected!r} not in:\n{output}"
