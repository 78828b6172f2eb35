"""Report formats for checker diagnostics: text lines, JSON, and SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from fixloop import __version__
from fixloop.diagnostics import Diagnostic, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text(diagnostics: Sequence[Diagnostic]) -> str:
    """One line per problem, whatever a message quotes (a grep or an editor reads them)."""
    return "".join(" ".join(d.format().splitlines()) + "\n" for d in diagnostics)


def fingerprint(diagnostic: Diagnostic, seen: dict[str, int]) -> str:
    """Stable across edits that move the finding: the file, the rule and the message (never the
    line), and which occurrence of that triple it is, so code scanning keeps its alert."""
    import hashlib  # here: loading OpenSSL is 2 ms of every check's start, for SARIF only

    key = "\0".join((diagnostic.path, diagnostic.rule, diagnostic.message))
    seen[key] = seen.get(key, 0) + 1
    digest = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()[:32]
    return f"{digest}:{seen[key]}"


def sarif(
    diagnostics: Sequence[Diagnostic], rule_help: Mapping[str, str], root: Path | None = None
) -> str:
    """One SARIF run: a rule per rule id seen (generic rules and contract ids), one result each.

    URIs are relative to `%SRCROOT%`, the folder the paths are relative to (the current one
    unless `root`), which `originalUriBaseIds` names, so an upload resolves them wherever the
    check ran; each result carries a `partialFingerprints` entry that survives moved lines.
    """
    source_root = (root or Path.cwd()).resolve()
    seen: dict[str, int] = {}
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
            "partialFingerprints": {"fixloopFinding/v1": fingerprint(d, seen)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {
                            "uri": PurePosixPath(*d.path.split("\\")).as_posix(),
                            "uriBaseId": "SRCROOT",
                        },
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
                "originalUriBaseIds": {"SRCROOT": {"uri": source_root.as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
