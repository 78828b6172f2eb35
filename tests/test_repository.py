"""Promises about the repository: layout, manifests, the README's Quick start, module size."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.documents.blocks import parse_markdown
from fixloop.documents.source import load_document

MAX_MODULE_LINES = 450


def test_layout() -> None:
    for relative in (
        "agents",
        "workflows",
        "commands",
        "runtime/fixloop",
        "tests",
        "pyproject.toml",
        "plugin.json",
        "README.md",
        ".ci/run",
        "LICENSE",
        ".claude-plugin/icon.png",
    ):
        assert (REPO_ROOT / relative).exists(), relative


def test_claude_manifest_is_a_copy_of_plugin_json() -> None:
    truth = json.loads((REPO_ROOT / "plugin.json").read_text())
    assert json.loads((REPO_ROOT / ".claude-plugin/plugin.json").read_text()) == truth
    market = json.loads((REPO_ROOT / ".claude-plugin/marketplace.json").read_text())
    (entry,) = [p for p in market["plugins"] if p["name"] == truth["name"]]
    assert entry["source"] == "./"
    assert entry["version"] == truth["version"]
    assert entry["description"] == truth["description"]


def test_quick_start_is_exactly_two_commands_and_ci_runs_the_second() -> None:
    readme = parse_markdown(load_document(REPO_ROOT / "README.md"))
    quick = [b for b in readme.blocks if "Quick start" in b.section]
    assert quick, "README needs a 'Quick start' section with a fenced block"
    commands = [line for line in quick[0].content.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    install, test = commands
    assert "pip install" in install
    assert "pytest" in test
    ci = (REPO_ROOT / ".ci/run").read_text().splitlines()
    assert test.strip() in ci, "the README's test command must be what .ci/run runs"


def test_make_full_is_the_readme_s_test_command() -> None:
    readme = parse_markdown(load_document(REPO_ROOT / "README.md"))
    [quick] = [b for b in readme.blocks if "Quick start" in b.section][:1]
    test = [line for line in quick.content.splitlines() if line.strip()][1].strip()
    makefile = (REPO_ROOT / "Makefile").read_text().splitlines()
    recipe = makefile[makefile.index("full:") + 1].strip()
    assert recipe.replace("$(PYTHON)", ".venv/bin/python") == test


def test_modules_stay_small() -> None:
    too_big = {
        str(path.relative_to(REPO_ROOT)): n
        for path in (REPO_ROOT / "runtime/fixloop").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert too_big == {}, f"split these modules (> {MAX_MODULE_LINES} lines): {too_big}"


def test_the_formatter_decides_the_layout() -> None:
    """`ruff format` lays out every Python file; no statement opts out of it."""
    markers = ("# fmt: " + "skip", "# fmt: " + "off")  # split: this file does not hold them
    holding = [
        str(path.relative_to(REPO_ROOT))
        for folder in ("runtime", "tests", "bench")
        for path in (REPO_ROOT / folder).rglob("*.py")
        if any(marker in path.read_text(encoding="utf-8") for marker in markers)
    ]
    assert holding == [], f"remove the formatter opt-outs from: {holding}"


@pytest.mark.slow
def test_wheel_carries_the_pack(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("fixloop-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("agents", "commands", "workflows"):
        expected = {f"fixloop/pack/{folder}/{p.name}" for p in (REPO_ROOT / folder).glob("*.md")}
        assert expected <= names, folder
    assert "fixloop/pack/plugin.json" in names
    assert "fixloop/pack/fixloop.toml" in names  # the installed pack keeps its own profile
    assert "fixloop/cli/main.py" in names


# Lower layers never import higher ones (DESIGN.md: "imports point one way"). Three parts: the
# runtime core (these layers), the checker, and the extras above them all.
LAYERS = (
    "lazy",  # a package's names imported on first use
    "records",  # dataclasses without compiled methods
    "diagnostics",
    "masking",
    "processes",
    "process_table",  # the processes of /proc, found and stopped
    "locks",
    "secret_files",
    "hostgit",
    "gitguard",
    "events",
    "gitrepo",
    "documents",
    "schemas",
    "steps",
    "runs",  # below the sandboxes: recovery gets its sweepers handed in
    "sandboxes",
    "agents",
    "reviews",
    "workflows",
    "api",
    "extras",  # browser, efficacy, demo, testing: the core imports none of them
    "cli",  # the front door wires the extras in
    "__main__",
)
# The checker is a sibling of the runtime on the same trunk, not a floor under it: it reads the
# documents and knows the result schemas, and only the command line and the public API reach it.
CHECKER = "checker"
CHECKER_IMPORTS = frozenset({"records", "diagnostics", "documents", "schemas"})
CHECKER_IMPORTED_BY = frozenset({"api", "cli", "__main__"})


def _imported_packages(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {n.split(".")[1] for n in names if n.startswith("fixloop.")}
    return found


def _layer_problems(layer: str, targets: set[str]) -> list[str]:
    if layer == CHECKER:
        return sorted(targets - CHECKER_IMPORTS)
    upward = [t for t in targets if t != CHECKER and LAYERS.index(t) > LAYERS.index(layer)]
    if CHECKER in targets and layer not in CHECKER_IMPORTED_BY:
        upward.append(CHECKER)
    return sorted(upward)


def test_imports_flow_one_way() -> None:
    package_root = REPO_ROOT / "runtime/fixloop"
    upward: list[str] = []
    for path in sorted(package_root.rglob("*.py")):
        relative = path.relative_to(package_root)
        layer = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        if layer == "__init__":
            continue
        assert layer in (*LAYERS, CHECKER), f"{relative}: add its package to LAYERS"
        for target in _layer_problems(layer, _imported_packages(path) - {layer}):
            upward.append(f"{relative} imports fixloop.{target}")
    assert upward == []


def test_the_layer_rule_catches_a_runtime_import_of_the_checker() -> None:
    """The control: the rule above does refuse what it is there to refuse."""
    assert _layer_problems("steps", {"checker", "documents"}) == ["checker"]
    assert _layer_problems("checker", {"steps", "documents"}) == ["steps"]
    assert _layer_problems("documents", {"runs"}) == ["runs"]
    assert _layer_problems("cli", {"checker", "workflows"}) == []


def test_the_layer_rule_keeps_the_extras_out_of_the_core() -> None:
    """The control for the extras tier: no core layer may import one, the front door may."""
    core = LAYERS[: LAYERS.index("extras")]
    assert all(_layer_problems(layer, {"extras"}) == ["extras"] for layer in core)
    assert _layer_problems("runs", {"sandboxes", "steps"}) == ["sandboxes"]
    assert _layer_problems("cli", {"extras"}) == []
    assert _layer_problems("extras", {"workflows", "runs"}) == []
    assert _layer_problems("checker", {"extras"}) == ["extras"]
