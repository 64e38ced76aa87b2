"""Fixtures shared by every suite.

``make_workspace`` is parametrized over every backend flavour in ``tests.support.backends``:
a test that takes it runs once per backend (local tmp dir, local under pyfakefs, memory, ...).
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.backends import FACTORIES, WorkspaceFactory


def _flavour_param(name: str) -> object:
    return pytest.param(name, marks=pytest.mark.s3) if name == "s3" else name


@pytest.fixture(params=[_flavour_param(name) for name in sorted(FACTORIES)])
def make_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    return FACTORIES[request.param](request)


@pytest.fixture(params=["local", "memory"])
def make_real_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    """Backends whose storage other threads (and for local, processes) can share for real."""
    return FACTORIES[request.param](request)


# The fast tier (`python -m pytest -m "not slow"`) runs a many-case test on these flavours only; its
# other flavours run in the full suite. Memory and local disk cover the two directory models the
# commit code distinguishes at least cost; S3 on moto costs ~0.5 s a test.
FAST_TIER_FLAVOURS = {"local", "memory"}
# A test with at least this many cases per flavour is "many-case".
MANY_CASES = 10


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add `slow` where it follows from other facts, so no list of test names has to be kept:
    every SeaweedFS test (a server process of its own) and the secondary-flavour cases of
    many-case tests."""
    flavour_of: dict[pytest.Item, str] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if isinstance(item, pytest.Function) and callspec is not None and "make_workspace" in callspec.params:
            flavour_of[item] = callspec.params["make_workspace"]
    per_test = Counter((item.path, item.originalname) for item in flavour_of if isinstance(item, pytest.Function))
    for item in items:
        if item.get_closest_marker("seaweedfs") is not None:
            item.add_marker(pytest.mark.slow)
        flavour = flavour_of.get(item)
        if flavour is None or flavour in FAST_TIER_FLAVOURS:
            continue
        if isinstance(item, pytest.Function) and per_test[(item.path, item.originalname)] >= MANY_CASES * len(
            FACTORIES
        ):
            item.add_marker(pytest.mark.slow)
