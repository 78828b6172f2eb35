"""`fixloop init --claude`: the rules the commands need, merged into the settings, shown first."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.documents.claude_permissions import ALLOW_RULES

# The pack this fixloop runs is a checkout here, not under ~/.claude/plugins: one more rule.
PACK_RULE = f"Read(/{REPO_ROOT.resolve()}/**)"
RULES = [*(rule.rule for rule in ALLOW_RULES), PACK_RULE]


def fixloop(
    *args: str, cwd: Path, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixloop", "init", "--claude", *args],
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def settings(root: Path, name: str = "settings.json") -> dict[str, object]:
    loaded = json.loads((root / ".claude" / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_a_dry_run_shows_the_rules_and_writes_nothing(tmp_path: Path) -> None:
    done = fixloop("--dry-run", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("--- /dev/null\n+++ .claude/settings.json\n")
    for rule in RULES:
        assert f'+      "{rule}"' in done.stdout
    assert not (tmp_path / ".claude").exists()


def test_without_a_terminal_or_yes_it_shows_and_does_not_write(tmp_path: Path) -> None:
    done = fixloop(cwd=tmp_path)

    assert done.returncode == 1
    assert '"Bash(fixloop step run:*)"' in done.stdout
    assert (
        done.stderr
        == "not written: no terminal to ask; pass --yes to write .claude/settings.json\n"
    )
    assert not (tmp_path / ".claude").exists()


def test_yes_merges_with_what_is_there_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    mine = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)", RULES[1]], "deny": ["Read(.env)"]},
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(mine), encoding="utf-8")

    done = fixloop("--yes", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert f'+      "{RULES[0]}"' in done.stdout and f"-{json.dumps(mine)}" in done.stdout
    written = settings(tmp_path)
    assert written == {
        "model": "opus",
        "permissions": {
            "allow": ["Bash(npm test)", RULES[1], *[r for r in RULES if r != RULES[1]]],
            "deny": ["Read(.env)"],
        },
    }
    text = (tmp_path / ".claude" / "settings.json").read_bytes()
    again = fixloop("--yes", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (
        0,
        ".claude/settings.json: every rule fixloop's commands need is already there\n",
    )
    assert (tmp_path / ".claude" / "settings.json").read_bytes() == text


def test_local_writes_the_settings_only_this_user_has(tmp_path: Path) -> None:
    done = fixloop("--local", "--yes", "--repo", str(tmp_path), cwd=REPO_ROOT)

    assert done.returncode == 0, done.stderr
    assert settings(tmp_path, "settings.local.json") == {"permissions": {"allow": RULES}}
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_local_settings_are_hidden_from_git_once_shown(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    exclude = tmp_path / ".git" / "info" / "exclude"
    exclude.write_text("# mine", encoding="utf-8")  # no newline at its end

    shown = fixloop("--local", "--dry-run", cwd=tmp_path)
    done = fixloop("--local", "--yes", cwd=tmp_path)
    again = fixloop("--local", "--yes", cwd=tmp_path)

    assert ".git/info/exclude: + /.claude/settings.local.json\n" in shown.stdout
    assert exclude.read_text(encoding="utf-8") == "# mine\n/.claude/settings.local.json\n"
    assert ".git/info/exclude" in done.stdout and again.returncode == 0
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


@pytest.mark.parametrize(("answer", "written"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_at_a_terminal_it_asks_after_showing(tmp_path: Path, answer: str, written: bool) -> None:
    controller, terminal = os.openpty()
    try:
        os.write(controller, answer.encode())
        done = fixloop(cwd=tmp_path, stdin=terminal)
    finally:
        os.close(controller)
        os.close(terminal)

    assert done.returncode == (0 if written else 1), done.stderr
    assert done.stdout.index('"Edit(/.fixloop/worktrees/**)"') < done.stdout.index(
        "Write .claude/settings.json? [y/N]"
    )
    assert (tmp_path / ".claude" / "settings.json").exists() is written


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ('{\n  "permissions": {"allow": [}\n}', 2, "not JSON: Expecting value"),
        ("[]", 1, "the settings must be a JSON object"),
        ('{"permissions": []}', 1, "key permissions: must be an object"),
        (
            '{"permissions": {"allow": "Bash"}}',
            1,
            "key permissions.allow: must be a list of strings",
        ),
    ],
)
def test_settings_that_are_not_what_claude_code_reads_are_one_line(
    tmp_path: Path, content: str, line: int, message: str
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(content, encoding="utf-8")

    done = fixloop("--yes", cwd=tmp_path)

    assert done.returncode == 2
    assert done.stderr == f".claude/settings.json:{line}:1: settings: {message}\n"
    assert done.stdout == ""
    assert (tmp_path / ".claude" / "settings.json").read_text(encoding="utf-8") == content


def test_the_readme_lists_exactly_these_rules() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it inside Claude Code", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([A-Z][a-z]+\(.*?\))` \| (.*?) \|$", section, flags=re.MULTILINE)

    assert [(rule, why.replace("`", "")) for rule, why in rows] == [
        (rule.rule, rule.why) for rule in ALLOW_RULES
    ]


def test_the_help_lists_exactly_these_rules() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "init", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    listed = re.findall(r"^  ([A-Z][a-z]+\(.*?\))  ", done.stdout, flags=re.MULTILINE)
    assert listed == [*(rule.rule for rule in ALLOW_RULES), "Read(//PLUGIN_ROOT/**)"]


def test_a_plugin_under_claude_codes_own_folder_needs_no_rule_of_its_own(tmp_path: Path) -> None:
    home = Path("~/.claude/plugins/cache/fixloop/fixloop/0.1.0").expanduser()
    done = fixloop("--yes", "--plugin-root", str(home), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert settings(tmp_path) == {"permissions": {"allow": [r.rule for r in ALLOW_RULES]}}

    elsewhere = tmp_path / "checkout"
    again = fixloop("--yes", "--plugin-root", str(elsewhere), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert settings(tmp_path)["permissions"] == {
        "allow": [*(r.rule for r in ALLOW_RULES), f"Read(/{elsewhere.resolve()}/**)"]
    }
