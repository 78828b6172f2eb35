"""fix-engine: a mini-PRD's acceptance criteria, each implemented and verified, one commit each."""

from fixloop.lazy import exports

# Imported on first use (fixloop/lazy.py says why); the imports below are for type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from fixloop.workflows.fix_engine.result import FixEngineResult
    from fixloop.workflows.fix_engine.section import MAX_ATTEMPTS, FixEngineOptions
    from fixloop.workflows.fix_engine.workflow import FixEngine, run_fix_engine

__all__ = ["MAX_ATTEMPTS", "FixEngine", "FixEngineOptions", "FixEngineResult", "run_fix_engine"]

__getattr__ = exports(
    __name__,
    {
        "FixEngine": "fixloop.workflows.fix_engine.workflow:FixEngine",
        "FixEngineOptions": "fixloop.workflows.fix_engine.section:FixEngineOptions",
        "FixEngineResult": "fixloop.workflows.fix_engine.result:FixEngineResult",
        "MAX_ATTEMPTS": "fixloop.workflows.fix_engine.section:MAX_ATTEMPTS",
        "run_fix_engine": "fixloop.workflows.fix_engine.workflow:run_fix_engine",
    },
)
