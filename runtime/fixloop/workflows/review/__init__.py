"""review: the reviewer role headless; a REVIEW.md or findings JSON the fixers take as they are."""

from fixloop.workflows.review.plan import ReviewFormat, ReviewOptions
from fixloop.workflows.review.workflow import Review, ReviewResult, run_review

__all__ = ["Review", "ReviewFormat", "ReviewOptions", "ReviewResult", "run_review"]
