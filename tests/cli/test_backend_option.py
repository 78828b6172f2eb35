"""The shared --backend and run budget flags."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from fixloop.agents.claude import ClaudeBackend
from fixloop.agents.scripted import ScriptedBackend
from fixloop.cli.backend_option import add_backend_arguments, backend_from_args, budget_from_args
from fixloop.diagnostics import FixloopError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fixloop demo")
    add_backend_arguments(parser)
    return parser.parse_args(argv)


def test_claude_is_a_real_backend_and_takes_no_script() -> None:
    assert isinstance(backend_from_args(parse("--backend", "claude"), "demo"), ClaudeBackend)
    with pytest.raises(FixloopError, match="--script is for --backend scripted"):
        backend_from_args(parse("--backend", "claude", "--script", "s.yaml"), "demo")


def test_scripted_needs_its_script(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("fixer/1/round-1:\n  output: {files_changed: [a.py], summary: ok}\n")

    assert isinstance(backend_from_args(parse("--script", str(script)), "demo"), ScriptedBackend)
    with pytest.raises(FixloopError, match="needs --script FILE") as caught:
        backend_from_args(parse("--backend", "scripted"), "demo")
    assert caught.value.exit_code == 2


def test_the_default_is_the_real_model_unless_a_script_is_given(tmp_path: Path) -> None:
    assert isinstance(backend_from_args(parse(), "demo"), ClaudeBackend)
    script = tmp_path / "script.yaml"
    script.write_text("{}\n")
    assert isinstance(backend_from_args(parse("--script", str(script)), "demo"), ScriptedBackend)


def test_budget_flags_make_one_run_budget() -> None:
    assert budget_from_args(parse()) is None
    budget = budget_from_args(parse("--max-cost-usd", "2.5", "--max-wall-s", "600"))
    assert budget is not None
    assert (budget.max_cost_usd, budget.max_wall_s) == (2.5, 600.0)


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_a_bad_budget_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        parse("--max-cost-usd", value)
    assert caught.value.code == 2
    assert "--max-cost-usd" in capsys.readouterr().err
