"""Asking the user a question (Claude Code's AskUserQuestion, headless): a terminal or a policy.

A workflow asks through a `Prompter`. `TerminalPrompter` asks on the terminal when stdin is one,
and answers None when it is not: a headless run never blocks on a question nobody can see. The
caller then applies its policy flag (`--on-prestaged`, `--on-scope-expansion`), whose `ask`
value falls back to the safest answer for that question, documented where it is used.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TextIO


@dataclass(frozen=True)
class Question:
    text: str  # one line: what was found
    options: tuple[str, ...]  # labels, the recommended one first
    recommended: int = 0  # index into options


class Prompter(Protocol):
    def ask(self, question: Question) -> str | None:
        """The chosen option label, or None when nobody can be asked."""
        ...


class TerminalPrompter:
    """Asks on the terminal; answers None when stdin is not a TTY."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stderr

    def ask(self, question: Question) -> str | None:
        if not self.stdin.isatty():
            return None
        print(question.text, file=self.stdout)
        for number, label in enumerate(question.options, start=1):
            mark = " (Recommended)" if number - 1 == question.recommended else ""
            print(f"  {number}. {label}{mark}", file=self.stdout)
        while True:
            print(f"Choose 1-{len(question.options)} [1]: ", end="", file=self.stdout, flush=True)
            line = self.stdin.readline()
            if not line:
                return None
            answer = line.strip() or "1"
            if answer.isdigit() and 1 <= int(answer) <= len(question.options):
                return question.options[int(answer) - 1]


class ScriptedPrompter:
    """Answers from a list, in order, and records what it was asked (for tests and demos)."""

    def __init__(self, answers: Sequence[str | None]) -> None:
        self.answers = list(answers)
        self.asked: list[Question] = []

    def ask(self, question: Question) -> str | None:
        self.asked.append(question)
        if not self.answers:
            return None
        answer = self.answers.pop(0)
        if answer is not None and answer not in question.options:
            raise ValueError(f"scripted answer {answer!r} is not one of {question.options}")
        return answer


def question(text: str, labels: Sequence[str], recommended: str) -> Question:
    """A question with `recommended` moved to the front, as the fix-findings document asks for."""
    ordered = [recommended, *[label for label in labels if label != recommended]]
    return Question(text, tuple(ordered), 0)
