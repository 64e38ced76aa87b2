"""The fast tier (``pytest -m "not slow"``, docs/testing.md): a helper to keep the cases of a
behaviour that say it works in the fast tier and leave its repetitions to the full suite."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest


def tiered(
    values: Iterable[Any], fast: Callable[[Any], bool] | None = None, *, marks: Iterable[Any] = (), unpack: bool = False
) -> list[Any]:
    """``values`` as parameters, those ``fast`` accepts (default: the first) in the fast tier and
    the others marked ``slow``. For one behaviour checked the same way over many inputs (every verb,
    every transport) through a subprocess or a server, at seconds a case: the fast cases say that it
    works (one per output format, say), the rest that it works everywhere (the full suite).
    ``marks`` go on every case; ``unpack``: each value is a tuple of several arguments."""
    extra = list(marks)
    items = list(values)
    keep = fast if fast is not None else (lambda v: v is items[0])
    return [
        pytest.param(*(v if unpack else (v,)), marks=extra if keep(v) else [*extra, pytest.mark.slow]) for v in items
    ]
