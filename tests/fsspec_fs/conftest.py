"""Targets for the fsspec-filesystem tests: vfs's memory store, a local folder, S3 on moto.

``target`` is parametrized over the three; each test gets a fresh workspace root and a
``make_fs()`` that opens a :class:`vfs.filesystem.VfsFileSystem` on it (a new instance each time
with ``private=True``: another client of the same storage).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fsspec_fs.support import register_in_process

register_in_process()

_counter = itertools.count()


@dataclass
class Target:
    name: str
    url: str  # the workspace root as a target URL
    path: str  # the same root as a path of the filesystem
    options: dict[str, Any] = field(default_factory=dict)

    def make_fs(self, *, private: bool = False, **kwargs: Any) -> Any:
        import fsspec

        if private:
            kwargs["skip_instance_cache"] = True
        kwargs.setdefault("target_options", self.options)
        return fsspec.filesystem("vfs", target=self.url, **kwargs)

    def chained(self, name: str) -> str:
        """The ``vfs::`` URL of the file ``name`` in this workspace."""
        return f"vfs::{self.url}/{name}"


def _memory(request: pytest.FixtureRequest) -> Target:
    from backends.memory import forget_store

    name = f"fsspecfs{next(_counter)}"
    request.addfinalizer(lambda: forget_store(name))
    return Target("memory", f"memory://{name}", f"/{name}")


def _local(request: pytest.FixtureRequest) -> Target:
    root = request.getfixturevalue("tmp_path") / f"ws{next(_counter)}"
    root.mkdir()
    return Target("local", f"file://{root}", str(root))


def _s3(request: pytest.FixtureRequest) -> Target:
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    bucket = s3_servers.make_bucket(ep, f"fsspecfs{next(_counter)}")
    return Target("s3", f"s3://{bucket}/ws", f"{bucket}/ws", dict(ep.storage_options))


MAKERS: dict[str, Callable[[pytest.FixtureRequest], Target]] = {"local": _local, "memory": _memory, "s3": _s3}
# S3 costs ~0.5-10 s a case on moto: like the shared suites' other flavours, it runs in the full
# suite only (the fast tier keeps local disk and memory; tests/conftest.py).
TARGETS = [
    pytest.param(name, marks=[pytest.mark.s3, pytest.mark.slow]) if name == "s3" else name for name in sorted(MAKERS)
]


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """fsspec's abstract suite (280 cases, test_abstract.py) runs on memory in the fast tier: on
    local disk it is the same vfs code with an fsync per write, ~3x the cost (the full suite runs
    it); the other suites here run on local disk in the fast tier too."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if item.path.name == "test_abstract.py" and callspec is not None and callspec.params.get("target") == "local":
            item.add_marker(pytest.mark.slow)


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    import fsspec

    yield MAKERS[request.param](request)
    # fsspec caches instances for the life of the process: drop this test's
    fsspec.get_filesystem_class("vfs").clear_instance_cache()
