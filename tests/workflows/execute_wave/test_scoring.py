"""Recomputed scores, table-driven: weights, aliases, missing dimensions, pass rules, regression."""

from __future__ import annotations

import pytest

from fixloop.workflows.execute_wave.scoring import (
    INVALID_SCORES,
    MISSING_RESULT,
    OK,
    PARSE_ERROR,
    Score,
    Thresholds,
    check_result,
    recompute,
    regression,
    round_half_up,
    spelling,
)

LOGIC_ALL_8 = dict.fromkeys(
    ("correctness", "completeness", "error_handling", "code_quality", "type_safety", "integration"),
    8,
)
DESIGN_ALL_9 = dict.fromkeys(
    (
        "layout",
        "spacing",
        "colors",
        "typography",
        "borders",
        "shadows",
        "icons_images",
        "completeness",
    ),
    9,
)

# (case, kind, raw scores, expected total, passed, warnings that must appear)
RECOMPUTE = [
    ("logic, all 8", "logic", LOGIC_ALL_8, 80, True, []),
    ("design, all 9", "design", DESIGN_ALL_9, 90, True, []),
    (
        "weights matter: correctness 2.5 of 10",
        "logic",
        {**LOGIC_ALL_8, "correctness": 4},
        70,
        False,
        [],
    ),
    ("design weights: layout 2 of 10", "design", {**DESIGN_ALL_9, "layout": 4}, 80, False, []),
    (
        "total reached but one dimension under 6",
        "logic",
        {**LOGIC_ALL_8, "type_safety": 5},
        77,
        False,
        [],
    ),
    (
        "a missing dimension counts 0",
        "logic",
        {k: v for k, v in LOGIC_ALL_8.items() if k != "integration"},
        68,
        False,
        ['missing dimension "integration" counts 0'],
    ),
    (
        "a known alias is mapped",
        "design",
        {**{k: v for k, v in DESIGN_ALL_9.items() if k != "colors"}, "color": 9},
        90,
        True,
        ['key "color" mapped to "colors"'],
    ),
    (
        "spelling variants are mapped",
        "logic",
        {
            "Correctness": 8,
            "completeness": 8,
            "error-handling": 8,
            "codeQuality": 8,
            "type safety": 8,
            "integration": 8,
        },
        80,
        True,
        [
            'key "error-handling" mapped to "error_handling"',
            'key "codeQuality" mapped to "code_quality"',
        ],
    ),
    (
        "an unknown key is dropped",
        "logic",
        {**LOGIC_ALL_8, "vibes": 10},
        80,
        True,
        ['key "vibes" dropped (not a logic dimension)'],
    ),
    (
        "a key known to match nothing is dropped",
        "design",
        {**DESIGN_ALL_9, "interaction": 10},
        90,
        True,
        ['key "interaction" dropped (not a design dimension)'],
    ),
    (
        "an alias does not overwrite the real key",
        "design",
        {**DESIGN_ALL_9, "color": 0},
        90,
        True,
        ['key "color" dropped ("colors" is already scored)'],
    ),
    (
        "a claimed total is ignored",
        "logic",
        {**LOGIC_ALL_8, "total": 100},
        80,
        True,
        ['key "total" dropped (not a logic dimension)'],
    ),
    (
        "a non-number counts 0",
        "logic",
        {**LOGIC_ALL_8, "correctness": "9"},
        60,
        False,
        ["key \"correctness\": '9' is not a score; counts 0"],
    ),
    (
        "a boolean is not a score",
        "logic",
        {**LOGIC_ALL_8, "correctness": True},
        60,
        False,
        ['key "correctness": True is not a score; counts 0'],
    ),
    (
        "scores above 10 are clamped",
        "logic",
        {**LOGIC_ALL_8, "correctness": 50},
        85,
        True,
        ['key "correctness": 50 is outside 0-10; counts 10'],
    ),
    (
        "halves round up, as the seed's Math.round",
        "logic",
        {**LOGIC_ALL_8, "type_safety": 8.5},
        81,
        True,
        [],
    ),
    ("nothing at all", "logic", {}, 0, False, ['missing dimension "correctness" counts 0']),
]


@pytest.mark.parametrize(
    ("kind", "raw", "total", "passed", "warnings"),
    [case[1:] for case in RECOMPUTE],
    ids=[case[0] for case in RECOMPUTE],
)
def test_recompute(
    kind: str, raw: dict[str, object], total: int, passed: bool, warnings: list[str]
) -> None:
    score = recompute(raw, kind, Thresholds(80, 6))
    assert (score.total, score.passed) == (total, passed)
    assert set(score.scores) == set(DESIGN_ALL_9 if kind == "design" else LOGIC_ALL_8)
    for warning in warnings:
        assert warning in score.warnings


def test_thresholds_are_the_callers() -> None:
    assert recompute(LOGIC_ALL_8, "logic", Thresholds(81, 6)).passed is False
    assert (
        recompute({**LOGIC_ALL_8, "integration": 7}, "logic", Thresholds(70, 7.5)).passed is False
    )


@pytest.mark.parametrize(
    ("best", "current", "expected"),
    [
        ({"correctness": 8}, {"correctness": 8}, None),
        ({"correctness": 8}, {"correctness": 7}, None),  # a drop of 2.5 points is tolerated
        ({"correctness": 8}, {"correctness": 6}, "total dropped 5 points"),
        (
            {"correctness": 6, "integration": 5},
            {"correctness": 5.6, "integration": 5},
            'dimension "correctness" fell from 6 to 5.6',
        ),
        ({"correctness": 5}, {"correctness": 4.8}, None),  # it did not pass before
    ],
)
def test_regression(
    best: dict[str, float], current: dict[str, float], expected: str | None
) -> None:
    def as_score(values: dict[str, float]) -> Score:
        full = {**LOGIC_ALL_8, **values}
        return recompute(full, "logic", Thresholds(80, 6))

    found = regression(as_score(current), as_score(best), Thresholds(80, 6, 3))
    if expected is None:
        assert found is None
    else:
        assert found is not None and found.startswith(expected)


@pytest.mark.parametrize(
    ("text", "check"),
    [
        (None, MISSING_RESULT),
        ("{not json", PARSE_ERROR),
        ("[1, 2]", INVALID_SCORES),
        ('{"scores": {}}', INVALID_SCORES),
        ('{"scores": [8, 9]}', INVALID_SCORES),
        ('{"total": 95}', INVALID_SCORES),
        ('{"scores": {"correctness": 8}}', OK),
    ],
)
def test_a_result_file_is_checked_before_it_is_scored(text: str | None, check: str) -> None:
    assert check_result(text)[0] == check


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("errorHandling", "error_handling"),
        ("Error-Handling", "error_handling"),
        (" type safety ", "type_safety"),
        ("icons_images", "icons_images"),
    ],
)
def test_spelling(key: str, expected: str) -> None:
    assert spelling(key) == expected


def test_round_half_up_matches_the_seed() -> None:
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 84.49)] == [1, 2, 3, 84]
