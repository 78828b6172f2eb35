"""Weighted scores, recomputed: a verifier's word on each dimension, never its total.

Pure functions of plain data, standard library only, so that Claude Code following the workflow
by hand recomputes with exactly this code (`workflows/lib/execute_wave.py score`).

- Each dimension is scored 0-10 by the reviewer (logic tasks) or the verifier (design tasks).
  Keys are mapped to the task type's dimensions: a known alias (`color` -> `colors`) or a
  spelling variant (`errorHandling`, `error-handling`) is mapped with a warning; a key that
  names no dimension is dropped with a warning; a missing dimension counts 0, with a warning.
  A value that is not a number counts 0; one outside 0-10 is clamped; both with a warning.
- total = round(sum(score * weight) / (sum(weight) * 10) * 100), halves rounded up.
- pass = total >= threshold AND every dimension >= the dimension threshold.
- A fix attempt regressed when the total dropped by more than the tolerance, or a dimension that
  met the dimension threshold before no longer does: it is rolled back to the checkpoint.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

DESIGN_WEIGHTS: Mapping[str, float] = {
    "layout": 2.0,
    "spacing": 1.5,
    "colors": 1.5,
    "typography": 1.0,
    "borders": 0.5,
    "shadows": 0.5,
    "icons_images": 1.0,
    "completeness": 2.0,
}
LOGIC_WEIGHTS: Mapping[str, float] = {
    "correctness": 2.5,
    "completeness": 2.0,
    "error_handling": 1.5,
    "code_quality": 1.5,
    "type_safety": 1.0,
    "integration": 1.5,
}
WEIGHTS: Mapping[str, Mapping[str, float]] = {"design": DESIGN_WEIGHTS, "logic": LOGIC_WEIGHTS}
# Names reviewers write for a dimension; None: a known name that matches no dimension.
KEY_ALIASES: Mapping[str, str | None] = {
    "color": "colors",
    "colour": "colors",
    "colours": "colors",
    "color_tokens": "colors",
    "color_accuracy": "colors",
    "border": "borders",
    "border_radius": "borders",
    "shadow": "shadows",
    "icons": "icons_images",
    "images": "icons_images",
    "layout_structure": "layout",
    "layout_accuracy": "layout",
    "spacing_alignment": "spacing",
    "spacing_accuracy": "spacing",
    "component_completeness": "completeness",
    "responsive_behavior": "layout",
    "visual_fidelity": "completeness",
    "interaction_states": None,
    "interaction": None,
    "typing": "type_safety",
    "types": "type_safety",
    "errors": "error_handling",
    "quality": "code_quality",
}
MAX_SCORE = 10.0
# Why a result file cannot be scored, or OK.
OK, MISSING_RESULT, PARSE_ERROR, INVALID_SCORES = (
    "OK",
    "MISSING_RESULT",
    "PARSE_ERROR",
    "INVALID_SCORES",
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Score:
    scores: dict[str, float]  # every dimension of the type, as counted
    total: int
    passed: bool
    failed_dimensions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "scores": self.scores,
            "total": self.total,
            "passed": self.passed,
            "failed_dimensions": list(self.failed_dimensions),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Thresholds:
    total: float = 80.0
    dimension: float = 6.0
    drop_tolerance: float = 3.0


@dataclass(frozen=True)
class Mapped:
    scores: dict[str, float]
    warnings: list[str] = field(default_factory=list)


def spelling(key: str) -> str:
    """`errorHandling`, `Error-Handling`, `error handling` → `error_handling`."""
    return re.sub(r"[\s\-]+", "_", _CAMEL.sub("_", key.strip())).lower()


def map_keys(raw: Mapping[str, object], kind: str) -> Mapped:
    """The raw scores under the dimensions of `kind`, with a warning for every liberty taken."""
    weights = WEIGHTS[kind]
    mapped = Mapped({})
    for key, value in raw.items():
        name = spelling(str(key))
        target = name if name in weights else KEY_ALIASES.get(name)
        if target is None or target not in weights:
            mapped.warnings.append(f'key "{key}" dropped (not a {kind} dimension)')
            continue
        if target in mapped.scores:
            mapped.warnings.append(f'key "{key}" dropped ("{target}" is already scored)')
            continue
        if key != target:
            mapped.warnings.append(f'key "{key}" mapped to "{target}"')
        mapped.scores[target] = _number(key, value, mapped.warnings)
    for dimension in weights:
        if dimension not in mapped.scores:
            mapped.warnings.append(f'missing dimension "{dimension}" counts 0')
    return mapped


def _number(key: object, value: object, warnings: list[str]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        warnings.append(f'key "{key}": {value!r} is not a score; counts 0')
        return 0.0
    if not 0 <= value <= MAX_SCORE:
        clamped = min(max(float(value), 0.0), MAX_SCORE)
        warnings.append(f'key "{key}": {value} is outside 0-10; counts {clamped:g}')
        return clamped
    return float(value)


def round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def recompute(raw: Mapping[str, object], kind: str, thresholds: Thresholds) -> Score:
    """The score of `raw` dimension scores for a task of type `kind` (design or logic)."""
    weights = WEIGHTS[kind]
    mapped = map_keys(raw, kind)
    scores = {dimension: mapped.scores.get(dimension, 0.0) for dimension in weights}
    weighted = sum(scores[d] * w for d, w in weights.items())
    total = round_half_up(weighted / (sum(weights.values()) * MAX_SCORE) * 100)
    failed = tuple(d for d, s in scores.items() if s < thresholds.dimension)
    passed = total >= thresholds.total and not failed
    return Score(scores, total, passed, failed, tuple(mapped.warnings))


def zero(kind: str) -> Score:
    """What a missing or invalid result counts: nothing, and failed."""
    scores = dict.fromkeys(WEIGHTS[kind], 0.0)
    return Score(scores, 0, False, tuple(scores))


def regression(current: Score, best: Score, thresholds: Thresholds) -> str | None:
    """Why `current` is worse than `best` beyond what a fix may cost, or None."""
    drop = best.total - current.total
    if drop > thresholds.drop_tolerance:
        return (
            f"total dropped {drop} points ({best.total} -> {current.total}), "
            f"more than the tolerance {thresholds.drop_tolerance:g}"
        )
    for dimension, before in best.scores.items():
        now = current.scores.get(dimension, 0.0)
        if before >= thresholds.dimension > now:
            return (
                f'dimension "{dimension}" fell from {before:g} to {now:g}, '
                f"under the threshold {thresholds.dimension:g}"
            )
    return None


def check_result(text: str | None) -> tuple[str, dict[str, object]]:
    """A result file's text (None when it is missing) → (OK, its raw scores) or (why not, {})."""
    if text is None:
        return MISSING_RESULT, {}
    try:
        data = json.loads(text)
    except ValueError:
        return PARSE_ERROR, {}
    scores = data.get("scores") if isinstance(data, dict) else None
    if not isinstance(scores, dict) or not scores:
        return INVALID_SCORES, {}
    return OK, {str(key): value for key, value in scores.items()}


__all__ = [
    "DESIGN_WEIGHTS",
    "INVALID_SCORES",
    "KEY_ALIASES",
    "LOGIC_WEIGHTS",
    "MISSING_RESULT",
    "OK",
    "PARSE_ERROR",
    "WEIGHTS",
    "Score",
    "Thresholds",
    "check_result",
    "map_keys",
    "recompute",
    "regression",
    "round_half_up",
    "spelling",
    "zero",
]
