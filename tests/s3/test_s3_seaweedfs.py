"""What only a real S3 implementation can prove (SeaweedFS via ``weed mini``).

moto ignores If-Match on CompleteMultipartUpload, so CAS at multipart commit is proven here; the
races use separate clients (own S3FileSystem and connection pool each) hitting the server at once;
the dead lease holder is a real process killed with SIGKILL.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from backends.base import DeleteItem, PreconditionFailed, WriteItem
from backends.s3 import S3Backend
from tests.s3.conftest import BackendMaker
from tests.support.s3_servers import S3Endpoint

pytestmark = pytest.mark.seaweedfs

MiB = 2**20
REPO = Path(__file__).resolve().parents[2]
PRIVATE = {"skip_instance_cache": True}


def test_stale_etag_at_multipart_commit_is_rejected(make_seaweed_backend: BackendMaker, seaweed_ep: S3Endpoint) -> None:
    be = make_seaweed_backend(multipart_threshold=6 * MiB, part_size=5 * MiB)
    v1 = be.write(WriteItem("big.bin", b"a" * (11 * MiB))).version
    outside = seaweed_ep.client()
    calls: list[str] = []
    real_call = be._call

    async def call_with_concurrent_writer(op: str, key: str, **kw: Any) -> dict[str, Any]:
        calls.append(op)
        if op == "complete_multipart_upload":
            # every part is uploaded: now someone else replaces the object, just before our commit
            outside.put_object(Bucket=be.bucket, Key=be._obj("big.bin"), Body=b"theirs")
        return await real_call(op, key, **kw)

    be._call = call_with_concurrent_writer  # type: ignore[method-assign]
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("big.bin", b"b" * (11 * MiB), if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert calls.count("upload_part") == 3 and "complete_multipart_upload" in calls
    # the upload is aborted (then one HEAD tells "changed" from "deleted" for the message)
    assert "abort_multipart_upload" in calls[calls.index("complete_multipart_upload") :]
    be._call = real_call  # type: ignore[method-assign]
    assert be.read("big.bin")[0] == b"theirs"
    uploads = outside.list_multipart_uploads(Bucket=be.bucket).get("Uploads") or []
    assert not [u for u in uploads if u["Key"] == be._obj("big.bin")]


def test_multipart_create_conflict_at_commit(make_seaweed_backend: BackendMaker, seaweed_ep: S3Endpoint) -> None:
    be = make_seaweed_backend(multipart_threshold=6 * MiB, part_size=5 * MiB)
    real_call = be._call

    async def call(op: str, key: str, **kw: Any) -> dict[str, Any]:
        if op == "complete_multipart_upload":
            seaweed_ep.client().put_object(Bucket=be.bucket, Key=be._obj("new.bin"), Body=b"first")
        return await real_call(op, key, **kw)

    be._call = call  # type: ignore[method-assign]
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("new.bin", b"x" * (11 * MiB), if_absent=True))
    be._call = real_call  # type: ignore[method-assign]
    assert exc.value.errno == errno.EEXIST  # not s3fs's EINVAL: the SeaweedFS 412 is read raw
    assert be.read("new.bin")[0] == b"first"


def _race(backends: list[S3Backend], action: Any) -> list[Any]:
    barrier = threading.Barrier(len(backends))
    results: list[Any] = [None] * len(backends)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = action(i, backends[i])
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(backends))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_racing_conditional_writes_exactly_one_wins(make_seaweed_backend: BackendMaker) -> None:
    first = make_seaweed_backend(storage=PRIVATE)
    clients = [first] + [
        make_seaweed_backend(bucket=first.bucket, prefix=first.prefix, storage=PRIVATE) for _ in range(3)
    ]
    assert len({id(c.fs) for c in clients}) == len(clients)
    version = first.write(WriteItem("shared.txt", b"v0")).version
    for round_ in range(8):
        results = _race(
            clients,
            lambda i, be, r=round_, v=version: be.write(WriteItem("shared.txt", f"r{r} c{i}".encode(), if_version=v)),
        )
        winners = [i for i, r in enumerate(results) if not isinstance(r, BaseException)]
        losers = [r for r in results if isinstance(r, BaseException)]
        assert len(winners) == 1, results
        assert all(isinstance(r, PreconditionFailed) and r.errno == errno.ESTALE for r in losers)
        data, info = first.read("shared.txt")
        assert data == f"r{round_} c{winners[0]}".encode()
        assert info.version == results[winners[0]].version
        version = info.version


def test_racing_creates_exactly_one_wins(make_seaweed_backend: BackendMaker) -> None:
    first = make_seaweed_backend(storage=PRIVATE)
    clients = [first] + [
        make_seaweed_backend(bucket=first.bucket, prefix=first.prefix, storage=PRIVATE) for _ in range(3)
    ]
    for round_ in range(8):
        key = f"new-{round_}.txt"
        results = _race(clients, lambda i, be, k=key: be.write(WriteItem(k, f"c{i}".encode(), if_absent=True)))
        winners = [i for i, r in enumerate(results) if not isinstance(r, BaseException)]
        assert len(winners) == 1, results
        assert all(
            isinstance(r, PreconditionFailed) and r.errno == errno.EEXIST
            for r in results
            if isinstance(r, BaseException)
        )
        assert first.read(key)[0] == f"c{winners[0]}".encode()


def test_racing_conditional_deletes_exactly_one_wins(make_seaweed_backend: BackendMaker) -> None:
    first = make_seaweed_backend(storage=PRIVATE)
    clients = [first] + [
        make_seaweed_backend(bucket=first.bucket, prefix=first.prefix, storage=PRIVATE) for _ in range(2)
    ]
    version = first.write(WriteItem("doomed", b"x")).version
    results = _race(clients, lambda i, be: be.delete(DeleteItem("doomed", if_version=version)))
    assert results.count(None) == 1
    assert all(isinstance(r, FileNotFoundError | PreconditionFailed) for r in results if r is not None)
    assert first.stat("doomed") is None


_HOLDER = textwrap.dedent(
    """
    import json, sys, time
    from backends.s3 import S3Backend
    url, options = sys.argv[1], json.loads(sys.argv[2])
    backend = S3Backend.from_url(url, options)
    lease = backend.lock(".vfs/lock", timeout=10).acquire()
    print("HELD", lease.owner, flush=True)
    time.sleep(3600)
    """
)


def test_lease_of_a_killed_client_expires(make_seaweed_backend: BackendMaker, seaweed_ep: S3Endpoint) -> None:
    ttl = 1.5
    be = make_seaweed_backend(lease_ttl=ttl, clock_skew=0.5)
    url = f"s3://{be.bucket}/{be.prefix}"
    options = dict(seaweed_ep.storage_options, vfs_lease_ttl=ttl)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, url, json.dumps(options)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline()
        assert line.startswith("HELD"), holder.stderr.read() if holder.stderr else line
        dead_owner = line.split()[1]
        # alive and renewing: nobody else gets in
        with pytest.raises(TimeoutError), be.lock(".vfs/lock", timeout=2 * ttl):
            pytest.fail("took the lease of a live, renewing holder")
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        killed = time.monotonic()
        lease = be.lock(".vfs/lock", timeout=30)
        with lease:
            waited = time.monotonic() - killed
            assert lease.took_over
            assert waited < ttl + 0.5 + 3  # lease time + skew allowance + polling slack
            raw = seaweed_ep.client().get_object(Bucket=be.bucket, Key=be._obj(".vfs/lock"))["Body"].read()
            assert json.loads(raw)["owner"] == lease.owner != dead_owner
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(timeout=10)
        for stream in (holder.stdout, holder.stderr):
            if stream is not None:
                stream.close()


def test_a_removed_folder_leaves_no_trace_in_its_parents_listing(seaweed_ep: S3Endpoint) -> None:
    """SeaweedFS keeps an emptied folder (its filer has real directories) and lists it in its
    parent until the folder's own key is deleted: vfs's rmdir deletes it even when nothing is
    below it any more."""
    import vfs
    from tests.support.s3_servers import make_bucket

    bucket = make_bucket(seaweed_ep, "rmdir")
    ws = vfs.open_workspace(f"s3://{bucket}/ws", storage_options=seaweed_ep.storage_options)
    try:
        with ws.transaction() as tx:
            tx.write(f"{ws.mount}/new/deep/a.txt", b"a\n")
            tx.write(f"{ws.mount}/keep.txt", b"k\n")
        with ws.transaction() as tx:
            tx.delete(f"{ws.mount}/new/deep/a.txt")
            tx.rmdir(f"{ws.mount}/new/deep")
            tx.rmdir(f"{ws.mount}/new")
        assert sorted(i.name for i in ws.backend.list("") if not i.name.startswith(".vfs")) == ["keep.txt"]
    finally:
        ws.close()
