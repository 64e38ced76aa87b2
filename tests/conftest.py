"""Fixtures shared by every suite.

``make_workspace`` is parametrized over every backend flavour in ``tests.support.backends``:
a test that takes it runs once per backend (local tmp dir, local under pyfakefs, memory, ...).
"""

from __future__ import annotations

import pytest

from backends.testing import BackendContract
from tests.support.backends import FACTORIES, WorkspaceFactory

_MARKS = {"s3": pytest.mark.s3, "azure": pytest.mark.azurite}


def _flavour_param(name: str) -> object:
    return pytest.param(name, marks=_MARKS[name]) if name in _MARKS else name


@pytest.fixture(params=[_flavour_param(name) for name in sorted(FACTORIES)])
def make_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    return FACTORIES[request.param](request)


@pytest.fixture(params=["local", "memory"])
def make_real_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    """Backends whose storage other threads (and for local, processes) can share for real."""
    return FACTORIES[request.param](request)


# The fast tier (`python -m pytest -m "not slow"`) runs the shared suites on these flavours only
# (memory and local disk: the two directory models, at least cost; S3 on moto costs ~0.5 s a test);
# every flavour still runs the backend contract there, and everything runs in the full suite.
FAST_TIER_FLAVOURS = {"local", "memory"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add `slow` where it follows from other facts, so no list of test names has to be kept:
    every SeaweedFS test (a server process of its own) and the shared suites' cases on the
    other flavours."""
    for item in items:
        if item.get_closest_marker("seaweedfs") is not None:
            item.add_marker(pytest.mark.slow)
        callspec = getattr(item, "callspec", None)
        flavour = callspec.params.get("make_workspace") if callspec is not None else None
        if flavour is None or flavour in FAST_TIER_FLAVOURS:
            continue
        cls = getattr(item, "cls", None)
        if cls is not None and issubclass(cls, BackendContract):
            continue  # one quick case per primitive: every backend stays in the fast tier
        item.add_marker(pytest.mark.slow)
