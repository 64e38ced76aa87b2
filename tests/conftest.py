"""Fixtures shared by every suite.

``make_workspace`` is parametrized over every backend flavour in ``tests.support.backends``:
a test that takes it runs once per backend (local tmp dir, local under pyfakefs, memory, ...).
"""

from __future__ import annotations

import pytest

from tests.support.backends import FACTORIES, WorkspaceFactory


@pytest.fixture(params=sorted(FACTORIES))
def make_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    return FACTORIES[request.param](request)


@pytest.fixture(params=["local", "memory"])
def make_real_workspace(request: pytest.FixtureRequest) -> WorkspaceFactory:
    """Backends whose storage other threads (and for local, processes) can share for real."""
    return FACTORIES[request.param](request)
