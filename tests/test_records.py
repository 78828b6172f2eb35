"""Records behave as the dataclasses they replace, for what fixloop uses of them."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
import textwrap
from typing import Any, ClassVar

import pytest

from fixloop.records import field_names, is_record, record, replace


@record(frozen=True, order=True)
class Point:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)
    ORIGIN: ClassVar[str] = "origin"  # not a field


@dataclasses.dataclass(frozen=True, order=True)
class DataPoint:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


@record
class Counter:
    count: int = 0


@record(frozen=True, kw_only=True)
class Options:
    name: str
    level: int = 1


def test_construction_defaults_equality_and_repr_match_a_dataclass() -> None:
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1,), {}),
        ((1, 2), {}),
        ((), {"x": 3, "tags": ["a"]}),
    ]
    for args, kwargs in cases:
        mine, theirs = Point(*args, **kwargs), DataPoint(*args, **kwargs)
        assert repr(mine) == repr(theirs).replace("DataPoint", "Point")
        assert (mine.x, mine.y, mine.tags) == (theirs.x, theirs.y, theirs.tags)
    assert Point(1) == Point(1, 0, []) and Point(1) != Point(2)
    assert Point(1) != DataPoint(1)  # type: ignore[comparison-overlap]  # another class: never
    assert Point(1).tags is not Point(1).tags  # a default factory runs for each record
    assert field_names(Point) == ("x", "y", "tags") and Point.ORIGIN == "origin"
    assert is_record(Point) and not is_record(DataPoint) and not is_record(Point(1))


def test_frozen_records_refuse_assignment_hash_and_sort_as_dataclasses_do() -> None:
    point = Point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    assert hash(Point(1, 2, ())) == hash(Point(1, 2, ()))  # type: ignore[arg-type]
    assert len({Point(1, 2, ()), Point(1, 2, ())}) == 1  # type: ignore[arg-type]
    for kind in (Point, DataPoint):
        with pytest.raises(TypeError):
            hash(kind(1, 2, ["a"]))  # a list inside: unhashable, for both
    shuffled = [Point(2), Point(1, 5), Point(1, 3)]
    assert sorted(shuffled) == [Point(1, 3), Point(1, 5), Point(2)]
    assert [(p.x, p.y) for p in sorted(shuffled)] == [
        (p.x, p.y) for p in sorted([DataPoint(2), DataPoint(1, 5), DataPoint(1, 3)])
    ]
    with pytest.raises(TypeError):
        hash(Counter())  # mutable and compared by value: no hash, as a dataclass


@record(frozen=True, order=True)
class Tagged:
    name: str
    note: str = dataclasses.field(default="", compare=False)


@dataclasses.dataclass(frozen=True, order=True)
class DataTagged:
    name: str
    note: str = dataclasses.field(default="", compare=False)


def test_a_field_left_out_of_comparison_is_out_of_equality_hashing_and_order() -> None:
    kinds: tuple[type[Any], ...] = (Tagged, DataTagged)
    for kind in kinds:
        assert kind("a", "x") == kind("a", "y") and hash(kind("a", "x")) == hash(kind("a"))
        assert kind("a", "z") < kind("b", "a") and not kind("a", "z") < kind("a", "a")
        assert len({kind("a", "x"), kind("a", "y")}) == 1
    assert repr(Tagged("a", "x")) == "Tagged(name='a', note='x')"  # still shown


def test_mutable_records_take_assignment() -> None:
    counter = Counter()
    counter.count += 1
    assert counter == Counter(1)


def test_keyword_only_records_refuse_positions_and_report_missing_fields() -> None:
    assert Options(name="a") == Options(name="a", level=1)
    with pytest.raises(TypeError):
        Options("a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'name'"):
        Options()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'colour'"):
        Options(name="a", colour=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values"):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 positional arguments"):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing required argument: 'x'"):
        Point(y=1)  # type: ignore[call-arg]
    mixed = Point(5, tags=["t"])  # a position, a keyword and a default, in any mix
    assert (mixed.x, mixed.y, mixed.tags) == (5, 0, ["t"]) and Point(y=1, x=2) == Point(2, 1)


def test_replace_copies_pickle_and_deepcopy_keep_the_values() -> None:
    point = Point(1, 2, ["a"])
    assert replace(point, y=7) == Point(1, 7, ["a"]) and point.y == 2
    assert pickle.loads(pickle.dumps(point)) == point
    assert copy.deepcopy(point) == point and copy.deepcopy(point).tags is not point.tags


def test_defining_a_record_compiles_no_code() -> None:
    # A dataclass compiles its methods with `exec`; a record's are shared functions.
    script = textwrap.dedent(
        """
        import builtins, dataclasses
        from fixloop.records import record
        compiled = []
        real = builtins.exec
        builtins.exec = lambda *a, **k: (compiled.append(a[0]), real(*a, **k))[1]
        @record(frozen=True)
        class A:
            x: int
            y: list[int] = dataclasses.field(default_factory=list)
        print(len(compiled), A(1) == A(1, []))
        @dataclasses.dataclass(frozen=True)
        class B:  # the control: a dataclass does compile its methods
            x: int
        print(len(compiled) > 0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "True", "True"]
