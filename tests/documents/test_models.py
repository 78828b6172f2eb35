"""Which model each role runs on: profiles, settings, `--model`, and the checks on each."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.diagnostics import FixloopError
from fixloop.documents.config import find_config
from fixloop.documents.models import (
    choose_models,
    every_role_model,
    parse_model_option,
    profiles,
)
from fixloop.documents.pack import load_pack

ROLES = ("executor", "fix-loop", "fixer", "issue-fixer", "reviewer", "verifier", "wave-runner")


def _problem(call: object) -> str:
    assert isinstance(call, pytest.ExceptionInfo)
    error = call.value
    assert isinstance(error, FixloopError)
    return str(error)


def test_every_profile_names_every_shipped_role_and_balanced_is_what_they_say() -> None:
    pack, _ = load_pack(REPO_ROOT)
    assert list(profiles()) == ["quality", "balanced", "budget"]
    for table in profiles().values():
        assert sorted(table) == sorted(pack.agents)
    assert profiles()["balanced"] == {r: a.spec.model for r, a in pack.agents.items()}
    assert profiles()["budget"] != profiles()["balanced"] != profiles()["quality"]


def test_command_line_over_settings_over_profile_over_the_documents(tmp_path: Path) -> None:
    (tmp_path / "fixloop.toml").write_text(
        'model-profile = "budget"\n[models]\nverifier = "opus"\nfixer = "sonnet"\n'
    )
    config = find_config(tmp_path)

    choice = choose_models(ROLES, options=["fixer=claude-opus-4-1"], config=config)
    assert choice.profile == "budget"
    assert choice.model("fixer", "opus") == "claude-opus-4-1"  # --model
    assert choice.model("verifier", "sonnet") == "opus"  # the settings' table
    assert choice.model("reviewer", "sonnet") == "haiku"  # the settings' profile
    assert choice.sources["reviewer"] == "profile budget"
    # A profile on the command line replaces the settings' one; the settings' pins stay.
    quality = choose_models(ROLES, profile="quality", config=config)
    assert (quality.model("reviewer", None), quality.model("fixer", None)) == ("opus", "sonnet")
    # Nothing chosen: each role keeps its document's line.
    assert choose_models(ROLES).model("verifier", "sonnet") == "sonnet"


@pytest.mark.parametrize(
    ("options", "profile", "expected"),
    [
        (
            (),
            "fast",
            "--model-profile:1:1: model-profile: unknown profile 'fast': use quality, "
            "balanced or budget",
        ),
        (
            ("fixr=opus",),
            None,
            "--model:1:1: model: unknown role 'fixr': one of executor, "
            "fix-loop, fixer, issue-fixer, reviewer, verifier, wave-runner",
        ),
        (("fixer=gpt-4",), None, "--model:1:1: model: unknown model 'gpt-4' for fixer"),
        (
            ("fixer",),
            None,
            "--model:1:1: model: unknown model 'fixer' for every role: use inherit, ",
        ),
        (("=opus",), None, "--model:1:1: model: expected [ROLE=]MODEL, got '=opus'"),
    ],
)
def test_a_bad_choice_on_the_command_line_is_one_line(
    options: tuple[str, ...], profile: str | None, expected: str
) -> None:
    with pytest.raises(FixloopError) as raised:
        choose_models(ROLES, options=options, profile=profile)
    assert _problem(raised).startswith(expected)


def test_a_bad_choice_in_the_settings_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.fixloop]\nmodel-profile = "cheap"\n'
    )
    with pytest.raises(FixloopError) as raised:
        choose_models(ROLES, config=find_config(tmp_path))
    assert _problem(raised).endswith(
        "pyproject.toml:5:1: model-profile: unknown profile 'cheap': use quality, balanced "
        "or budget"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.fixloop.models]\n\nreviewr = "haiku"\n')
    with pytest.raises(FixloopError) as raised:
        choose_models(ROLES, config=find_config(tmp_path))
    assert "pyproject.toml:3:1: model: unknown role 'reviewr'" in _problem(raised)


def test_model_option_keeps_an_equals_sign_in_the_model_out() -> None:
    assert parse_model_option(" fixer = opus ") == ("fixer", "opus")
    with pytest.raises(FixloopError):
        parse_model_option("=opus")


def test_a_model_without_a_role_is_every_roles() -> None:
    choice = choose_models(ROLES, options=("haiku", "fixer=opus"), profile="quality")
    assert choice.chosen["fixer"] == "opus"
    assert {choice.chosen[role] for role in ROLES if role != "fixer"} == {"haiku"}
    assert choice.sources["verifier"] == "--model"


def test_a_server_backend_takes_its_own_model_names_and_keeps_the_bare_one() -> None:
    choice = choose_models(
        ROLES, options=("deepseek-chat", "fixer=deepseek-reasoner"), server_names=True
    )
    assert choice.chosen == {"fixer": "deepseek-reasoner"}
    assert every_role_model(("deepseek-chat", "fixer=deepseek-reasoner")) == "deepseek-chat"
