"""The demo's example repository: a small buggy Python package, its tests, and a code review.

`shelf` is an inventory helper with four real bugs and one thing a reviewer wrongly calls a bug.
Its tests (stdlib `unittest`, so the demo needs nothing installed) fail on the bugs. The review
(`REVIEW.md`, GSD format) lists them, one finding with a title full of shell metacharacters, and
one info finding that the default fix scope leaves alone. What the scripted model does with them
is in `demo/model.py`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

PHASE = "01"
REVIEW_PATH = ".planning/phases/01-shelf/01-REVIEW.md"
HOSTILE_TITLE = '$(touch /tmp/pwned) `id` "; rm -rf ~'

FILES: dict[str, str] = {
    ".gitignore": "__pycache__/\n",
    "README.md": "# shelf\n\nA tiny inventory helper: the fixloop demo's example repository.\n",
    "shelf/__init__.py": '"""shelf: stock levels, prices and labels for a small shop."""\n',
    "shelf/stock.py": '''\
"""Stock levels and prices."""


def average_price(prices):
    """The mean of `prices`; 0.0 when there are none."""
    return sum(prices) / len(prices)


def clamp_quantity(quantity, low, high):
    """`quantity` limited to the range [low, high]."""
    if quantity < low:
        return low
    if quantity > high:
        return low
    return quantity


def restock_needed(levels, threshold):
    """Names of the items whose level is below `threshold`, in input order."""
    return [name for name, level in levels.items() if level < threshold]


def parse_count(text):
    """A stock count from user input: a whole number, never negative."""
    return int(text)
''',
    "shelf/labels.py": '''\
"""Shelf labels."""


def slug(name):
    """A label id: the lower-cased name, words joined by '-'."""
    return name.lower().replace(" ", "-")


def label(name, quantity):
    """The text printed on a shelf label."""
    return "%s: %d" % (name, quantity)
''',
    "tests/__init__.py": "",
    "tests/test_stock.py": """\
import unittest

from shelf.stock import average_price, clamp_quantity, parse_count, restock_needed


class StockTest(unittest.TestCase):
    def test_average_price(self):
        self.assertEqual(average_price([1.0, 2.0, 3.0]), 2.0)

    def test_average_price_of_nothing_is_zero(self):
        self.assertEqual(average_price([]), 0.0)

    def test_clamp_quantity_above_the_range(self):
        self.assertEqual(clamp_quantity(15, 0, 10), 10)

    def test_restock_needed_is_strictly_below(self):
        self.assertEqual(restock_needed({"nails": 3, "screws": 5}, 5), ["nails"])

    def test_parse_count_refuses_negative_numbers(self):
        with self.assertRaises(ValueError):
            parse_count("-4")
""",
    "tests/test_labels.py": """\
import unittest

from shelf.labels import label, slug


class LabelTest(unittest.TestCase):
    def test_slug_ignores_surrounding_spaces(self):
        self.assertEqual(slug("  Big Box "), "big-box")

    def test_label(self):
        self.assertEqual(label("nails", 3), "nails: 3")

    def test_label_keeps_fractional_quantities(self):
        self.assertEqual(label("rope", 2.5), "rope: 2.5")
""",
}

REVIEW = f"""\
---
phase: "{PHASE}"
reviewed: "2026-01-15T09:30:00Z"
depth: standard
files_reviewed: 2
files_reviewed_list:
  - shelf/stock.py
  - shelf/labels.py
findings:
  critical: 2
  warning: 3
  info: 1
  total: 6
status: issues_found
---

# Phase {PHASE}: Code Review

## Critical Issues

### CR-01: average_price divides by zero on an empty list
**File:** shelf/stock.py:6
**Issue:** `sum(prices) / len(prices)` raises ZeroDivisionError for `[]`, but the docstring
promises 0.0.
**Fix:** Return 0.0 when `prices` is empty:

```python
if not prices:
    return 0.0
```

### CR-02: parse_count accepts negative counts
**File:** shelf/stock.py:25
**Issue:** `int("-4")` is returned as is; a negative stock count corrupts the inventory.
**Fix:** Raise ValueError for negative numbers.

## Warnings

### WR-01: clamp_quantity returns the lower bound for quantities above the range
**File:** shelf/stock.py:14
**Issue:** wrong condition result: `quantity > high` returns `low`.
**Fix:** Return `high` in that branch.

### WR-02: {HOSTILE_TITLE}
**File:** shelf/labels.py:6
**Issue:** `slug("  Big Box ")` keeps the surrounding spaces as dashes.
**Fix:** Strip the name before joining its words.

### WR-03: restock_needed misses items exactly at the threshold
**File:** shelf/stock.py:20
**Issue:** `level < threshold` should be `level <= threshold`.
**Fix:** Compare with `<=`.

## Info

### IN-01: label uses %-formatting
**File:** shelf/labels.py:11
**Issue:** old-style formatting.
**Fix:** Use an f-string.
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)


def build_example(repo: Path) -> None:
    """Create the example repository at `repo` (which must not exist or be empty): one commit."""
    repo.mkdir(parents=True, exist_ok=True)
    for relative, content in {**FILES, REVIEW_PATH: REVIEW}.items():
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _git(repo, "config", "user.name", "fixloop demo")
    _git(repo, "config", "user.email", "demo@fixloop.invalid")
    _git(repo, "config", "commit.gpgsign", "false")
    _git(repo, "add", "--", *FILES, REVIEW_PATH)
    _git(repo, "commit", "--quiet", "-m", "shelf: stock, labels and their tests; phase 01 review")
