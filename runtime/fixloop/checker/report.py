"""Report formats for checker diagnostics: text lines, JSON, and SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from fixloop import __version__
from fixloop.diagnostics import Diagnostic, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text(diagnostics: Sequence[Diagnostic]) -> str:
    """One line per problem, whatever a message quotes (a grep or an editor reads them)."""
    return "".join(" ".join(d.format().splitlines()) + "\n" for d in diagnostics)


def as_json(diagnostics: Sequence[Diagnostic], checked: int, contracts: int) -> str:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    payload = {
        "ok": not errors,
        "documents": checked,
        "contracts": contracts,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    return json.dumps(payload, indent=2) + "\n"


def sarif(diagnostics: Sequence[Diagnostic], rule_help: Mapping[str, str]) -> str:
    """One SARIF run: a rule per rule id seen (generic rules and contract ids), one result each."""
    rule_ids = sorted({d.rule for d in diagnostics} | set(rule_help))
    index = {rule: i for i, rule in enumerate(rule_ids)}
    rules = [
        {
            "id": rule,
            "name": rule,
            "shortDescription": {"text": rule_help.get(rule, f"contract {rule}")},
        }
        for rule in rule_ids
    ]
    results = [
        {
            "ruleId": d.rule,
            "ruleIndex": index[d.rule],
            "level": "error" if d.severity is Severity.ERROR else "warning",
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": PurePosixPath(*d.path.split("\\")).as_posix()},
                        "region": {"startLine": max(d.line, 1), "startColumn": max(d.col, 1)},
                    }
                }
            ],
        }
        for d in diagnostics
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "fixloop",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
