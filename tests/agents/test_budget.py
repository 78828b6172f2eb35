"""Run budgets: a spent budget refuses to start calls and says which budget stopped the run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fixloop.agents.backend import (
    AgentOutcome,
    AgentRequest,
    OutcomeStatus,
    StopReason,
    Usage,
)
from fixloop.agents.budget import BudgetedBackend, BudgetKind, RunBudget
from fixloop.schemas.results import FixReport


class Clock:
    """A clock the test advances by hand, so wall-time budgets are tested without sleeping."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class PricedModel:
    """A stand-in for the model: every call costs `price` and takes `seconds` of the clock."""

    name = "priced"

    def __init__(self, price: float, clock: Clock | None = None, seconds: float = 0.0) -> None:
        self.price = price
        self.clock = clock
        self.seconds = seconds
        self.seen: list[AgentRequest] = []

    def dispatch(self, request: AgentRequest) -> AgentOutcome:
        self.seen.append(request)
        if self.clock is not None:
            self.clock.now += self.seconds
        report = FixReport(files_changed=["a.py"], summary="done")
        usage = Usage(turns=2, input_tokens=10, output_tokens=5, cost_usd=self.price)
        return AgentOutcome(OutcomeStatus.OK, report, usage=usage)


def request(key: str = "fixer/CR-01", **changes: object) -> AgentRequest:
    base = AgentRequest(
        role="fixer",
        system_prompt="You fix one finding.",
        task="fix it",
        tools=("Read", "Edit"),
        model="sonnet",
        output_schema="FixerResult",
        cwd=Path("/tmp/worktree"),
        key=key,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_cost_budget_refuses_to_start_the_call_after_it_is_spent() -> None:
    budget = RunBudget(max_cost_usd=0.25)
    model = PricedModel(price=0.10)
    backend = BudgetedBackend(model, budget)

    outcomes = [backend.dispatch(request(f"fixer/CR-0{i}")) for i in range(1, 6)]

    assert [o.ok for o in outcomes] == [True, True, True, False, False]
    assert len(model.seen) == 3, "no call may start once the run budget is spent"
    refused = outcomes[3]
    assert refused.reason is StopReason.RUN_BUDGET
    assert "fixer/CR-04: not started" in refused.detail
    assert "run cost budget spent: $0.3000 of $0.2500" in refused.detail
    assert budget.calls == 3
    assert budget.refused == 2
    stop = budget.stopped_by
    assert stop is not None and stop.kind is BudgetKind.COST and stop.limit == 0.25
    assert stop.spent == pytest.approx(0.30)
    assert budget.spent.turns == 6
    assert budget.spent.cost_usd == pytest.approx(0.30)


def test_each_call_cost_cap_is_lowered_to_what_the_run_has_left() -> None:
    budget = RunBudget(max_cost_usd=0.25)
    model = PricedModel(price=0.10)
    backend = BudgetedBackend(model, budget)

    backend.dispatch(request(max_cost_usd=1.0))
    backend.dispatch(request(max_cost_usd=0.05))
    backend.dispatch(request())

    caps = [seen.max_cost_usd for seen in model.seen]
    assert caps[0] == pytest.approx(0.25)
    assert caps[1] == pytest.approx(0.05), "a tighter per-call cap is kept"
    assert caps[2] == pytest.approx(0.05)


def test_wall_time_budget_stops_new_calls_and_says_so() -> None:
    clock = Clock()
    budget = RunBudget(max_wall_s=60.0, clock=clock)
    model = PricedModel(price=0.0, clock=clock, seconds=25.0)
    backend = BudgetedBackend(model, budget)

    first = backend.dispatch(request(timeout_s=600.0))
    second = backend.dispatch(request())
    third = backend.dispatch(request())
    fourth = backend.dispatch(request())

    assert first.ok and second.ok and third.ok
    assert model.seen[0].timeout_s == pytest.approx(60.0), "timeout lowered to time left"
    assert model.seen[1].timeout_s == pytest.approx(35.0)
    assert model.seen[2].timeout_s == pytest.approx(10.0)
    assert fourth.status is OutcomeStatus.INCONCLUSIVE
    assert fourth.reason is StopReason.RUN_BUDGET
    assert "run wall-time budget spent: 75.0s of 60.0s" in fourth.detail
    stop = budget.stopped_by
    assert stop is not None and stop.kind is BudgetKind.WALL_TIME


def test_an_unlimited_budget_passes_requests_through_unchanged() -> None:
    budget = RunBudget()
    model = PricedModel(price=5.0)
    backend = BudgetedBackend(model, budget)
    original = request(max_cost_usd=None, timeout_s=None)

    for _ in range(3):
        assert backend.dispatch(original).ok

    assert all(seen is original for seen in model.seen)
    assert budget.stopped_by is None
    assert budget.exhausted() is None


def test_a_zero_budget_starts_nothing() -> None:
    model = PricedModel(price=0.01)
    backend = BudgetedBackend(model, RunBudget(max_cost_usd=0.0))

    outcome = backend.dispatch(request())

    assert not outcome.ok and outcome.reason is StopReason.RUN_BUDGET
    assert model.seen == []


def test_inconclusive_calls_are_still_charged() -> None:
    class Failing:
        name = "failing"

        def dispatch(self, request: AgentRequest) -> AgentOutcome:
            return AgentOutcome.inconclusive(
                StopReason.MALFORMED, "not JSON", Usage(turns=3, cost_usd=0.2)
            )

    budget = RunBudget(max_cost_usd=0.3)
    backend = BudgetedBackend(Failing(), budget)

    assert backend.dispatch(request()).reason is StopReason.MALFORMED
    assert backend.dispatch(request()).reason is StopReason.MALFORMED
    assert backend.dispatch(request()).reason is StopReason.RUN_BUDGET
    assert budget.spent.cost_usd == pytest.approx(0.4)


def test_negative_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_cost_usd"):
        RunBudget(max_cost_usd=-1.0)
    with pytest.raises(ValueError, match="max_wall_s"):
        RunBudget(max_wall_s=-1.0)


def test_a_token_budget_lowers_each_call_s_cap_and_refuses_once_spent() -> None:
    """Each call of PricedModel uses 15 tokens: with 40, calls get 40, 25, 10 left, then none."""
    budget = RunBudget(max_tokens=40)
    model = PricedModel(0.0)
    backend = BudgetedBackend(model, budget)
    outcomes = [backend.dispatch(request(f"fixer/{n}", max_tokens=30)) for n in range(4)]
    assert [r.max_tokens for r in model.seen] == [30, 25, 10]  # the tighter of the two caps
    assert [o.reason for o in outcomes][-1] is StopReason.RUN_BUDGET
    stop = budget.stopped_by
    assert stop is not None and stop.kind is BudgetKind.TOKENS
    assert stop.describe() == "run token budget spent: 45 of 40 tokens"
    with pytest.raises(ValueError, match="max_tokens"):
        RunBudget(max_tokens=-1)
