"""The scope-expansion request: where it comes from, and the user's answer to it.

A fixer that needs files outside its finding must ask first (`ScopeExpansionRequest`). A fixer
that instead tries to edit them is refused by the backend, and whatever it then reports, the
refusal is the same request in other words: `scope_request` makes one from the refused paths
(or widens the model's own request by them), so a single path handles both: ask, then approve,
reject or defer. Files it changed anyway, unrefused (found in the tree and put back, see
`tree_guard`), are part of the same request, said as "changed without asking". Refused writes
that no approval could grant (outside the repository, into `.git`) are not a request: the caller
fails the attempt instead (`Denials.forbidden`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fixloop.agents.backend import AgentOutcome
from fixloop.schemas.results import FixReport, ScopeExpansionRequest
from fixloop.workflows.kernel.choices import Prompter
from fixloop.workflows.kernel.denied_writes import Denials, changed_unasked, tried_to_edit
from fixloop.workflows.kernel.scope_policy import (
    ScopePolicy,
    answer_expansion,
)


def scope_request(
    outcome: AgentOutcome,
    result: FixReport | ScopeExpansionRequest | None,
    denials: Denials,
    scope: Sequence[str],
) -> ScopeExpansionRequest | None:
    """The request this call amounts to, or None when it asked for nothing and tried nothing."""
    tried = [*denials.outside_scope, *denials.unasked]
    if isinstance(result, ScopeExpansionRequest):
        asked = {Path(name) for name in result.additional_files}
        more = [name for name in tried if Path(name) not in asked]
        if not more:
            return result
        return _request(
            [*result.additional_files, *more],
            f"{result.justification} {_what_it_did(more, denials, scope)}",
        )
    if not tried:
        return None
    if isinstance(result, FixReport):
        said = f" It then reported: {result.summary}" if result.summary.strip() else ""
    else:
        said = f" Its call then ended inconclusive ({outcome.reason}): {outcome.detail}"
    return _request(tried, _what_it_did(tried, denials, scope) + said)


def _what_it_did(files: Sequence[str], denials: Denials, scope: Sequence[str]) -> str:
    refused = [name for name in files if name in denials.outside_scope]
    unasked = [name for name in files if name not in denials.outside_scope]
    said = [tried_to_edit(refused, scope)] if refused else []
    return " ".join([*said, changed_unasked(unasked, scope)] if unasked else said)


def answer(
    policy: ScopePolicy,
    prompter: Prompter,
    request: ScopeExpansionRequest,
    *,
    repo: Path,
    finding_id: int | str,
    notes: list[str],
) -> str:
    """APPROVE, REJECT or DEFER; `notes` says why when neither the user nor the policy chose."""
    text = (
        f"Finding {finding_id}: the fixer asks to also edit "
        f"{', '.join(request.additional_files)}: {request.justification}"
    )
    return answer_expansion(
        policy, prompter, request.additional_files, text, repo=repo, notes=notes
    )


def _request(files: Sequence[str], justification: str) -> ScopeExpansionRequest:
    return ScopeExpansionRequest.model_validate(
        {
            "needs_scope_expansion": True,
            "additional_files": list(files),
            "justification": justification,
        }
    )
