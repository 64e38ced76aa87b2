"""Fixtures for the Azure backend tests: one Azurite server per session (``azurite-blob`` on
127.0.0.1, skipped with the reason only when Azurite, node or azure-storage-blob is missing)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support import azurite
from tests.support.azurite import AzuriteEndpoint

_counter = itertools.count()

BackendMaker = Callable[..., Any]


@pytest.fixture(scope="session")
def azurite_ep() -> Iterator[AzuriteEndpoint]:
    if not azurite.available():
        pytest.skip(azurite.MISSING)
    with azurite.azurite_endpoint() as ep:
        yield ep


@pytest.fixture
def make_backend(azurite_ep: AzuriteEndpoint, request: pytest.FixtureRequest) -> BackendMaker:
    """``make_backend(container=None, prefix=None, **tuning)`` -> a fresh AzureBackend with its own
    client (one container per test by default); closed after the test."""
    from backends.azure import AzureBackend

    made: list[AzureBackend] = []
    containers: list[str] = []

    def make(*, container: str | None = None, prefix: str | None = None, **tuning: Any) -> AzureBackend:
        if container is None:
            if not containers:
                containers.append(azurite.make_container(azurite_ep, request.node.name))
            container = containers[0]
        prefix = f"ws{next(_counter)}" if prefix is None else prefix
        opts = {**azurite_ep.storage_options, **{f"vfs_{k}": v for k, v in tuning.items()}}
        backend = AzureBackend.from_url(f"az://{container}/{prefix}" if prefix else f"az://{container}", opts)
        made.append(backend)
        return backend

    def close_all() -> None:
        for backend in made:
            backend.close()

    request.addfinalizer(close_all)
    return make
