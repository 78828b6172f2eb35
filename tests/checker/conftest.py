"""Helpers for the contract checker's tests: write documents to a temporary pack and check them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from fixloop.checker.checking import CheckResult, check_paths
from fixloop.diagnostics import Diagnostic

FIXTURES = Path(__file__).resolve().parent / "fixtures"

CheckText = Callable[..., list[Diagnostic]]


def copy_pack(target: Path) -> Path:
    """A copy of fixloop's own pack (the documents, not the code) to mutate."""
    for folder in ("agents", "commands", "workflows", ".claude-plugin"):
        shutil.copytree(REPO_ROOT / folder, target / folder)
    for name in ("plugin.json", "fixloop.toml"):
        shutil.copy(REPO_ROOT / name, target / name)
    return target


@pytest.fixture
def check_text(tmp_path: Path) -> CheckText:
    """Write `text` as workflows/<name>.md (and an optional sidecar), check it, return errors."""

    def run(
        text: str, sidecar: str | None = None, name: str = "doc", folder: str = "workflows"
    ) -> list[Diagnostic]:
        path = tmp_path / folder / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        # These documents are written for fixloop's runner (one shell per step, `set -e`).
        (tmp_path / "fixloop.toml").write_text('profile = "fixloop"\n', encoding="utf-8")
        path.write_text(text, encoding="utf-8")
        if sidecar is not None:
            path.with_name(f"{name}.contracts.yaml").write_text(sidecar, encoding="utf-8")
        result: CheckResult = check_paths([path], base=tmp_path)
        return result.diagnostics

    return run


def workflow(steps: dict[str, str], front: str = "") -> str:
    """A fixloop-style workflow document with one bash block per step."""
    body = "".join(
        f"## {name} {{#{name}}}\n\n```bash\n{bash.strip()}\n```\n\n" for name, bash in steps.items()
    )
    return f"---\nname: doc\ndescription: A test document.\n{front}---\n\n# Doc\n\n{body}"


def rules(diagnostics: list[Diagnostic]) -> list[tuple[str, int]]:
    return [(d.rule, d.line) for d in diagnostics]


# The fixture packs declare contracts; the fixloop pytest plugin would collect them as test items.
# The tests check them explicitly instead.
collect_ignore_glob = ["fixtures/*"]
