"""``backends.values``: the one system of value classes behaves as the dataclasses it replaced."""

from __future__ import annotations

import copy
import pickle
import typing
from typing import ClassVar

import pytest

from backends.base import WriteItem
from backends.values import Protocol, field, fields_of, replace, value


@value
class Mutable:
    name: str
    count: int = 0
    items: list[str] = field(default_factory=list)
    KIND: ClassVar[str] = "mutable"  # not a field


@value(frozen=True)
class Frozen:
    key: str
    size: int = field(default=3)


@value(frozen=True, slots=True)
class Slotted:
    key: str
    data: bytes = b""


def test_init_defaults_and_a_fresh_default_per_instance() -> None:
    a, b = Mutable("a"), Mutable("b", 2)
    a.items.append("x")
    assert (a.name, a.count, a.items, b.count, b.items) == ("a", 0, ["x"], 2, [])
    assert fields_of(Mutable) == ("name", "count", "items") == Mutable.__match_args__
    assert Mutable.KIND == "mutable"
    with pytest.raises(TypeError):
        Mutable()  # type: ignore[call-arg]


def test_a_field_can_stay_out_of_the_repr() -> None:
    @value(frozen=True)
    class Result:
        summary: str
        payload: bytes = field(default=b"", repr=False)

    assert repr(Result("ok", b"x" * 10)).endswith("Result(summary='ok')")
    assert Result("ok", b"a") != Result("ok", b"b")  # still compared


def test_repr_and_equality_by_fields() -> None:
    assert repr(Mutable("a", 1)) == "Mutable(name='a', count=1, items=[])"
    assert Mutable("a") == Mutable("a")
    assert Mutable("a") != Mutable("a", 1)
    assert Frozen("k") != Slotted("k")  # another class is never equal
    assert Mutable.__hash__ is None  # mutable: unhashable, as a dataclass


def test_frozen_refuses_assignment_and_hashes_by_fields() -> None:
    item = Frozen("k")
    with pytest.raises(AttributeError):
        item.key = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del item.key  # type: ignore[misc]
    assert hash(item) == hash(Frozen("k", 3))
    assert {item, Frozen("k")} == {item}


def test_slots_replace_copy_and_pickle() -> None:
    item = Slotted("k", b"x")
    assert not hasattr(item, "__dict__")
    with pytest.raises(AttributeError):
        item.data = b"y"  # type: ignore[misc]
    assert replace(item, data=b"y") == Slotted("k", b"y")
    assert item.data == b"x"
    assert copy.copy(item) == copy.deepcopy(item) == pickle.loads(pickle.dumps(item)) == item
    with pytest.raises(TypeError):
        replace(item, nope=1)


def test_the_backend_requests_are_value_classes() -> None:
    item = WriteItem("a.txt", b"data")
    assert replace(item, if_absent=True).if_absent is True
    assert item == WriteItem("a.txt", b"data")
    with pytest.raises(AttributeError):
        item.key = "b.txt"  # type: ignore[misc]


class _Sized(Protocol):
    """A protocol defined the way ours are (run time: backends.values'; the type checker: typing's)."""

    label: str

    def size(self) -> int: ...

    def __enter__(self) -> object: ...


class _HasAll:
    label = "x"

    def size(self) -> int:
        return 1

    def __enter__(self) -> object:
        return self


class _NoEnter:
    label = "x"

    def size(self) -> int:
        return 1


class _Nominal(_Sized):
    """Not a protocol: a class that derives from one is checked by class, as with typing's."""


def test_protocols_check_their_members_at_run_time() -> None:
    assert isinstance(_HasAll(), _Sized)  # structural, as typing.runtime_checkable
    assert not isinstance(_NoEnter(), _Sized)  # a missing member (a dunder one counts)
    assert not isinstance(object(), _Sized)
    assert not isinstance(_HasAll(), _Nominal)  # by class
    assert isinstance(_Nominal(), _Nominal) and isinstance(_Nominal(), _Sized)


def test_protocol_members_are_typings() -> None:
    @typing.runtime_checkable
    class Sized(typing.Protocol):
        label: str

        def size(self) -> int: ...

        def __enter__(self) -> object: ...

    ours: frozenset[str] = getattr(_Sized, "_protocol_members", frozenset())
    assert ours == typing._get_protocol_attrs(Sized) == {"label", "size", "__enter__"}  # type: ignore[attr-defined]


CALLS: list[tuple[tuple[object, ...], dict[str, object]]] = [
    (("a",), {}),
    (("a", 2), {}),
    (("a", 2, ["x"]), {}),
    ((), {"name": "a", "items": ["y"]}),
    (("a",), {"count": 5}),
    ((), {}),  # missing name
    (("a", 1, [], 9), {}),  # too many
    (("a",), {"name": "b"}),  # twice
    (("a",), {"colour": 1}),  # unknown
]


def _outcome(cls: type, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
    try:
        made = cls(*args, **kwargs)
    except TypeError as exc:
        return ("TypeError", str(exc).split("(", 1)[1])  # the message after the function's name
    return tuple(getattr(made, name) for name in fields_of(cls))


@pytest.mark.parametrize("frozen", [False, True])
def test_the_first_instances_bind_as_the_compiled_init_does(frozen: bool) -> None:
    # A class binds its first instances' arguments in one shared function and compiles its
    # __init__ later (start-up: see the module); both must give the same fields and errors.
    def fresh() -> type:
        @value(frozen=frozen, slots=frozen)
        class Made:
            name: str
            count: int = 0
            items: list[str] = field(default_factory=list)

        return Made

    early = fresh()
    late = fresh()
    for _ in range(40):  # past the point where late compiles its __init__
        late("warm")
    assert "_bind" not in late.__init__.__code__.co_names  # compiled now
    for args, kwargs in CALLS:
        early_outcome = _outcome(early, args, kwargs)
        assert early_outcome == _outcome(late, args, kwargs), (args, kwargs)
    first, second = early("a"), early("b")
    first.items.append("x")
    assert second.items == []  # a fresh default per instance before compiling too


def test_the_early_binding_names_every_missing_argument_as_python_does() -> None:
    def fresh() -> type:
        @value
        class Three:
            a: int
            b: int
            c: int

        return Three

    early, late = fresh(), fresh()
    for _ in range(40):
        late(1, 2, 3)
    for args in [(), (1,), (1, 2, 3, 4)]:
        assert _outcome(early, args, {}) == _outcome(late, args, {})
