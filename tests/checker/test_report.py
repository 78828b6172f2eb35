"""Report formats: text lines, JSON, and SARIF 2.1.0 that code-scanning UIs accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from fixloop.checker import report
from fixloop.diagnostics import Diagnostic, Severity

# The parts of SARIF 2.1.0 (OASIS standard, sarif-schema-2.1.0.json) that fixloop emits, written
# from the specification: required properties, the level enum, 1-based regions, and no property
# the specification does not define on these objects.
_MESSAGE = {
    "type": "object",
    "required": ["text"],
    "properties": {"text": {"type": "string"}},
    "additionalProperties": False,
}
SARIF_SUBSET: dict[str, Any] = {
    "type": "object",
    "required": ["version", "runs"],
    "additionalProperties": False,
    "properties": {
        "$schema": {"type": "string"},
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "additionalProperties": False,
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "additionalProperties": False,
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "additionalProperties": False,
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "informationUri": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "additionalProperties": False,
                                            "properties": {
                                                "id": {"type": "string"},
                                                "name": {"type": "string"},
                                                "shortDescription": _MESSAGE,
                                                "helpUri": {"type": "string"},
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "originalUriBaseIds": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "required": ["uri"],
                            "properties": {"uri": {"type": "string", "pattern": "^file:///.*/$"}},
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "additionalProperties": False,
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": _MESSAGE,
                                "partialFingerprints": {
                                    "type": "object",
                                    "additionalProperties": {"type": "string"},
                                },
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "additionalProperties": False,
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "additionalProperties": False,
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "additionalProperties": False,
                                                        "properties": {
                                                            "uri": {"type": "string"},
                                                            "uriBaseId": {"type": "string"},
                                                        },
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "additionalProperties": False,
                                                        "properties": {
                                                            "startLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "startColumn": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}

DIAGNOSTICS = [
    Diagnostic("workflows/a.md", 12, 3, "sentinel-after-add", "`x` can run before `y`"),
    Diagnostic("workflows/a.md", 20, 1, "bash-syntax", "odd", Severity.WARNING),
]


def test_sarif_is_valid_and_indexes_its_rules() -> None:
    log = json.loads(report.sarif(DIAGNOSTICS, {"bash-syntax": "a block bash cannot parse"}))
    jsonschema.validate(log, SARIF_SUBSET)
    run = log["runs"][0]
    ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
    assert [r["level"] for r in run["results"]] == ["error", "warning"]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 12, "startColumn": 3}


def test_text_is_one_line_per_problem() -> None:
    assert report.text(DIAGNOSTICS).splitlines()[0] == (
        "workflows/a.md:12:3: sentinel-after-add: `x` can run before `y`"
    )


def test_sarif_fingerprints_survive_moved_lines_and_uris_have_a_base() -> None:
    first = Diagnostic("agents/a.md", 10, 1, "forbidden-x", "`git stash` is forbidden")
    moved = Diagnostic("agents/a.md", 14, 1, "forbidden-x", "`git stash` is forbidden")
    again = Diagnostic("agents/a.md", 20, 1, "forbidden-x", "`git stash` is forbidden")
    one = json.loads(report.sarif([first], {}))["runs"][0]
    two = json.loads(report.sarif([moved, again], {}))["runs"][0]
    prints = [r["partialFingerprints"]["fixloopFinding/v1"] for r in two["results"]]
    assert one["results"][0]["partialFingerprints"]["fixloopFinding/v1"] == prints[0]
    assert prints[0] != prints[1]  # a second occurrence is a second alert
    location = two["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "agents/a.md", "uriBaseId": "SRCROOT"}
    assert two["originalUriBaseIds"]["SRCROOT"]["uri"] == Path.cwd().resolve().as_uri() + "/"
