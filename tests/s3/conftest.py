"""Fixtures for the S3 backend tests: real servers on loopback (moto in-process, SeaweedFS).

``server`` is parametrized: a test that takes it (or ``make_backend``) runs once on moto (marked
``s3``) and once on SeaweedFS (marked ``seaweedfs``; skipped, with the reason, only when the
``weed`` binary is not installed).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from backends.s3 import S3Backend
from tests.support import s3_servers
from tests.support.s3_servers import S3Endpoint

_counter = itertools.count()


@pytest.fixture(scope="session")
def moto_ep() -> S3Endpoint:
    return s3_servers.shared_moto_endpoint()


@pytest.fixture(scope="session")
def seaweed_ep() -> Iterator[S3Endpoint]:
    if not s3_servers.weed_available():
        pytest.skip(s3_servers.WEED_MISSING)
    with s3_servers.seaweedfs_endpoint() as ep:
        yield ep


@pytest.fixture(
    params=[
        pytest.param("moto", marks=pytest.mark.s3),
        pytest.param("seaweedfs", marks=pytest.mark.seaweedfs),
    ]
)
def server(request: pytest.FixtureRequest) -> S3Endpoint:
    name = "moto_ep" if request.param == "moto" else "seaweed_ep"
    ep: S3Endpoint = request.getfixturevalue(name)
    return ep


BackendMaker = Callable[..., S3Backend]


def _maker(ep: S3Endpoint, request: pytest.FixtureRequest) -> BackendMaker:
    made: list[S3Backend] = []
    buckets: dict[str, str] = {}

    def make(
        *,
        bucket: str | None = None,
        prefix: str | None = None,
        versioned: bool = False,
        storage: dict[str, Any] | None = None,
        **tuning: Any,
    ) -> S3Backend:
        """A backend on ``bucket`` (default: one fresh bucket per test) under ``prefix``.

        ``storage``: extra s3fs options (``skip_instance_cache=True`` for a client of its own);
        ``tuning``: the backend's ``vfs_*`` options without the prefix (``lease_ttl=1``...).
        """
        if bucket is None:
            key = "versioned" if versioned else "plain"
            if key not in buckets:
                buckets[key] = s3_servers.make_bucket(ep, request.node.name, versioned=versioned)
            bucket = buckets[key]
        if prefix is None:
            prefix = f"ws{next(_counter)}"
        opts = dict(ep.storage_options)
        opts.update(storage or {})
        opts.update({f"vfs_{k}": v for k, v in tuning.items()})
        backend = S3Backend.from_url(f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}", opts)
        made.append(backend)
        return backend

    def close_all() -> None:
        for backend in made:
            backend.close()

    request.addfinalizer(close_all)
    return make


@pytest.fixture
def make_backend(server: S3Endpoint, request: pytest.FixtureRequest) -> BackendMaker:
    """``make_backend(**tuning)`` -> a fresh S3Backend on ``server``; closed after the test."""
    return _maker(server, request)


@pytest.fixture
def make_seaweed_backend(seaweed_ep: S3Endpoint, request: pytest.FixtureRequest) -> BackendMaker:
    return _maker(seaweed_ep, request)
