from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.workflows.kernel.choices import Question
from fixloop.workflows.kernel.scope_policy import (
    APPROVE,
    DEFER,
    REJECT,
    answer_expansion,
    protected_reason,
)


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        ".gitignore",
        "sub/.git/config",
        ".gitattributes",
        ".env",
        ".env.production",
        "deploy/server.pem",
        "home/.ssh/id_rsa",
        "agents/fixer.md",
        "workflows/review-fix.md",
        ".claude/settings.json",
        "Jenkinsfile",
    ],
)
def test_protected_files(path: str) -> None:
    assert protected_reason(path) is not None


@pytest.mark.parametrize("path", ["src/app.py", "docs/agents.md", "environment.py", "keys.py"])
def test_ordinary_files_are_not_protected(path: str) -> None:
    assert protected_reason(path) is None


class Answers:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[Question] = []

    def ask(self, question: Question) -> str | None:
        self.asked.append(question)
        return self.answer


def test_approve_never_grants_a_protected_file(tmp_path: Path) -> None:
    notes: list[str] = []
    files = ["src/a.py", ".github/workflows/ci.yml"]
    chosen = answer_expansion("approve", Answers(APPROVE), files, "?", repo=tmp_path, notes=notes)
    assert chosen == REJECT
    assert "CI configuration" in notes[0]


def test_a_person_may_grant_a_protected_file_after_being_warned(tmp_path: Path) -> None:
    person = Answers(APPROVE)
    chosen = answer_expansion("ask", person, [".env"], "?", repo=tmp_path, notes=[])
    assert chosen == APPROVE
    assert "PROTECTED" in person.asked[0].text
    assert person.asked[0].options[0] == REJECT  # recommended: no


def test_nobody_to_ask_defers(tmp_path: Path) -> None:
    notes: list[str] = []
    chosen = answer_expansion("ask", Answers(None), ["src/a.py"], "?", repo=tmp_path, notes=notes)
    assert chosen == DEFER
    assert "no terminal" in notes[0]
