"""Statements: how each construct of one shell run maps the worlds reaching it to those leaving.

The transfer function of every node of the tree (`tree.py`): a set of `World`s goes in, an
`Outcome` comes out, sorting the worlds by how they leave: normally, by `exit`, `return`, `break`
or `continue`. `if`/`elif`/`else`, `&&`/`||`/`!`, pipelines, loops (to a fixed point), `case`,
subshells; and simple commands: watched commands are marked with their success or failure, shell
functions are inlined at their call, `exit`/`return` codes, `set -e` (an unchecked failure leaves
the run), `[ "$flag" -eq 0 ]` decided from known status flags, `rc=$?` recorded, `trap … EXIT`
registered.

Separate from `flow.py`, which drives these over a document: the shell runs in step order, what
is reset between them, the EXIT traps run where a run ends, and "finally" steps. This module sees
one run at a time and knows nothing of steps.
"""

from __future__ import annotations

from fixloop.checker.events import CommandEvent, iter_commands, visit
from fixloop.checker.status_tests import arith_test, bracket_test, errexit_setting, exit_code
from fixloop.checker.tree import (
    AndOr,
    Arith,
    Broken,
    Case,
    Command,
    Function,
    If,
    Loop,
    Node_,
    Not,
    Pipeline,
    Seq,
    Subshell,
)
from fixloop.checker.worlds import (
    FlowResult,
    HelperSummary,
    Outcome,
    RunFacts,
    Status,
    World,
    split,
)

_ALWAYS_OK = {
    "echo",
    "printf",
    "true",
    ":",
    "local",
    "export",
    "declare",
    "readonly",
    "typeset",
    "shift",
    "unset",
    "set",
    "trap",
    "wait",
}
_MAX_LOOP_ROUNDS = 8
_MAX_CALL_DEPTH = 4


