"""The conditions are enforced by the store, not by a check of ours: a writer that lands between
our last look and our request wins, and our write (or delete) is refused by Azurite; in the other
order the outside writer's own conditional request is the one refused. Then real races between
independent clients: exactly one winner each time."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from typing import Any

import pytest

from backends.base import DeleteItem, PreconditionFailed, WriteItem
from tests.azure.conftest import BackendMaker
from tests.support.azurite import AzuriteEndpoint

pytestmark = pytest.mark.azurite

MiB = 2**20


class _Interposed:
    """A real blob client of the backend's whose named request first lets ``before`` run: the
    outside write happens after every check the backend made and just before its own request."""

    def __init__(self, inner: Any, method: str, before: Callable[[], None], calls: list[str]) -> None:
        self._inner, self._method, self._before, self._calls = inner, method, before, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            if name == self._method:
                self._before()
            return attr(*args, **kwargs)

        return call if callable(attr) else attr


def interpose(be: Any, method: str, before: Callable[[], None]) -> list[str]:
    calls: list[str] = []
    real = be._blob
    be._blob = lambda key, *client: _Interposed(real(key, *client), method, before, calls)
    return calls


def outside(ep: AzuriteEndpoint, be: Any, key: str) -> Any:
    return ep.service().get_blob_client(be.container.container_name, be._name(key))


def test_replace_loses_to_a_writer_that_came_between(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"ours v1")).version
    assert be.matches("f", v1)  # our check passes...
    calls = interpose(be, "upload_blob", lambda: outside(azurite_ep, be, "f").upload_blob(b"theirs", overwrite=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("f", b"ours v2", if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert calls[0] == "upload_blob"  # ...no look of ours came between: the store refused it
    assert outside(azurite_ep, be, "f").download_blob().readall() == b"theirs"


def test_create_loses_to_a_creator_that_came_between(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    assert be.stat("new") is None
    calls = interpose(be, "upload_blob", lambda: outside(azurite_ep, be, "new").upload_blob(b"theirs"))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("new", b"ours", if_absent=True))
    assert exc.value.errno == errno.EEXIST and calls[0] == "upload_blob"
    assert outside(azurite_ep, be, "new").download_blob().readall() == b"theirs"


def test_delete_loses_to_a_writer_that_came_between(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"ours")).version
    calls = interpose(be, "delete_blob", lambda: outside(azurite_ep, be, "f").upload_blob(b"theirs", overwrite=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.delete(DeleteItem("f", if_version=v1))
    assert exc.value.errno == errno.ESTALE and calls[0] == "delete_blob"
    assert outside(azurite_ep, be, "f").download_blob().readall() == b"theirs"


def test_block_commit_loses_to_a_writer_that_came_after_staging(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint
) -> None:
    be = make_backend(block_threshold=2 * MiB, block_size=1 * MiB)
    v1 = be.write(WriteItem("big", b"a" * (3 * MiB))).version
    calls = interpose(
        be, "commit_block_list", lambda: outside(azurite_ep, be, "big").upload_blob(b"theirs", overwrite=True)
    )
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("big", b"b" * (3 * MiB), if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert calls.count("stage_block") == 3 and "commit_block_list" in calls  # every block was staged
    assert outside(azurite_ep, be, "big").download_blob().readall() == b"theirs"


def test_block_create_loses_to_a_creator_that_came_after_staging(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint
) -> None:
    be = make_backend(block_threshold=2 * MiB, block_size=1 * MiB)
    # unconditional on their side: Azurite refuses an If-None-Match: * Put Blob while our staged,
    # uncommitted blocks exist (it counts them as a blob), which would stop the outside write itself
    interpose(be, "commit_block_list", lambda: outside(azurite_ep, be, "big").upload_blob(b"first", overwrite=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("big", b"x" * (3 * MiB), if_absent=True))
    assert exc.value.errno == errno.EEXIST
    assert outside(azurite_ep, be, "big").download_blob().readall() == b"first"


def test_an_outside_writer_that_comes_after_us_is_the_one_refused(
    make_backend: BackendMaker, azurite_ep: AzuriteEndpoint
) -> None:
    """The other order: both read v1, we write first; the outside If-Match write on v1 gets 412."""
    from azure.core.exceptions import ResourceModifiedError

    be = make_backend()
    v1 = be.write(WriteItem("f", b"v1")).version
    theirs = outside(azurite_ep, be, "f")
    etag_seen = theirs.get_blob_properties().etag
    be.write(WriteItem("f", b"ours", if_version=v1))
    with pytest.raises(ResourceModifiedError):
        theirs.upload_blob(b"theirs", overwrite=True, if_match=etag_seen)
    assert be.read("f")[0] == b"ours"


def _race(clients: list[Any], action: Callable[[int, Any], Any]) -> list[Any]:
    barrier = threading.Barrier(len(clients))
    results: list[Any] = [None] * len(clients)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = action(i, clients[i])
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _clients(make_backend: BackendMaker, n: int = 4) -> list[Any]:
    first = make_backend()
    rest = [make_backend(container=first.container.container_name, prefix=first.prefix) for _ in range(n - 1)]
    return [first, *rest]


def test_racing_conditional_writes_exactly_one_wins(make_backend: BackendMaker) -> None:
    clients = _clients(make_backend)
    version = clients[0].write(WriteItem("shared", b"v0")).version
    for round_ in range(8):
        results = _race(
            clients,
            lambda i, be, r=round_, v=version: be.write(WriteItem("shared", f"r{r}c{i}".encode(), if_version=v)),
        )
        winners = [i for i, r in enumerate(results) if not isinstance(r, BaseException)]
        assert len(winners) == 1, results
        assert all(isinstance(r, PreconditionFailed) for i, r in enumerate(results) if i not in winners)
        data, info = clients[0].read("shared")
        assert data == f"r{round_}c{winners[0]}".encode() and info.version == results[winners[0]].version
        version = info.version


def test_racing_creates_and_deletes_exactly_one_wins(make_backend: BackendMaker) -> None:
    clients = _clients(make_backend)
    for round_ in range(6):
        key = f"new{round_}"
        made = _race(clients, lambda i, be, k=key: be.write(WriteItem(k, f"c{i}".encode(), if_absent=True)))
        assert sum(not isinstance(r, BaseException) for r in made) == 1, made
        version = clients[0].stat(key).version
        gone = _race(clients, lambda i, be, k=key, v=version: be.delete(DeleteItem(k, if_version=v)))
        assert sum(r is None for r in gone) == 1, gone
        assert clients[0].stat(key) is None
