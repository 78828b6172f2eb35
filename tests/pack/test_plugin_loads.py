"""The pack really loads in Claude Code: the bundled CLI, offline, with a temporary HOME.

The CLI talks only to a scripted Messages API on loopback, so these tests need nothing but the
claude-agent-sdk wheel. The HOME is the temporary one from the shared conftest.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from fixloop.documents.pack import Pack, load_pack
from fixloop.extras.testing.claude_cli import plugin_command, plugin_validate, run_headless
from fixloop.extras.testing.messages_server import MessagesServer, text

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.cli


@pytest.fixture(scope="module")
def pack() -> Pack:
    loaded, _ = load_pack(REPO_ROOT)
    return loaded


def expected_agents() -> set[str]:
    # Claude Code names an agent by its frontmatter `name`; ours must match the file stem.
    return {f"fixloop:{path.stem}" for path in (REPO_ROOT / "agents").glob("*.md")}


def expected_commands() -> set[str]:
    return {f"fixloop:{path.stem}" for path in (REPO_ROOT / "commands").glob("*.md")}


def test_the_init_message_lists_every_agent_and_command_and_no_plugin_errors(
    tmp_path: Path, pack: Pack
) -> None:
    with MessagesServer([text("ok")]) as server:
        run = run_headless("hello", cwd=tmp_path, env=server.env(), plugin_dirs=[REPO_ROOT])

    init = run.init
    assert set(pack.agents) == {name.removeprefix("fixloop:") for name in expected_agents()}
    assert expected_agents() <= set(init["agents"]), sorted(init["agents"])
    assert expected_commands() <= set(init["slash_commands"]), sorted(init["slash_commands"])
    assert len(expected_agents()) >= 6 and len(expected_commands()) >= 5
    ours = [plugin for plugin in init["plugins"] if plugin["name"] == "fixloop"]
    assert ours and Path(ours[0]["path"]) == REPO_ROOT
    assert not init.get("plugin_errors"), init.get("plugin_errors")
    assert run.returncode == 0, run.stderr


def test_a_broken_plugin_is_reported_in_the_init_message(tmp_path: Path) -> None:
    """The control for the test above: the CLI does report plugin errors where we look."""
    broken = tmp_path / "broken"
    shutil.copytree(REPO_ROOT / ".claude-plugin", broken / ".claude-plugin")
    shutil.copytree(REPO_ROOT / "agents", broken / "agents")
    (broken / ".claude-plugin" / "plugin.json").write_text('{"name": "fixloop", ')
    with MessagesServer([text("ok")]) as server:
        run = run_headless("hello", cwd=tmp_path, env=server.env(), plugin_dirs=[broken])

    init = run.init
    assert init.get("plugin_errors"), "a corrupt manifest must show up as a plugin error"
    assert not expected_agents() & set(init["agents"])


def test_the_agents_are_offered_to_the_model_with_their_descriptions(
    tmp_path: Path, pack: Pack
) -> None:
    with MessagesServer([text("ok")]) as server:
        run_headless("hello", cwd=tmp_path, env=server.env(), plugin_dirs=[REPO_ROOT])

    sent = json.dumps(server.conversation[0].body)
    for name, agent in pack.agents.items():
        line = f"- fixloop:{name}: {agent.spec.description}"
        assert json.dumps(line)[1:-1] in sent, f"{name} is not offered as a subagent"


def test_a_slash_command_expands_with_its_arguments(tmp_path: Path) -> None:
    with MessagesServer([text("Stopping: this is a test.")]) as server:
        run = run_headless(
            "/fixloop:review-fix .planning/phases/01-auth --all",
            cwd=tmp_path,
            env=server.env(),
            plugin_dirs=[REPO_ROOT],
        )

    assert run.returncode == 0, run.stderr
    texts = server.conversation[0].user_texts()
    expanded = next(t for t in texts if t.startswith("# /fixloop:review-fix"))
    assert "Arguments: .planning/phases/01-auth --all\n" in expanded
    assert "$ARGUMENTS" not in expanded
    # ${CLAUDE_PLUGIN_ROOT} points at the installed pack, so the workflow document is found.
    assert f"Read `{REPO_ROOT}/workflows/review-fix.md`" in expanded
    assert (REPO_ROOT / "workflows" / "review-fix.md").is_file()
    assert any("<command-args>.planning/phases/01-auth --all</command-args>" in t for t in texts)


def test_plugin_validate_strict_passes(tmp_path: Path) -> None:
    code, report = plugin_validate(REPO_ROOT, "--strict", env={"HOME": str(tmp_path)})

    assert code == 0, json.dumps(report, indent=2)
    assert report["success"] is True
    provides = report["provides"]
    assert expected_agents() <= set(provides["agents"])
    assert expected_commands() <= set(provides["commands"])


def test_plugin_validate_strict_passes_on_the_plugin_manifest(tmp_path: Path) -> None:
    manifest = REPO_ROOT / ".claude-plugin" / "plugin.json"

    code, report = plugin_validate(manifest, "--strict", env={"HOME": str(tmp_path)})

    assert code == 0, json.dumps(report, indent=2)
    assert report["manifest"]["type"] == "plugin"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []


def test_plugin_validate_directory_profile_passes(tmp_path: Path) -> None:
    for required in ("README.md", "LICENSE", ".claude-plugin/icon.png"):
        assert (REPO_ROOT / required).is_file(), required

    code, report = plugin_validate(
        REPO_ROOT, "--strict", "--profile", "directory", env={"HOME": str(tmp_path)}
    )

    assert code == 0, json.dumps(report, indent=2)
    assert report["directory"]["findings"] == []


def test_plugin_validate_directory_profile_refuses_a_pack_without_readme(tmp_path: Path) -> None:
    """The control: the directory profile does check what we rely on it for."""
    bare = tmp_path / "bare"
    for folder in (".claude-plugin", "agents", "commands"):
        shutil.copytree(REPO_ROOT / folder, bare / folder)

    code, report = plugin_validate(
        bare, "--strict", "--profile", "directory", env={"HOME": str(tmp_path)}
    )

    assert code != 0
    codes = [finding["code"] for finding in report["directory"]["findings"]]
    assert "README_MISSING" in codes


def _hint(path: Path) -> str:
    _, head, _ = path.read_text(encoding="utf-8").split("---\n", 2)
    loaded = yaml.safe_load(head)
    return str(loaded.get("argument-hint", "")) if isinstance(loaded, dict) else ""


def test_help_lists_every_command_with_its_arguments() -> None:
    text = (REPO_ROOT / "commands" / "help.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `/fixloop:")]
    listed = [row.split("`")[1].split()[0].removeprefix("/fixloop:") for row in rows]

    assert sorted(listed) == sorted(path.stem for path in (REPO_ROOT / "commands").glob("*.md"))
    for path in (REPO_ROOT / "commands").glob("*.md"):
        usage = f"/fixloop:{path.stem} {_hint(path)}".strip().replace("|", "\\|")
        assert any(row.startswith(f"| `{usage}` |") for row in rows), usage


# What `claude plugin details` said the plugin costs every session before /fixloop:help and
# /fixloop:status were added (~913 tokens); new commands must pay for themselves.
ALWAYS_ON_BUDGET = 913


def test_the_always_on_token_cost_does_not_grow(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    market = tmp_path / "market"
    shutil.copytree(
        REPO_ROOT,
        market,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "tests", "bench", "__pycache__", "*.egg-info"
        ),
    )
    for argv in (["marketplace", "add", str(market)], ["install", "fixloop@fixloop"]):
        done = plugin_command(*argv, env=env)
        assert done.returncode == 0, done.stdout + done.stderr

    details = plugin_command("details", "fixloop", env=env)

    found = re.search(r"Always-on:\s+~(\d+) tok", details.stdout)
    assert found, details.stdout + details.stderr
    assert int(found.group(1)) <= ALWAYS_ON_BUDGET, details.stdout
    assert re.search(r"^\s+help\s", details.stdout, flags=re.MULTILINE), details.stdout
