"""Worlds: classes of execution paths, as the path analysis of `flow.py` tracks them.

A `World` records the watched commands that ran (in order, each with success or failure), the last
exit status (0, 1 or unknown), the values of status flags (`rc=$?`, `ff_status=0`), what is known
about loop word lists, the EXIT traps in force, whether `set -e` is on, and whether the run has
already failed. An `Outcome` sorts the worlds leaving a construct by how they leave it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import TYPE_CHECKING, NamedTuple

from fixloop.checker.tree import Function, Seq
from fixloop.records import record

if TYPE_CHECKING:
    from fixloop.checker.library import StepLibrary

Status = int | None  # 0 success, 1 failure, None unknown
Mark = tuple[str, str, int]  # watched name, "ok" | "fail", event id


class World(NamedTuple):
    """One class of paths. A NamedTuple: worlds are hashed and copied millions of times."""

    marks: tuple[Mark, ...] = ()
    status: Status = 0
    flags: tuple[tuple[str, Status], ...] = ()
    lists: tuple[tuple[str, bool], ...] = ()
    traps: tuple[int, ...] = ()
    errexit: bool = False
    failed: bool = False

    def at(self, status: Status) -> World:
        """This world with another last exit status: the most frequent change, made directly
        (or not at all: a world is a value, and most often the status is the same)."""
        if status == self.status:
            return self
        return World(
            self.marks, status, self.flags, self.lists, self.traps, self.errexit, self.failed
        )

    def mark(self, name: str) -> Mark | None:
        return next((m for m in self.marks if m[0] == name), None)

    def ran_after(self, later: str, earlier: str) -> bool:
        names = [m[0] for m in self.marks]
        return later in names and earlier in names and names.index(later) > names.index(earlier)

    def with_mark(self, mark: Mark) -> World:
        return self._replace(marks=(*(m for m in self.marks if m[0] != mark[0]), mark))

    def flag(self, name: str) -> tuple[bool, Status]:
        for key, value in self.flags:
            if key == name:
                return True, value
        return False, None

    def with_flag(self, name: str, value: Status) -> World:
        return self._replace(flags=(*((k, v) for k, v in self.flags if k != name), (name, value)))


_NO_WORLDS: frozenset[World] = frozenset()


class Outcome:
    """The worlds leaving a construct, by how they leave it.

    One per node visited: only `normal` gets its own set up front. The other four are rarely
    filled, so they share one empty frozenset until something is added (`|=` then makes a new
    set instead of changing the shared one); add to them only with `|=`. A plain slotted class,
    made by the thousand: a dataclass would compile its methods at import (`records.py`).
    """

    __slots__ = ("breaks", "continues", "exits", "normal", "returns")

    def __init__(
        self,
        normal: set[World] | None = None,
        exits: AbstractSet[World] = _NO_WORLDS,
        returns: AbstractSet[World] = _NO_WORLDS,
        breaks: AbstractSet[World] = _NO_WORLDS,
        continues: AbstractSet[World] = _NO_WORLDS,
    ) -> None:
        self.normal: set[World] = set() if normal is None else normal
        self.exits: AbstractSet[World] = exits
        self.returns: AbstractSet[World] = returns
        self.breaks: AbstractSet[World] = breaks
        self.continues: AbstractSet[World] = continues

    def __repr__(self) -> str:
        return (
            f"Outcome(normal={self.normal!r}, exits={self.exits!r}, returns={self.returns!r}, "
            f"breaks={self.breaks!r}, continues={self.continues!r})"
        )

    def absorb(self, other: Outcome, normal: bool = True) -> None:
        if normal:
            self.normal |= other.normal
        if other.exits:
            self.exits |= other.exits
        if other.returns:
            self.returns |= other.returns
        if other.breaks:
            self.breaks |= other.breaks
        if other.continues:
            self.continues |= other.continues


HelperSummary = tuple[frozenset[Status], frozenset[Status]]  # statuses ending it; by `exit`


@record
class RunFacts:
    """What is known of one shell run whatever is watched in it: found once per document and
    shared by every contract's path analysis (each contract used to find it again)."""

    functions: Mapping[str, Function]  # the run's own and its step libraries', by name
    flag_names: set[str]  # names assigned a status (`rc=$?`)
    helpers: frozenset[str]  # the step-library functions among `functions`
    # For a run with no watched command: (can end normally, can fail); its effect on any world.
    summary: tuple[bool, bool] | None = None
    # Helper → the ids of every node its call can reach (-1: it sets a trap or `set`); kept
    # by its library too when `sharing_library` names one.
    reach: dict[str, frozenset[int]] = field(default_factory=dict)
    # (id of the helper, `set -e` on, tested) → how a call to it that reaches nothing watched
    # can end: the same for every contract.
    helper_summaries: dict[tuple[int, bool, bool], HelperSummary] = field(default_factory=dict)
    libraries: Sequence[StepLibrary] = ()  # the step libraries `helpers` come from
    # Helper → `sharing_library`'s answer for it, asked for its reach and each summary.
    sharing: dict[str, StepLibrary | None] = field(default_factory=dict)
    _without_flags: RunFacts | None = None

    def without_flags(self) -> RunFacts:
        """The same run with no status-flag names: where a helper's summary is found."""
        if self._without_flags is None:
            self._without_flags = RunFacts(
                self.functions,
                set(),
                self.helpers,
                reach=self.reach,
                helper_summaries=self.helper_summaries,
                libraries=self.libraries,
                sharing=self.sharing,
            )
        return self._without_flags

    def sharing_library(self, name: str) -> StepLibrary | None:
        """The library whose facts of helper `name` (its summaries, what it reaches) hold for
        every run that calls it: its own library, when every function the call can reach is that
        library's own, as it is in this run (no run or other library redefines one). None
        otherwise."""
        if name not in self.sharing:
            self.sharing[name] = self._sharing_library(name)
        return self.sharing[name]

    def _sharing_library(self, name: str) -> StepLibrary | None:
        for library in self.libraries:
            if self.functions.get(name) is not library.function(name):
                continue
            reached = library.called_by(name)
            if all(
                self.functions.get(called) is library.function(called)
                and (called not in library.sources or called in self.helpers)
                for called in reached
            ):
                return library
        return None


@record
class Unit:
    body: Seq
    finally_: bool
    errexit: bool = False  # the runner starts the shell under `set -e`
    # For a run with no watched command: (can end normally, can fail); its effect on any world.
    summary: tuple[bool, bool] | None = None
    facts: RunFacts | None = None  # None: found when the run is walked


@record
class FlowResult:
    before: dict[int, set[World]] = field(default_factory=dict)
    ends: set[World] = field(default_factory=set)


def split(worlds: Iterable[World]) -> tuple[set[World], set[World]]:
    """Worlds where the last command succeeded, and where it failed (unknown goes both ways)."""
    ok: set[World] = set()
    bad: set[World] = set()
    for world in worlds:
        if world.status in (0, None):
            ok.add(world.at(0))
        if world.status != 0:
            bad.add(world.at(1))
    return ok, bad
