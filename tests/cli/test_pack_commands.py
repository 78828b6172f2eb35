"""The pack commands through the real `fixloop` entry point, as a user runs them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT
from tests.helpers import cli
from tests.helpers.packs import PackBuilder

ROLES = {"wave-runner", "executor", "verifier", "reviewer", "fixer", "fix-loop"}


def fixloop(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return cli.fixloop(*args, cwd=cwd, timeout=60)


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr
    assert "Traceback" not in result.stdout


def test_help_and_version() -> None:
    result = fixloop("--help")
    assert result.returncode == 0
    for command in ("validate", "agents", "render", "schema"):
        assert command in result.stdout
    version = fixloop("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("fixloop ")


def test_usage_error_exits_2() -> None:
    result = fixloop("validate", "--format", "yaml")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_agents_list_json_has_the_six_roles_with_tools_and_models() -> None:
    result = fixloop("agents", "list", "--json")
    assert result.returncode == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["command"] == "agents list" and envelope["ok"] is True
    rows = {row["name"]: row for row in envelope["items"]}
    assert set(rows) >= ROLES
    for name in ROLES:
        assert rows[name]["tools"], name
        assert rows[name]["model"] in {"sonnet", "opus", "haiku", "inherit"}
        assert rows[name]["qualified_name"] == f"fixloop:{name}"
        assert rows[name]["output"]


def test_render_with_vars_and_var() -> None:
    vars_file = REPO_ROOT / "tests/documents/goldens/render/fixer.vars.json"
    by_file = fixloop("render", "fixer", "--vars", str(vars_file))
    assert by_file.returncode == 0, by_file.stderr
    assert "Division by zero in average()" in by_file.stdout
    by_flag = fixloop(
        "render",
        "fixloop:fixer",
        "--var",
        'finding={"id": 7, "title": "t"}',
        "--var",
        'files=["a.py"]',
        "--var",
        "worktree=/w",
    )
    assert by_flag.returncode == 0, by_flag.stderr
    assert '"id": 7' in by_flag.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("render", "fixer", "--var", "files=[]", "--var", "worktree=/w"), "required object"),
        (("render", "nobody"), "no agent named 'nobody'"),
        (("render", "fixer", "--var", "novalue"), "expected KEY=VALUE"),
        (("render", "fixer", "--vars", "/nonexistent/vars.json"), "No such file"),
        (("schema", "Nope"), "no schema named 'Nope'"),
    ],
)
def test_bad_render_input_is_one_line_and_exit_2(args: tuple[str, ...], fragment: str) -> None:
    result = fixloop(*args)
    assert result.returncode == 2
    assert fragment in result.stderr
    assert_no_traceback(result)


def test_schema_prints_json_schema() -> None:
    result = fixloop("schema", "FixVerifyLoopOutput")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert set(schema["properties"]) == {"resolved", "escalated", "dropped", "demoted"}


BAD_INPUTS = [
    ("broken YAML", "color: green", "color: [green", "agents/fixer.md:7:8: frontmatter:"),
    ("unknown colour", "color: green", "color: teal", "agents/fixer.md:6:1: frontmatter: color:"),
    ("missing description", "description: Fixes one finding.\n", "", "no description"),
    ("unknown tool", "tools: Read", "tools: Reed", "agents/fixer.md:4:1: frontmatter: tools:"),
]


@pytest.mark.parametrize(("label", "old", "new", "expected"), BAD_INPUTS)
def test_validate_reports_bad_agent_input(
    mini_pack: PackBuilder, label: str, old: str, new: str, expected: str
) -> None:
    path = mini_pack.root / "agents/fixer.md"
    path.write_text(path.read_text().replace(old, new, 1))
    result = fixloop("validate", str(mini_pack.root), cwd=mini_pack.root)
    assert result.returncode == 1, label
    assert expected in result.stderr, result.stderr
    assert_no_traceback(result)


def test_validate_reports_duplicate_name_and_missing_reference(mini_pack: PackBuilder) -> None:
    text = (mini_pack.root / "agents/fixer.md").read_text()
    mini_pack.write("agents/fixer2.md", text)
    command = mini_pack.root / "commands/fix.md"
    command.write_text(command.read_text().replace("agents: [fixer]", "agents: [ghost]"))
    result = fixloop("validate", str(mini_pack.root), cwd=mini_pack.root)
    assert result.returncode == 1
    assert "agents/fixer2.md:2:1: duplicate-name: name: agent 'fixer'" in result.stderr
    assert "commands/fix.md:6:1: unknown-reference: fixloop.agents: no agent named 'ghost'" in (
        result.stderr
    )
    lines = [line for line in result.stderr.splitlines() if line]
    assert all(line.count(":") >= 3 for line in lines), lines


def test_validate_json_format(mini_pack: PackBuilder) -> None:
    result = fixloop("validate", str(mini_pack.root), "--format", "json", cwd=mini_pack.root)
    assert result.returncode == 0
    envelope = json.loads(result.stdout)
    assert (envelope["ok"], envelope["command"], envelope["items"]) == (True, "validate", [])
    assert envelope["result"]["agents"] == len(list((mini_pack.root / "agents").glob("*.md")))


def test_validate_missing_directory_is_usage_error(tmp_path: Path) -> None:
    result = fixloop("validate", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert "no such pack directory" in result.stderr


def test_validate_the_shipped_pack() -> None:
    result = fixloop("validate")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(": ok")


def test_render_names_every_missing_input_at_once() -> None:
    result = fixloop("render", "fixer")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "--var:1:1: input: required inputs are missing: "
        "'finding' (object), 'files' (list), 'worktree' (string)"
    )
    one_left = fixloop("render", "fixer", "--var", "files=[]", "--var", "worktree=/w")
    assert "input 'finding': required object input is missing" in one_left.stderr


@pytest.mark.parametrize("spelling", ["finding", "FINDING", "Finding"])
def test_schema_names_in_any_case(spelling: str) -> None:
    result = fixloop("schema", spelling)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["title"] == "Finding"


def test_schema_names_with_dashes_or_underscores() -> None:
    for spelling in ("fixer-result", "fixer_result", "fixerresult"):
        result = fixloop("schema", spelling)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["title"] == "FixerResult"


def test_agents_list_shows_each_roles_inputs_and_output() -> None:
    from fixloop.documents.pack import default_pack_root, load_pack

    pack, _ = load_pack(default_pack_root())
    result = fixloop("agents", "list")
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("\n")
    for agent in pack.agents.values():
        (start,) = [i for i, line in enumerate(blocks) if line.startswith(f"{agent.name} ")]
        head, inputs, output = blocks[start : start + 3]
        assert f"model: {agent.spec.model}" in head
        for name, spec in agent.spec.fixloop.inputs.items():
            assert f"{name} ({spec.type}" in inputs, (agent.name, name)
        assert output.strip() == f"output: {agent.spec.fixloop.output}"


def test_demo_help_names_every_workflow_it_runs() -> None:
    from fixloop.extras.demo import run

    source = Path(run.__file__).read_text(encoding="utf-8")
    staged = set(re.findall(r'display\.stage\("([a-z-]+):', source))
    assert {"review-fix", "fix-findings", "fix-engine", "execute-wave"} <= staged
    result = fixloop("demo", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for workflow in staged:
        assert workflow in text, workflow
