"""Run budgets: hard caps on what a whole run may spend, shared by every backend.

A per-call cap (turns, `max_cost_usd`, `max_tokens`) bounds one agent call; a `RunBudget` bounds
the run: total cost, input and output tokens, and wall time. Once one is spent no new call
STARTS — users' worst stories are caps that only stopped the current call while the loop kept
launching new ones. A call already running is not killed by the run budget, but its own cost
and token caps are lowered to what the run has left, so a backend that counts them (openai)
cannot overshoot by more than one model turn; one that cannot cap tokens within a call (claude)
overshoots by at most that call.

`BudgetedBackend` wraps any `Backend` (claude, scripted) with a shared `RunBudget`, so workflows
get the same behaviour whichever model they drive.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from fixloop.agents.backend import (
    AgentOutcome,
    AgentRequest,
    Backend,
    StopReason,
    Usage,
    preflight,
)


class BudgetKind(StrEnum):
    COST = "cost"
    TOKENS = "tokens"
    WALL_TIME = "wall_time"


@dataclass(frozen=True)
class BudgetStop:
    """Which run budget is spent, in words a report can print."""

    kind: BudgetKind
    limit: float
    spent: float

    def describe(self) -> str:
        if self.kind is BudgetKind.COST:
            return f"run cost budget spent: ${self.spent:.4f} of ${self.limit:.4f}"
        if self.kind is BudgetKind.TOKENS:
            return f"run token budget spent: {self.spent:.0f} of {self.limit:.0f} tokens"
        return f"run wall-time budget spent: {self.spent:.1f}s of {self.limit:.1f}s"


class RunBudget:
    """Total cost, tokens and wall time one run may use. Thread-safe: parallel executors share
    one."""

    def __init__(
        self,
        max_cost_usd: float | None = None,
        max_wall_s: float | None = None,
        *,
        max_tokens: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_cost_usd is not None and max_cost_usd < 0:
            raise ValueError("max_cost_usd must be >= 0")
        if max_wall_s is not None and max_wall_s < 0:
            raise ValueError("max_wall_s must be >= 0")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        self.max_cost_usd = max_cost_usd
        self.max_wall_s = max_wall_s
        self.max_tokens = max_tokens
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self._spent = Usage()
        self._calls = 0
        self._refused = 0
        self._first_stop: BudgetStop | None = None

    @property
    def spent(self) -> Usage:
        return self._spent

    @property
    def tokens(self) -> int:
        """Input and output tokens spent, as the backends reported them."""
        return self._spent.input_tokens + self._spent.output_tokens

    @property
    def calls(self) -> int:
        """Calls that were allowed to start."""
        return self._calls

    @property
    def refused(self) -> int:
        """Calls refused because the run budget was spent."""
        return self._refused

    @property
    def stopped_by(self) -> BudgetStop | None:
        """The first budget that refused a call in this run, for the run report."""
        return self._first_stop

    def elapsed_s(self) -> float:
        return self._clock() - self._started

    def exhausted(self) -> BudgetStop | None:
        """The budget that is spent now, or None while the run may start another call."""
        if self.max_cost_usd is not None and self._spent.cost_usd >= self.max_cost_usd:
            return BudgetStop(BudgetKind.COST, self.max_cost_usd, self._spent.cost_usd)
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return BudgetStop(BudgetKind.TOKENS, self.max_tokens, self.tokens)
        elapsed = self.elapsed_s()
        if self.max_wall_s is not None and elapsed >= self.max_wall_s:
            return BudgetStop(BudgetKind.WALL_TIME, self.max_wall_s, elapsed)
        return None

    def admit(self, request: AgentRequest) -> AgentRequest | BudgetStop:
        """Start a call: refuse it when spent, else return it with caps lowered to what is left."""
        with self._lock:
            stop = self.exhausted()
            if stop is not None:
                self._refused += 1
                self._first_stop = self._first_stop or stop
                return stop
            self._calls += 1
            return self._capped(request)

    def charge(self, usage: Usage) -> None:
        """Add what a finished call used (also when it was inconclusive: it was still paid)."""
        with self._lock:
            total = self._spent
            self._spent = Usage(
                turns=total.turns + usage.turns,
                input_tokens=total.input_tokens + usage.input_tokens,
                output_tokens=total.output_tokens + usage.output_tokens,
                cost_usd=total.cost_usd + usage.cost_usd,
                duration_s=total.duration_s + usage.duration_s,
            )

    def _capped(self, request: AgentRequest) -> AgentRequest:
        cost, timeout, tokens = request.max_cost_usd, request.timeout_s, request.max_tokens
        if self.max_cost_usd is not None:
            cost = _tighter(cost, self.max_cost_usd - self._spent.cost_usd)
        if self.max_wall_s is not None:
            timeout = _tighter(timeout, self.max_wall_s - self.elapsed_s())
        if self.max_tokens is not None:
            tokens = int(_tighter(tokens, self.max_tokens - self.tokens))
        if (cost, timeout, tokens) == (request.max_cost_usd, request.timeout_s, request.max_tokens):
            return request
        return dataclasses.replace(request, max_cost_usd=cost, timeout_s=timeout, max_tokens=tokens)


def _tighter(cap: float | None, left: float) -> float:
    return left if cap is None else min(cap, left)


class BudgetedBackend:
    """Any backend, gated by a shared run budget: spent means no new call starts."""

    def __init__(self, inner: Backend, budget: RunBudget) -> None:
        self.inner = inner
        self.budget = budget
        self.name = inner.name

    def preflight(self, calls: Sequence[str] = ()) -> None:
        preflight(self.inner, calls)

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        admitted = self.budget.admit(request)
        if isinstance(admitted, BudgetStop):
            return AgentOutcome.inconclusive(
                StopReason.RUN_BUDGET,
                f"{request.key or request.role}: not started: {admitted.describe()}",
            )
        outcome = self.inner.dispatch(admitted)
        self.budget.charge(outcome.usage)
        return outcome
