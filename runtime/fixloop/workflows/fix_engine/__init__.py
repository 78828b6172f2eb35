"""fix-engine: a mini-PRD's acceptance criteria, each implemented and verified, one commit each."""

from fixloop.workflows.fix_engine.result import FixEngineResult
from fixloop.workflows.fix_engine.section import MAX_ATTEMPTS, FixEngineOptions
from fixloop.workflows.fix_engine.workflow import FixEngine, run_fix_engine

__all__ = ["MAX_ATTEMPTS", "FixEngine", "FixEngineOptions", "FixEngineResult", "run_fix_engine"]
