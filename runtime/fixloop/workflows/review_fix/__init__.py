"""review-fix: a REVIEW.md's findings, fixed as one verified, atomic commit each."""

from fixloop.workflows.review_fix.outcome import FindingOutcome, ReviewFixResult
from fixloop.workflows.review_fix.plan import MAX_ITERATIONS, ReviewFixOptions, plan_review_fix
from fixloop.workflows.review_fix.workflow import ReviewFix, run_review_fix

__all__ = [
    "MAX_ITERATIONS",
    "FindingOutcome",
    "ReviewFix",
    "ReviewFixOptions",
    "ReviewFixResult",
    "plan_review_fix",
    "run_review_fix",
]
