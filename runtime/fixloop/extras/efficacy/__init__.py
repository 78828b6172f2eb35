"""The efficacy harness: how often fix-issue (or another agent) resolves a frozen corpus of
issues, at what cost, in turns and wall time. See docs/efficacy.md."""

from fixloop.extras.efficacy.corpus import Corpus, Task, freeze, load_corpus
from fixloop.extras.efficacy.harness import BenchOptions, export_tasks, run_bench
from fixloop.extras.efficacy.outcome import BenchResult, TaskOutcome
from fixloop.extras.efficacy.report import markdown

__all__ = [
    "BenchOptions",
    "BenchResult",
    "Corpus",
    "Task",
    "TaskOutcome",
    "export_tasks",
    "freeze",
    "load_corpus",
    "markdown",
    "run_bench",
]
