"""review: the reviewer role headless; a REVIEW.md or findings JSON the fixers take as they are."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from fixloop.workflows.review.plan import ReviewFormat, ReviewOptions
    from fixloop.workflows.review.workflow import Review, ReviewResult, run_review

__all__ = ["Review", "ReviewFormat", "ReviewOptions", "ReviewResult", "run_review"]

__getattr__ = exports(
    __name__,
    {
        "Review": "fixloop.workflows.review.workflow:Review",
        "ReviewFormat": "fixloop.workflows.review.plan:ReviewFormat",
        "ReviewOptions": "fixloop.workflows.review.plan:ReviewOptions",
        "ReviewResult": "fixloop.workflows.review.workflow:ReviewResult",
        "run_review": "fixloop.workflows.review.workflow:run_review",
    },
)
