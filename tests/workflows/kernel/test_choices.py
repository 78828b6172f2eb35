"""Asking the user: on a terminal, never when there is none, the recommendation first."""

from __future__ import annotations

import io

from fixloop.workflows.kernel.choices import Question, ScriptedPrompter, TerminalPrompter, question


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_recommended_option_comes_first() -> None:
    asked = question("found", ["a", "b", "c"], "c")
    assert asked == Question("found", ("c", "a", "b"), 0)


def test_a_terminal_is_asked_and_labels_the_recommendation() -> None:
    out = io.StringIO()
    prompter = TerminalPrompter(FakeTerminal("9\n2\n"), out)
    assert prompter.ask(question("3 hunks in a.py", ["x", "y"], "x")) == "y"
    shown = out.getvalue()
    assert "3 hunks in a.py" in shown
    assert "1. x (Recommended)" in shown
    assert shown.count("Choose 1-2") == 2  # "9" was not an option: asked again


def test_enter_takes_the_recommendation() -> None:
    prompter = TerminalPrompter(FakeTerminal("\n"), io.StringIO())
    assert prompter.ask(question("q", ["x", "y"], "y")) == "y"


def test_without_a_terminal_nobody_is_asked() -> None:
    out = io.StringIO()
    assert TerminalPrompter(io.StringIO("1\n"), out).ask(question("q", ["x"], "x")) is None
    assert out.getvalue() == ""


def test_scripted_answers_are_checked_against_the_options() -> None:
    prompter = ScriptedPrompter(["y", None])
    assert prompter.ask(question("q", ["x", "y"], "x")) == "y"
    assert prompter.ask(question("q", ["x", "y"], "x")) is None
    assert prompter.ask(question("q", ["x", "y"], "x")) is None
    assert len(prompter.asked) == 3
