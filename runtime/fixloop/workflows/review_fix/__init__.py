"""review-fix: a REVIEW.md's findings, fixed as one verified, atomic commit each."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
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

__getattr__ = exports(
    __name__,
    {
        "FindingOutcome": "fixloop.workflows.review_fix.outcome:FindingOutcome",
        "MAX_ITERATIONS": "fixloop.workflows.review_fix.plan:MAX_ITERATIONS",
        "ReviewFix": "fixloop.workflows.review_fix.workflow:ReviewFix",
        "ReviewFixOptions": "fixloop.workflows.review_fix.plan:ReviewFixOptions",
        "ReviewFixResult": "fixloop.workflows.review_fix.outcome:ReviewFixResult",
        "plan_review_fix": "fixloop.workflows.review_fix.plan:plan_review_fix",
        "run_review_fix": "fixloop.workflows.review_fix.workflow:run_review_fix",
    },
)
