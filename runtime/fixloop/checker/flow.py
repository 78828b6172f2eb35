"""Path analysis: which watched commands have run, and how they ended, on every path to a point.

The analysis executes the syntax tree abstractly. A `World` is one class of execution paths: the
watched commands that ran (in order, each with success or failure), the last exit status (0, 1 or
unknown), the values of status flags (`rc=$?`, `ff_status=0`), what is known about loop word
lists, the EXIT traps in force and whether `set -e` is on. Every construct maps sets of worlds to
sets of worlds: `if`/`elif`/`else`, `&&`/`||`/`!`, loops (to a fixed point), `case`, functions
(inlined at their call), subshells, `exit`/`return`/`break`/`continue`, `set -e` (an unchecked
failure leaves the block), and `trap … EXIT` (its handler runs wherever the block ends).

A document is a sequence of shell runs in step order (fixloop's runner runs a step's blocks in
one shell, under `set -e`; an assistant runs each block on its own): flags, traps and `set -e`
reset between runs while the record of watched commands carries over. A block that
fails stops the run: later blocks are skipped, except blocks of a "finally" step or section,
which run on every path at the end.

`before[event]` holds the worlds that reach a watched event, and `ends` the worlds in which the
run ends: contracts are judged on these (see `evaluate.py`).

This module is the document level: the runs in order, what each run starts from, how it ends
(its EXIT traps, `exit`/`return` codes, failure), and "finally". What each statement inside a run
does to the worlds is in `statement_flow.py`.
"""

from __future__ import annotations

from fixloop.checker.events import CommandEvent, children
from fixloop.checker.statement_flow import StatementFlow
from fixloop.checker.tree import Command, Function, Node_, Seq
from fixloop.checker.worlds import FlowResult, RunFacts, Unit, World


def summarize(unit: Unit) -> tuple[bool, bool]:
    """Whether a shell run can end normally and whether it can fail, whatever came before."""
    ended = Flow({}).block(unit, {World()})
    return any(not w.failed for w in ended), any(w.failed for w in ended)


class Flow:
    """Runs units; `watched` maps id(node) → the events of that node and the names they match."""

    def __init__(self, watched: dict[int, list[tuple[CommandEvent, list[str]]]]) -> None:
        self.result = FlowResult()
        self.statements = StatementFlow(watched, self.result)

    def run(self, units: list[Unit]) -> FlowResult:
        worlds: set[World] = {World()}
        for unit in [u for u in units if not u.finally_]:
            running = {w for w in worlds if not w.failed}
            worlds = {w for w in worlds if w.failed} | self._through(unit, running)
        for unit in [u for u in units if u.finally_]:
            worlds = self._through(unit, {w._replace(failed=False) for w in worlds})
        self.result.ends |= worlds
        return self.result

    def _through(self, unit: Unit, worlds: set[World]) -> set[World]:
        if unit.summary is None:
            return self.block(unit, worlds)
        # No watched command inside: the run only decides whether the world goes on or fails.
        can_end, can_fail = unit.summary
        result = {w.at(0) for w in worlds} if can_end else set()
        if can_fail:
            result |= {w._replace(status=1, failed=True) for w in worlds}
        return result

    def block(self, unit: Unit, worlds: set[World]) -> set[World]:
        """The worlds after one shell run: flags, traps and `set -e` start afresh."""
        if unit.facts is None:
            unit.facts = RunFacts(*scan_run(unit.body), frozenset())
        statements = self.statements
        statements.enter(unit.facts)
        start = {w._replace(status=0, flags=(), traps=(), errexit=unit.errexit) for w in worlds}
        out = statements.node(unit.body, start, cond=False)
        ended = out.normal | out.breaks | out.continues
        for world in out.exits | out.returns:
            ended.add(world._replace(failed=world.status != 0))
            if world.status is None:
                ended.add(world._replace(failed=True))
        finished: set[World] = set()
        for world in ended:
            finished |= self._run_traps(world)
        return {w._replace(traps=(), flags=()) for w in finished}

    def _run_traps(self, world: World) -> set[World]:
        """The EXIT traps in force run where the shell ends; the run's status and failure stay."""
        if not world.traps:
            return {world}
        worlds = {world._replace(traps=(), errexit=False)}
        for trap in world.traps:
            out = self.statements.node(self.statements.traps[trap], worlds, cond=True)
            worlds = out.normal | out.exits | out.returns
        return {w._replace(status=world.status, failed=world.failed) for w in worlds}


def scan_run(body: Seq) -> tuple[dict[str, Function], set[str]]:
    """The functions a shell run defines, and the names it assigns a status to (`rc=$?`)."""
    functions: dict[str, Function] = {}
    flag_names: set[str] = set()
    _scan(body, functions, flag_names)
    return functions, flag_names


def _scan(node: Node_, functions: dict[str, Function], flag_names: set[str]) -> None:
    if isinstance(node, Function):
        functions[node.name] = node
    if isinstance(node, Command):
        for assign in node.assigns:
            shape = assign.value.shape if assign.value is not None else ""
            if shape == "$?" or shape.isdigit():
                flag_names.add(assign.name)
    for child in children(node):
        _scan(child, functions, flag_names)
