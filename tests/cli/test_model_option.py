"""`--model-profile` and `--model ROLE=MODEL` on every workflow command, `fixloop models`, and
the models a run used in `runs show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.cli import fixloop
from tests.helpers.gitrepo import UserRepo
from tests.helpers.reviews import APP_FIX, REVIEW_REL, finding, review_text, write_review

from fixloop.workflows.registry import WORKFLOWS

# Each workflow's positional arguments, enough to parse (the choice is checked before they are).
POSITIONAL = {"review": [], "execute-wave": ["tasks.json"]}


def _argv(name: str, *more: str) -> list[str]:
    return [name, *POSITIONAL.get(name, ["input.md"]), *more]


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_every_workflow_command_takes_the_choice(name: str, tmp_path: Path) -> None:
    shown = fixloop(name, "--help", cwd=tmp_path)
    assert "--model-profile quality|balanced|budget" in shown.stdout
    assert "--model [ROLE=]MODEL" in shown.stdout

    bad = fixloop(*_argv(name, "--model-profile", "cheap"), cwd=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        "--model-profile:1:1: model-profile: unknown profile 'cheap': use quality, balanced "
        "or budget\n"
    )
    role = fixloop(*_argv(name, "--model", "critic=opus"), cwd=tmp_path)
    assert role.returncode == 2 and role.stderr.startswith(
        "--model:1:1: model: unknown role 'critic': one of executor, fix-loop, fixer"
    )
    assert len(role.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("settings", "options", "used"),
    [
        # The project's profile; a --model for a role this run does not call shows nowhere.
        ('model-profile = "budget"\n', ["--model", "verifier=opus"], "sonnet"),
        # The command line's profile, and one role over it.
        (
            'model-profile = "budget"\n',
            ["--model-profile", "quality", "--model", "fixer=claude-opus-4-1"],
            "claude-opus-4-1",
        ),
        ("", [], "opus"),  # nothing chosen: the fixer document's own line
    ],
)
def test_a_run_records_the_models_and_runs_show_shows_them(
    user_repo: UserRepo, tmp_path: Path, settings: str, options: list[str], used: str
) -> None:
    repo = user_repo.path
    write_review(repo, review_text(finding("CR-01", "add subtracts", "src/app.py:2")))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"fixer/CR-01/iteration-1": APP_FIX}))
    (tmp_path / "fixloop.toml").write_text(settings)  # the settings found above the repository

    done = fixloop("review-fix", REVIEW_REL, "--script", str(script), *options, cwd=repo)

    assert done.returncode == 0, done.stderr
    shown = fixloop("runs", "show", "latest", "--json", cwd=repo)
    assert json.loads(shown.stdout)["result"]["models"] == {"fixer": used}
    text = fixloop("runs", "show", "latest", cwd=repo).stdout.splitlines()
    assert f"models: fixer={used}" in text


def test_fixloop_models_says_what_applies_and_why(tmp_path: Path) -> None:
    (tmp_path / "fixloop.toml").write_text('model-profile = "budget"\n[models]\nfixer = "opus"\n')

    done = fixloop("models", "--json", "--model", "reviewer=sonnet", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["command"] == "models"
    assert envelope["counts"] == {"--model": 1, "settings": 1, "profile": 5}
    data = envelope["result"]
    assert data["profile"] == "budget"
    assert data["roles"]["fixer"] == {"model": "opus", "from": "settings"}
    assert data["roles"]["reviewer"] == {"model": "sonnet", "from": "--model"}
    assert data["roles"]["verifier"] == {"model": "haiku", "from": "profile budget"}
    plain = fixloop("models", "--model-profile", "quality", cwd=tmp_path).stdout
    assert plain.splitlines()[0] == "profile: quality"
    assert "verifier     opus       profile quality" in plain
