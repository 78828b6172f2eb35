"""What the demo's scripted model does: the fixer's edits and answers, the verifier's verdicts.

This is the script a real model would improvise. `REVIEW_FIX_SCRIPT` plays review-fix's fixer on
the findings of `example.REVIEW`: three right fixes (one of them a logic fix that still needs a
human's eye), one edit that does not parse and is rolled back, and one false positive the fixer
declines. `FINDINGS` and `FIX_FINDINGS_SCRIPT` then drive fix-findings on what is left:
one finding resolved in round 1, one that two rounds cannot fix (escalated, its attempts staged),
and one the verifier's pre-gate rejects as not real (dropped). The keys follow the workflows'
call keys: `fixer/<finding>/iteration-<n>`, `fixer/<id>/round-<n>`, `verifier/<id>/pre-gate`.
"""

from __future__ import annotations

from typing import Any


def _fixed(path: str, summary: str) -> dict[str, Any]:
    return {"files_changed": [path], "summary": summary, "concerns": None}


REVIEW_FIX_SCRIPT: dict[str, Any] = {
    "fixer/CR-01/iteration-1": {
        "edits": [
            {
                "path": "shelf/stock.py",
                "old": "    return sum(prices) / len(prices)\n",
                "new": (
                    "    if not prices:\n        return 0.0\n    return sum(prices) / len(prices)\n"
                ),
            }
        ],
        "output": _fixed("shelf/stock.py", "fixed: average_price returns 0.0 for no prices"),
    },
    # The fixer's edit does not parse: tier 2 catches it and the file is rolled back.
    "fixer/CR-02/iteration-1": {
        "edits": [
            {
                "path": "shelf/stock.py",
                "old": "    return int(text)\n",
                "new": "    count = int(text)\n    if count < 0\n        raise ValueError(text)\n"
                "    return count\n",
            }
        ],
        "output": _fixed("shelf/stock.py", "fixed: parse_count refuses negative numbers"),
    },
    "fixer/WR-01/iteration-1": {
        "edits": [
            {
                "path": "shelf/stock.py",
                "old": "    if quantity > high:\n        return low\n",
                "new": "    if quantity > high:\n        return high\n",
            }
        ],
        "output": _fixed(
            "shelf/stock.py", "fixed: requires human verification: the upper branch returns high"
        ),
    },
    "fixer/WR-02/iteration-1": {
        "edits": [
            {
                "path": "shelf/labels.py",
                "old": '    return name.lower().replace(" ", "-")\n',
                "new": '    return "-".join(name.lower().split())\n',
            }
        ],
        "output": _fixed("shelf/labels.py", "fixed: slug strips and joins the words of the name"),
    },
    # A false positive: the docstring says "below", and the test agrees. No edit.
    "fixer/WR-03/iteration-1": {
        "output": {
            "files_changed": [],
            "summary": "skipped: finding not reproducible: the docstring and tests define "
            "'below' as strictly less than",
            "concerns": None,
        }
    },
}


def _finding(
    fid: int, severity: str, title: str, file: str, line: int, **extra: Any
) -> dict[str, Any]:
    return {
        "id": fid,
        "severity": severity,
        "title": title,
        "body": extra.pop("body", title),
        "file": file,
        "line_start": line,
        "line_end": line,
        "confidence": extra.pop("confidence", 0.9),
        "criterion": extra.pop("criterion", "tests/ describe the intended behaviour"),
        "verdict": extra.pop("verdict", "confirmed"),
        "evidence": extra.pop("evidence", None),
    }


# Findings for fix-findings, as a ReviewOutput envelope. 1 and 2 were confirmed by a verifier
# (they carry evidence); 3 has none, so the pre-gate checks it first.
FINDINGS: dict[str, Any] = {
    "schema_version": "v1",
    "findings": [
        _finding(
            1,
            "P0",
            "parse_count accepts negative counts",
            "shelf/stock.py",
            25,
            evidence="verified: parse_count('-4') returns -4 (tests/test_stock.py)",
        ),
        _finding(
            2,
            "P1",
            "label truncates fractional quantities",
            "shelf/labels.py",
            11,
            evidence="verified: label('rope', 2.5) returns 'rope: 2'",
        ),
        _finding(3, "P1", "restock_needed skips items at the threshold", "shelf/stock.py", 20),
    ],
    "checks_run": ["shelf/stock.py", "shelf/labels.py"],
}


def _verdict(fid: int, verdict: str, evidence: str) -> dict[str, Any]:
    finding = next(f for f in FINDINGS["findings"] if f["id"] == fid)
    return {
        "output": {
            "schema_version": "v1",
            "findings": [{**finding, "verdict": verdict, "evidence": evidence}],
            "checks_run": [f"finding {fid}: {evidence}"],
        }
    }


def _edit(path: str, old: str, new: str, summary: str) -> dict[str, Any]:
    return {
        "edits": [{"path": path, "old": old, "new": new}],
        "output": _fixed(path, summary),
    }


FIX_FINDINGS_SCRIPT: dict[str, Any] = {
    # Finding 1: two attempts that do not refuse negative counts; escalated after round 2.
    "fixer/1/round-1": _edit(
        "shelf/stock.py",
        "    return int(text)\n",
        "    return abs(int(text))\n",
        "fixed: negative counts become positive",
    ),
    "verifier/1/round-1": _verdict(1, "confirmed", "parse_count('-4') returns 4: no ValueError"),
    "fixer/1/round-2": _edit(
        "shelf/stock.py",
        "    return abs(int(text))\n",
        "    return max(0, int(text))\n",
        "fixed: negative counts are clamped to zero",
    ),
    "verifier/1/round-2": _verdict(1, "confirmed", "parse_count('-4') returns 0: no ValueError"),
    # Finding 2: fixed in round 1; the verifier no longer finds the problem.
    "fixer/2/round-1": _edit(
        "shelf/labels.py",
        '    return "%s: %d" % (name, quantity)\n',
        '    return f"{name}: {quantity}"\n',
        "fixed: label keeps the quantity as given",
    ),
    "verifier/2/round-1": _verdict(2, "rejected", "label('rope', 2.5) == 'rope: 2.5'"),
    # Finding 3: the pre-gate finds it is not real.
    "verifier/3/pre-gate": _verdict(
        3, "rejected", "the docstring says 'below'; tests expect items at the threshold skipped"
    ),
}