class StatementFlow:
    """Runs the statements of one shell run at a time.

    `watched` maps id(node) → the events of that node and the names they match; what reaches a
    watched event is recorded in `result.before`. What is known of the run whatever is watched
    (its functions, status-flag names, helpers' summaries: `RunFacts`) is given by the caller
    before each run (`enter`); EXIT trap handlers are kept in `traps` by id of their `trap`
    command, for the caller to run where the run ends.
    """

    def __init__(
        self, watched: dict[int, list[tuple[CommandEvent, list[str]]]], result: FlowResult
    ) -> None:
        self.watched = watched
        self.result = result
        self.traps: dict[int, Seq] = {}
        self.depth = 0
        self.enter(RunFacts({}, set(), frozenset()))

    def enter(self, facts: RunFacts) -> None:
        """Walk the run `facts` describes next."""
        self.functions = facts.functions
        self.flag_names = facts.flag_names
        # Step-library helpers (not defined in the run itself): a call to one whose body holds
        # no watched command is replaced by its summary (how it can end), computed once.
        self.helpers = facts.helpers
        self._reach = facts.reach
        self._summaries = facts.helper_summaries
        self.facts = facts

    # -- statements ---------------------------------------------------------------------------

    def node(self, node: Node_ | None, worlds: set[World], cond: bool) -> Outcome:
        if node is None or not worlds:
            return Outcome(normal=set(worlds))
        if isinstance(node, Command) or id(node) not in self.watched:
            return self._dispatch(node, worlds, cond)
        # A compound statement with an output redirection: `{ …; } > "$file"`.
        out = self._dispatch(node, self._watch(node, worlds), cond)
        out.normal = self._mark(node, out.normal)
        return out

    def _dispatch(self, node: Node_, worlds: set[World], cond: bool) -> Outcome:
        if isinstance(node, Command):
            return self.command(node, worlds, cond)
        if isinstance(node, Seq):
            return self.seq(node.items, worlds, cond)
        if isinstance(node, AndOr):
            return self.andor(node, worlds, cond)
        if isinstance(node, Not):
            out = self.node(node.body, worlds, cond=True)
            out.normal = {w.at(None if w.status is None else 1 - w.status) for w in out.normal}
            return out
        if isinstance(node, Pipeline):
            return self.pipeline(node, worlds, cond)
        if isinstance(node, If):
            return self.if_(node, worlds, cond)
        if isinstance(node, Loop):
            return self.loop(node, worlds)
        if isinstance(node, Case):
            result = Outcome(normal={w.at(0) for w in worlds})
            for arm in node.arms:
                result.absorb(self.node(arm, worlds, cond))
            return result
        if isinstance(node, Function):
            return Outcome(normal={w.at(0) for w in worlds})
        if isinstance(node, Subshell):
            out = self.node(node.body, worlds, cond)
            return Outcome(normal=out.normal | out.exits | out.returns)
        if isinstance(node, (Arith, Broken)):
            return self._errexit({arith_test(node, w) for w in worlds}, cond)
        return Outcome(normal=set(worlds))

    def seq(self, items: list[Node_], worlds: set[World], cond: bool) -> Outcome:
        result = Outcome()
        current = set(worlds)
        for index, item in enumerate(items):
            last = index == len(items) - 1
            out = self.node(item, current, cond and last)
            result.absorb(out, normal=False)
            current = out.normal
        result.normal = current
        return result

    def andor(self, node: AndOr, worlds: set[World], cond: bool) -> Outcome:
        """`a && b || c` from the left: each link runs on the worlds its operator lets through;
        the others go on past it. Every link but the last is tested, so `set -e` spares it."""
        result = self.node(node.first, worlds, cond=True)
        for index, (op, right) in enumerate(node.rest):
            last = index == len(node.rest) - 1
            ok, bad = split(result.normal)
            go, stay = (ok, bad) if op == "&&" else (bad, ok)
            out = self.node(right, go, cond if last else True)
            out.absorb(result, normal=False)
            out.normal |= stay
            result = out
        return result

    def pipeline(self, node: Pipeline, worlds: set[World], cond: bool) -> Outcome:
        current = set(worlds)
        for item in node.items:
            out = self.node(item, current, cond=True)
            current = out.normal | out.exits | out.returns
        return self._errexit(current, cond)

    def if_(self, node: If, worlds: set[World], cond: bool) -> Outcome:
        result = Outcome()
        pending = set(worlds)
        for test, body in node.clauses:
            out = self.node(test, pending, cond=True)
            result.absorb(out, normal=False)
            ok, bad = split(out.normal)
            result.absorb(self.node(body, ok, cond))
            pending = bad
        if node.orelse is not None:
            result.absorb(self.node(node.orelse, pending, cond))
        else:
            result.normal |= {w.at(0) for w in pending}
        return result

    def loop(self, node: Loop, worlds: set[World]) -> Outcome:
        result = Outcome()
        entering: set[World] = set()
        if node.kind in ("for", "select"):
            key = " ".join(w.shape for w in node.words) if node.words is not None else "$@"
            fixed = node.words is not None and all(w.literal is not None for w in node.words)
            for world in worlds:
                known = dict(world.lists).get(key)
                if fixed:
                    (entering if node.words else result.normal).add(world)
                    continue
                if known is not False:
                    lists = (*(i for i in world.lists if i[0] != key), (key, True))
                    entering.add(world._replace(lists=lists))
                if known is not True:
                    lists = (*(i for i in world.lists if i[0] != key), (key, False))
                    result.normal.add(world._replace(lists=lists, status=0))
        else:
            entering = set(worlds)
        seen: set[World] = set()
        frontier = entering
        for _ in range(_MAX_LOOP_ROUNDS):
            frontier = frontier - seen
            if not frontier:
                break
            seen |= frontier
            body_in = frontier
            if node.cond is not None:
                test = self.node(node.cond, frontier, cond=True)
                result.absorb(test, normal=False)
                ok, bad = split(test.normal)
                body_in, leave = (ok, bad) if node.kind == "while" else (bad, ok)
                result.normal |= {w.at(0) for w in leave}
            out = self.node(node.body, body_in, cond=False)
            result.exits |= out.exits
            result.returns |= out.returns
            result.normal |= {w.at(0) for w in out.breaks}
            back = out.normal | out.continues
            if node.cond is None:
                result.normal |= back
            frontier = back
        return result

    # -- simple commands ----------------------------------------------------------------------

    def _watch(self, node: Node_, worlds: set[World]) -> set[World]:
        events = self.watched.get(id(node), [])
        for event, _ in events:
            self.result.before.setdefault(event.id, set()).update(worlds)
        return worlds

    def _mark(self, node: Node_, worlds: set[World]) -> set[World]:
        events = [(e, names) for e, names in self.watched.get(id(node), []) if names]
        if not events:
            return worlds
        marked: set[World] = set()
        for world in worlds:
            for status, verdict in ((0, "ok"), (1, "fail")):
                if world.status is not None and world.status != status:
                    continue
                new = world.at(status)
                for event, names in events:
                    for name in names:
                        new = new.with_mark((name, verdict, event.id))
                marked.add(new)
        return marked

    def _errexit(self, worlds: set[World], cond: bool) -> Outcome:
        normal: set[World] = set()
        exits: set[World] = set()
        for world in worlds:
            if world.errexit and not cond and world.status != 0:
                exits.add(world.at(1))
                if world.status is None:
                    normal.add(world.at(0))
            else:
                normal.add(world)
        return Outcome(normal, exits)

    def _substitutions(self, command: Command, worlds: set[World]) -> tuple[set[World], bool]:
        current = set(worlds)
        for sub in command.substitutions:
            out = self.node(sub, current, cond=True)
            current = out.normal | out.exits | out.returns
        return current, bool(command.substitutions)

    def command(self, command: Command, worlds: set[World], cond: bool) -> Outcome:
        worlds, substituted = self._substitutions(command, worlds)
        worlds = self._watch(command, worlds)
        name = command.name
        if name is None and command.words:
            return self._errexit(self._mark(command, {w.at(None) for w in worlds}), cond)
        if name is None:
            return self._errexit(self._assign(command, worlds, substituted), cond)
        if name in ("exit", "return"):
            keep, code = exit_code(command)
            bucket = {w.at(w.status if keep else code) for w in worlds}
            return Outcome(exits=bucket) if name == "exit" else Outcome(returns=bucket)
        if name in ("break", "continue"):
            return Outcome(breaks=worlds) if name == "break" else Outcome(continues=worlds)
        if name == "set":
            args = [w.literal for w in command.words[1:]]
            return Outcome(
                normal={
                    w._replace(status=0, errexit=errexit_setting(args, w.errexit)) for w in worlds
                }
            )
        if name == "trap" and command.trap is not None:
            return Outcome(normal=self._trap(command, worlds))
        if name == "false":
            return self._errexit(self._mark(command, {w.at(1) for w in worlds}), cond)
        if name in ("[", "[[", "test"):
            decided = {bracket_test(command, w) for w in worlds}
            return self._errexit(self._mark(command, decided), cond)
        if name in self.helpers and self._summarizable(name):
            return self._summarized(command, name, worlds, cond)
        if name in self.functions and self.depth < _MAX_CALL_DEPTH:
            self.depth += 1
            out = self.node(self.functions[name].body, worlds, cond)
            self.depth -= 1
            back = out.normal | out.returns
            # A call that returns non-zero is a failed command: under `set -e` the shell ends.
            called = self._errexit(self._mark(command, back), cond)
            called.exits |= out.exits
            return called
        if command.assigns and name in ("local", "export", "declare", "readonly", "typeset"):
            # `local rc=$?` reads the status of the command before it; the builtin itself then
            # succeeds, masking any `$(…)` in its values, as bash does.
            return self._errexit(self._assign(command, worlds, substituted=False), cond)
        status: Status = 0 if name in _ALWAYS_OK else None
        worlds = {w.at(status) for w in worlds}
        return self._errexit(self._mark(command, worlds), cond)

    def _summarizable(self, name: str) -> bool:
        """Does calling the helper `name` reach no watched command (and set no trap or `set`)?"""
        reached = self._reach.get(name)
        if reached is None:
            library = self.facts.sharing_library(name)
            reached = library.reach.get(name) if library is not None else None
            if reached is None:
                reached = self._reached(name)
                if library is not None:
                    library.reach[name] = reached
            self._reach[name] = reached
        return -1 not in reached and reached.isdisjoint(self.watched)

    def _reached(self, name: str) -> frozenset[int]:
        """The ids of the nodes of `name` and of every helper it calls, directly or not; -1 when
        one of them sets a trap or runs `set`. Found over the whole call graph at once, so a
        helper calling itself or a caller gets the same answer whichever is asked first."""
        reach: set[int] = set()
        seen = {name}
        pending = [name]
        while pending:
            body = self.functions[pending.pop()].body
            reach.update(id(node) for node, _ in visit(body))
            for command in iter_commands(body):
                called = command.name
                if called in ("trap", "set"):
                    reach.add(-1)  # never summarized
                if called is not None and called in self.helpers and called not in seen:
                    seen.add(called)
                    pending.append(called)
        return frozenset(reach)

    def _summarized(self, command: Command, name: str, worlds: set[World], cond: bool) -> Outcome:
        result = Outcome()
        for errexit in {w.errexit for w in worlds}:
            ended, exits = self._summary(name, errexit, cond)
            mine = {w for w in worlds if w.errexit == errexit}
            result.absorb(
                self._errexit(self._mark(command, {w.at(s) for w in mine for s in ended}), cond)
            )
            if exits:
                result.exits |= {w.at(s) for w in mine for s in exits}
        return result

    def _summary(self, name: str, errexit: bool, cond: bool) -> HelperSummary:
        """How a call to helper `name` can end: found watching nothing and knowing no status
        flag, so the same for every contract; kept by the run, and by the helper's library when
        every run calling it reaches the same functions through it."""
        function = self.functions[name]
        key = (id(function), errexit, cond)
        found = self._summaries.get(key)
        if found is None:
            library = self.facts.sharing_library(name)
            shared = library.summaries if library is not None else None
            found = shared.get(key) if shared is not None else None
            if found is None:
                probe = StatementFlow({}, FlowResult())
                probe.enter(self.facts.without_flags())
                out = probe.node(function.body, {World(errexit=errexit)}, cond)
                ended = frozenset(w.status for w in out.normal | out.returns)
                found = (ended, frozenset(w.status for w in out.exits))
                if shared is not None:
                    shared[key] = found
            self._summaries[key] = found
        return found

    def _assign(self, command: Command, worlds: set[World], substituted: bool) -> set[World]:
        out: set[World] = set()
        for world in worlds:
            new = world
            for assign in command.assigns:
                if assign.name not in self.flag_names:
                    continue
                shape = assign.value.shape if assign.value is not None else ""
                if shape == "$?":
                    value: Status = world.status
                elif shape.isdigit():
                    value = 0 if int(shape) == 0 else 1
                else:
                    value = None
                new = new.with_flag(assign.name, value)
            out.add(new.at(new.status if substituted else 0))
        return self._mark(command, out)

    def _trap(self, command: Command, worlds: set[World]) -> set[World]:
        assert command.trap is not None
        signals = {s.upper().removeprefix("SIG") for s in command.trap_signals}
        if not signals & {"EXIT", "0"}:
            return {w.at(0) for w in worlds}
        handler = command.words[1].literal or ""
        key = id(command)
        self.traps[key] = command.trap
        if handler in ("", "-"):
            return {w._replace(status=0, traps=()) for w in worlds}
        return {
            w._replace(status=0, traps=(*(t for t in w.traps if t != key), key)) for w in worlds
        }
