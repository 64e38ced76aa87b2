"""Fixtures shared by every suite.

``make_workspace`` is parametrized over every backend flavour in ``tests.support.backends``:
a test that takes it runs once per backend (local tmp dir, local under pyfakefs, memory, ...).
"""

from __future__ import annotations

import pytest

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
