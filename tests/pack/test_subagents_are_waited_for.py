"""Every command and role document that dispatches a subagent says to wait for it, and a contract
of its own sidecar holds it to that (Claude Code's Agent tool runs in the background otherwise)."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

from fixloop.checker.checking import Library

SENTENCE = (
    "Run every subagent in the foreground (never in the background) and read its result before "
    "the next step."
)
DISPATCHES = re.compile(r"[Dd]ispatch(?:es)? (?:one |the agents|`fixloop:[a-z-]+`)")


def _dispatching() -> list[str]:
    found = []
    for folder in ("commands", "agents"):
        for path in sorted((REPO_ROOT / folder).glob("*.md")):
            if DISPATCHES.search(path.read_text(encoding="utf-8")):
                found.append(f"{folder}/{path.name}")
    return found


def test_the_documents_that_dispatch_are_the_ones_expected() -> None:
    assert _dispatching() == [
        "commands/review-fix.md",
        "agents/fix-loop.md",
        "agents/wave-runner.md",
    ]


def test_each_declares_the_contract_and_keeps_it() -> None:
    library = Library(None)
    for name in _dispatching():
        document = library.get(REPO_ROOT / name)
        assert document is not None, name
        says = [c.spec.says for c in document.contracts.contracts if c.kind == "says"]
        assert SENTENCE in says, f"{name}: no contract holding the sentence"
        assert SENTENCE in " ".join(document.source.text.split()), name
