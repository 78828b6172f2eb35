"""Every command's `--json` is the one envelope (`cli/envelope.py`), walked from the CLI's own
command table: a command added without `--json`, or without a case here, fails this file.

Each case runs the real command line in a process of its own, on a real repository where it
needs one; a case that stops on bad input (exit 2) checks that the failure is the envelope too,
its diagnostics as the items.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import cli
from tests.helpers.gitrepo import UserRepo, make_user_repo
from tests.helpers.reviews import REVIEW_REL, review_text, write_review

from fixloop.cli.envelope import KEYS
from fixloop.cli.main import build_parser

REPO_ROOT = Path(__file__).resolve().parents[2]
VARS = REPO_ROOT / "tests/documents/goldens/render/fixer.vars.json"

# Commands whose output is not fixloop's to shape, with why.
NO_ENVELOPE = {
    "sandbox exec": "relays the command's own output, byte for byte, to the step that ran it",
}


def leaf_commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(`runs show`, its parser) for every command a user can run, from the parser itself."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from leaf_commands(sub, f"{prefix} {name}".strip())
            return
    yield prefix, parser


Case = Callable[[Path], tuple[list[str], Path]]  # a repository → (argv, cwd)


def _in_repo(*args: str) -> Case:
    return lambda repo: ([*args, "--repo", str(repo)], repo)


def _at_root(*args: str) -> Case:
    return lambda repo: (list(args), REPO_ROOT)


def _demo(repo: Path) -> tuple[list[str], Path]:
    return ["demo", "--dir", str(repo.parent / "demo")], repo.parent


def _clean_review(repo: Path) -> tuple[list[str], Path]:
    write_review(repo, review_text(status="clean"))
    return ["review-fix", REVIEW_REL, "--script", str(_empty_script(repo))], repo


def _empty_script(repo: Path) -> Path:
    script = repo.parent / "script.json"
    script.write_text("{}")
    return script


def _missing(command: str) -> Case:
    """A workflow given an input file that is not there: exit 2, as an envelope."""
    return lambda repo: ([command, str(repo.parent / "nope"), "--repo", str(repo)], repo)


def _screenshot(repo: Path) -> tuple[list[str], Path]:
    page = repo.parent / "page.html"
    page.write_text("<html><body style='background:#0a0'>hi</body></html>")
    out = repo.parent / "page.png"
    return ["browser", "screenshot", page.as_uri(), "--out", str(out), "--viewport", "64x48"], repo


CASES: dict[str, Case] = {
    "validate": _at_root("validate"),
    "agents list": _at_root("agents", "list"),
    "render": _at_root("render", "fixer", "--vars", str(VARS)),
    "schema": _at_root("schema", "Finding"),
    "step run": _in_repo("step", "run", "git-protocol", "preflight"),
    "step list": _at_root("step", "list", "git-protocol"),
    "recover": _in_repo("recover"),
    "models": _in_repo("models"),
    "runs list": _in_repo("runs", "list"),
    "runs prune": _in_repo("runs", "prune", "--dry-run"),
    "runs show": _in_repo("runs", "show", "latest"),
    "check": _at_root("check", "workflows/git-protocol.md"),
    "rule": _at_root("rule", "unexported-env"),
    "demo": _demo,
    "browser screenshot": _screenshot,
    "browser cleanup": _at_root("browser", "cleanup", "--max-age", "1000000"),
    "bench efficacy": lambda repo: (["bench", "efficacy", str(repo.parent / "no-corpus")], repo),
    "init": _in_repo("init", "--claude", "--dry-run"),
    "review-fix": _clean_review,
    "fix-findings": _missing("fix-findings"),
    "fix-engine": _missing("fix-engine"),
    "execute-wave": _missing("execute-wave"),
    "fix-issue": _missing("fix-issue"),
    "review": lambda repo: (["review", "nope.py", "--repo", str(repo)], repo),
}
SLOW = {"demo", "browser screenshot"}

COMMANDS = dict(leaf_commands(build_parser()))


def test_every_command_takes_json_and_has_a_case_here() -> None:
    without = [
        name
        for name, parser in COMMANDS.items()
        if name not in NO_ENVELOPE
        and not any("--json" in action.option_strings for action in parser._actions)
    ]
    assert without == [], f"commands without --json: {without}"
    assert sorted(set(COMMANDS) - set(NO_ENVELOPE)) == sorted(CASES), "a command has no case"


@pytest.fixture
def repo(tmp_path: Path) -> UserRepo:
    user = make_user_repo(tmp_path / "repo")
    # One recorded run, so `runs show latest` and `runs list` have something to show.
    cli.fixloop("step", "run", "git-protocol", "preflight", "--repo", str(user.path), cwd=tmp_path)
    return user


def _params() -> list[object]:
    marks = {"demo": [pytest.mark.slow], "browser screenshot": [pytest.mark.needs("chromium")]}
    return [pytest.param(name, marks=marks.get(name, []), id=name) for name in CASES]


@pytest.mark.parametrize("command", _params())
def test_json_is_the_one_envelope(command: str, repo: UserRepo) -> None:
    argv, cwd = CASES[command](repo.path)
    done: subprocess.CompletedProcess[str] = cli.fixloop(*argv, "--json", cwd=cwd, timeout=300)

    envelope = json.loads(done.stdout)  # stdout is the envelope and nothing else
    assert tuple(envelope) == KEYS
    assert envelope["command"] == command
    assert envelope["exit_code"] == done.returncode, done.stderr
    assert envelope["ok"] is (done.returncode == 0)
    assert isinstance(envelope["run_id"], str) and isinstance(envelope["result"], dict)
    for item in envelope["items"]:
        assert isinstance(item["id"], str) and item["id"], item
        assert isinstance(item["status"], str) and item["status"], item
    assert envelope["counts"] == dict(Counter(item["status"] for item in envelope["items"]))
    if done.returncode == 2:  # bad input: its one line on stderr, the same problem as an item
        assert envelope["items"] and envelope["items"][0]["rule"], envelope
        assert envelope["items"][0]["message"] in done.stderr
    else:
        assert done.returncode in (0, 1), done.stderr


@pytest.mark.parametrize("command", sorted(set(CASES)))
def test_a_command_line_argparse_refuses_is_the_envelope_too(command: str, tmp_path: Path) -> None:
    done = cli.fixloop(*command.split(), "--no-such-flag", "--json", cwd=tmp_path)

    envelope = json.loads(done.stdout)
    assert (done.returncode, tuple(envelope), envelope["command"]) == (2, KEYS, command)
    (problem,) = envelope["items"]
    assert (problem["rule"], problem["status"]) == ("usage", "error")
    assert problem["message"] in done.stderr  # argparse's own usage lines stay on stderr
    assert "usage: fixloop" in done.stderr
