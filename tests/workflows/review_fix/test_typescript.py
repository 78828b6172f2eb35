"""review-fix's Tier 2 for TypeScript: in a project with a tsconfig.json, a fix that breaks the
syntax of a `.ts` file is rolled back, one that parses is committed, checked by the project's own
compiler (a real `typescript` installed by npm, found in the user's `node_modules` from the run's
worktree), in the run's sandbox."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.gitrepo import UserRepo, make_user_repo
from tests.helpers.reviews import REVIEW_REL, finding, fixed, pack, review_text, write_review
from tests.helpers.typescript import install_typescript
from tests.sandboxes.support import kinds

from fixloop.agents.scripted import ScriptedBackend
from fixloop.sandboxes import choose_sandbox
from fixloop.workflows.kernel.workflow import Context
from fixloop.workflows.review_fix import ReviewFixOptions, run_review_fix

pytestmark = [pytest.mark.slow, pytest.mark.needs("node", "npm")]

CART = "export function total(prices: number[]): number {\n  return prices.length;\n}\n"
TAX = "export const rate: number = 0.2;\n"


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_typescript(tmp_path_factory.mktemp("typescript"))


@pytest.fixture
def project() -> Iterator[UserRepo]:
    """The user's repository, outside /tmp: bwrap gives its commands a /tmp of their own, and a
    project's `node_modules` must be where the run's worktree sees it (above it, read-only)."""
    folder = Path(tempfile.mkdtemp(prefix="fixloop-ts-", dir="/var/tmp"))
    try:
        yield make_user_repo(folder / "repo")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("kind", kinds("local", "bwrap"))
def test_a_fix_that_breaks_typescript_syntax_is_rolled_back(
    project: UserRepo, node_modules: Path, kind: str
) -> None:
    user_repo = project
    repo = user_repo.path
    for rel, text in {"tsconfig.json": "{}\n", "src/cart.ts": CART, "src/tax.ts": TAX}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / ".gitignore").write_text("node_modules/\n")
    shutil.copytree(node_modules, repo / "node_modules", symlinks=True)  # installed, not tracked
    user_repo.git("add", "tsconfig.json", "src/cart.ts", "src/tax.ts", ".gitignore")
    user_repo.git("commit", "--quiet", "-m", "typescript")
    write_review(
        repo,
        review_text(
            finding("CR-01", "total counts instead of adding", "src/cart.ts"),
            finding("WR-01", "rate too high", "src/tax.ts"),
        ),
    )
    script = {
        "fixer/CR-01/iteration-1": fixed(
            "src/cart.ts", "prices.length", "prices.reduce((sum, p) => sum + p, 0)"
        ),
        "fixer/WR-01/iteration-1": fixed("src/tax.ts", "= 0.2;", "= ;"),
    }
    context = Context(pack(), ScriptedBackend(script), sandbox=choose_sandbox(kind))
    result = run_review_fix(ReviewFixOptions(review=repo / REVIEW_REL, repo=repo), context)
    cart, tax = result.outcomes
    assert cart.label == "fixed"
    assert tax.label.startswith("skipped") and "src/tax.ts: line 1: TS1109" in tax.detail
    assert "reduce" in user_repo.git("show", "HEAD~1:src/cart.ts")
    assert (repo / "src/tax.ts").read_text() == TAX
