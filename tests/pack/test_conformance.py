"""`fixloop validate` accepts what Claude Code loads and refuses what it refuses.

`conformance/` holds small plugins of our own: `accepted-*` ones the bundled Claude Code CLI loads
without errors, `rejected-*` ones it refuses. Under the default (`claude`) profile, validate must
give 0 errors on the first and at least one on the second. The `cli` tests ask the real CLI
(`claude plugin validate`, and the `init` message of a headless start with a temporary HOME and
no key), so a new CLI release that changes its mind fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.diagnostics import Severity
from fixloop.documents.config import Profile
from fixloop.documents.validate import validate_pack
from fixloop.extras.testing.claude_cli import plugin_validate, run_headless
from fixloop.extras.testing.messages_server import MessagesServer, text
from fixloop.schemas import registry

CORPUS = Path(__file__).resolve().parent / "conformance"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def accepted(case: str) -> bool:
    return case.startswith("accepted-")


def test_the_corpus_has_both_kinds() -> None:
    assert sum(map(accepted, CASES)) >= 6
    assert sum(not accepted(case) for case in CASES) >= 12


@pytest.mark.parametrize("case", CASES)
def test_validate_agrees_with_claude_code(case: str) -> None:
    _, found = validate_pack(
        CORPUS / case, CORPUS, known_outputs=registry.is_known, profile=Profile.CLAUDE
    )
    errors = [d.format() for d in found if d.severity is Severity.ERROR]
    if accepted(case):
        assert errors == []
    else:
        assert errors, "Claude Code refuses this plugin; validate must say why"


@pytest.mark.cli
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_bundled_cli_judges_the_corpus_as_named(case: str, tmp_path: Path) -> None:
    code, report = plugin_validate(CORPUS / case, env={"HOME": str(tmp_path)})
    validated = code == 0 and report.get("success") is True
    loaded = True
    if validated:
        with MessagesServer([text("ok")]) as server:
            run = run_headless("hi", cwd=tmp_path, env=server.env(), plugin_dirs=[CORPUS / case])
        loaded = not run.init.get("plugin_errors")
    assert (validated and loaded) == accepted(case), report
