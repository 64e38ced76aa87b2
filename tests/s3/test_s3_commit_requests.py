"""What a commit costs on S3, in requests (issue 20), and what the cheaper path rests on: a
commit that found the lock free does not list the journals, because a holder that leaves a
journal unresolved marks the lock instead of deleting it. Counts, never times."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import vfs
from backends.s3 import S3Backend
from tests.s3.conftest import BackendMaker

MOUNT = "/workspace"


def _record(backend: S3Backend) -> list[tuple[str, str]]:
    """Every request ``backend`` sends from now on: (operation, key). A lease release still in
    flight (an earlier commit's, not waited for) is let land first: it is not this test's."""
    backend._settle_releases()
    sent: list[tuple[str, str]] = []
    real = backend._call

    async def call(op: str, key: str, **kw: Any) -> Any:
        sent.append((op, key))
        return await real(op, key, **kw)

    backend._call = call  # type: ignore[method-assign]
    return sent


def _workspace(backend: S3Backend) -> vfs.Workspace:
    ws = vfs.Workspace(backend, mount=MOUNT)
    ws.write_bytes(f"{MOUNT}/src/app.py", b"print(1)\n")  # .vfs/ made, the file there
    return ws


def test_an_edit_is_its_read_and_four_requests(make_backend: BackendMaker) -> None:
    """Read one file, write it back changed: the GET, then lease PUT, the file's PUT (If-Match:
    its own check), the history record (one object: decision and journal) and the lease DELETE.
    No HEAD or LIST: the GET gave bytes and version, the file implies its folders, the free lock
    the journals."""
    backend = make_backend()
    ws = _workspace(backend)
    sent = _record(backend)
    with ws.transaction() as tx:
        tx.write(f"{MOUNT}/src/app.py", tx.read_bytes(f"{MOUNT}/src/app.py") + b"print(2)\n")
    backend._settle_releases()  # the lease DELETE, sent without waiting for its answer
    ops = [op for op, _ in sent]
    assert sorted(ops) == sorted(["get_object", "put_object", "put_object", "put_object", "delete_object"])
    assert ws.read_bytes(f"{MOUNT}/src/app.py") == b"print(1)\nprint(2)\n"
    assert [(c.path, c.action) for c in ws.log(limit=1)[0].changes] == [(f"{MOUNT}/src/app.py", "modify")]


def test_a_holder_that_leaves_a_journal_unresolved_makes_the_next_one_look(make_backend: BackendMaker) -> None:
    """A journal left unresolved (here: planted, as a commit whose rollback failed leaves it)
    by a holder that knows it marks the lock released-dirty: the next commit, by another client,
    takes the lock over at once, lists the journals and recovers that one first."""
    first = make_backend()
    ws = _workspace(first)
    second = make_backend(bucket=first.bucket, prefix=first.prefix, storage={"skip_instance_cache": True})
    other = vfs.Workspace(second, mount=MOUNT)
    with ws._ctx.commit_lock():  # a holder that leaves a journal it could not resolve
        tx = ws.transaction()
        tx.write(f"{MOUNT}/src/app.py", b"half\n")
        journal_txid = _plant_pending_journal(ws, tx)
        ws._ctx.unresolved[journal_txid] = "its rollback failed"
    lease = json.loads(first.read(".vfs/lock")[0])
    assert lease["released"] is True  # left in place, marked, not deleted
    sent = _record(second)
    other.write_bytes(f"{MOUNT}/src/other.py", b"x\n")
    assert ("list_objects_v2", ".vfs/tx") in sent  # it looked for the journal...
    assert journal_txid not in other.pending()  # ...and resolved it before committing
    assert other.read_bytes(f"{MOUNT}/src/other.py") == b"x\n"


def _plant_pending_journal(ws: vfs.Workspace, tx: vfs.Transaction) -> str:
    """Write ``tx``'s journal without applying it: an interrupted commit's record."""
    from vfs.commit import Commit

    commit = Commit(ws._ctx, tx._overlay, label="half", kind="commit", reverts=[])
    targets = tx._overlay.targets()
    commit._read_pre_images(targets)
    journal = commit._settle(commit._prepare_journal(targets))  # its digests filled in, as before a write
    ws._ctx.storage.write(ws._ctx.log.journal_item(journal))
    tx.abort()
    return journal.txid


def test_a_batch_read_of_a_folder_lists_it_and_fetches_only_its_files(make_backend: BackendMaker) -> None:
    """Eight or more keys of one folder: one LIST tells files, missing keys and directories
    apart, and only the files are fetched (a patch adding modules costs no GET per new file)."""
    from backends.base import WriteItem

    backend = make_backend()
    backend.write(WriteItem("pkg/old.py", b"old\n"))
    backend.write(WriteItem("pkg/sub/inner.py", b"inner\n"))
    keys = ["pkg/old.py", "pkg/sub"] + [f"pkg/new_{i}.py" for i in range(8)]
    sent = _record(backend)
    results = backend.read_many(keys)
    assert sorted(op for op, _ in sent) == ["get_object", "list_objects_v2"]
    data, info = results[0]  # type: ignore[misc]
    assert data == b"old\n" and info.version
    assert isinstance(results[1], IsADirectoryError)
    assert all(type(r) is FileNotFoundError for r in results[2:])


def _folder_files(n: int, size: int = 4096) -> dict[str, bytes]:
    return {f"{MOUNT}/src/mod_{i:02d}.py": f"# {i}\n".encode() + b"x" * size for i in range(n)}


def test_a_large_journal_goes_up_while_the_lock_is_taken(make_backend: BackendMaker) -> None:
    """A journal too large for one fenced request goes up in parts (issue 12); where nothing of
    it needs the lock (every pre-image read, no directory), the upload is created and its part
    sent while the lease is asked for (no one sees a part before the completion), so only the
    small fenced completion follows the preflight's checks: two round trips less for a
    many-file commit than a journal made and sent after them."""
    backend = make_backend()
    ws = _workspace(backend)
    # in a new folder, which the commit stats at staging and checks again under the lock
    files = {f"{MOUNT}/src/sub/mod_{i:02d}.py": f"# {i}\n".encode() + b"x" * 4096 for i in range(10)}
    sent = _record(backend)
    with ws.transaction() as tx:
        tx.prefetch(list(files))
        for path, data in files.items():
            tx.write(path, data)
        staged = len(sent)
    backend._settle_releases()
    commit = [op for op, _ in sent[staged:]]
    assert commit.count("create_multipart_upload") == 1 and commit.count("complete_multipart_upload") == 1
    lock = commit.index("put_object")  # the lease
    assert commit.index("create_multipart_upload") < lock  # sent before the lease is asked for
    assert "head_object" in commit[lock + 1 : commit.index("complete_multipart_upload")]  # the re-check
    assert all(ws.read_bytes(path) == data for path, data in files.items())
    uploads = backend._run(lambda: backend._call("list_multipart_uploads", "", Prefix=backend._obj(".vfs/")))
    assert not uploads.get("Uploads")  # completed, none left open


def test_a_journal_made_before_a_busy_lock_is_made_again_under_it(make_backend: BackendMaker) -> None:
    """A journal made before the lock has its txid drawn then; had the lock to be waited for,
    another commit may have drawn a later one and landed first, and history would list the two
    out of order. So that journal is dropped (its upload aborted) and made again under the lock."""
    backend = make_backend()
    ws = _workspace(backend)
    other = make_backend(bucket=backend.bucket, prefix=backend.prefix, storage={"skip_instance_cache": True})
    files = _folder_files(10)
    sent = _record(backend)
    holder = other.lock(".vfs/lock", timeout=5)  # the commit lock
    holder.__enter__()
    threading.Timer(0.5, holder.__exit__, (None, None, None)).start()
    with ws.transaction() as tx:
        for path, data in files.items():
            tx.write(path, data)
    backend._settle_releases()
    backend.close()  # lets the abort, not waited for, land
    made = [key for op, key in sent if op == "create_multipart_upload"]
    completed = [key for op, key in sent if op == "complete_multipart_upload"]
    assert len(made) == 2 and made[0] != made[1] and completed == [made[1]]
    assert [key for op, key in sent if op == "abort_multipart_upload"] == [made[0]]
    client = make_backend(bucket=backend.bucket, prefix=backend.prefix, storage={"skip_instance_cache": True})
    reader = vfs.Workspace(client, mount=MOUNT)
    assert all(reader.read_bytes(path) == data for path, data in files.items())
    assert reader.log()[0].txid in made[1]
    uploads = client._run(lambda: client._call("list_multipart_uploads", "", Prefix=client._obj(".vfs/")))
    assert not uploads.get("Uploads")


def test_a_journal_sent_ahead_of_a_failed_check_is_aborted(make_backend: BackendMaker) -> None:
    """The parts sent ahead of the preflight's checks are aborted when a check fails: nothing
    of the commit is seen, no journal, no upload left open."""
    backend = make_backend()
    ws = _workspace(backend)
    files = _folder_files(10)
    sent = _record(backend)
    tx = ws.transaction()
    seen = tx.read_bytes(f"{MOUNT}/src/app.py")
    for path, data in files.items():
        tx.write(path, data)
    ws.write_bytes(f"{MOUNT}/src/app.py", b"changed meanwhile\n")  # what tx read is stale now
    with pytest.raises(vfs.StaleVersion):
        tx.commit()
    backend._settle_releases()
    backend.close()  # lets the abort, not waited for, land
    ops = [op for op, _ in sent]
    assert "create_multipart_upload" in ops and "abort_multipart_upload" in ops
    assert "complete_multipart_upload" not in ops
    assert seen == b"print(1)\n" and ws.read_bytes(f"{MOUNT}/src/app.py") == b"changed meanwhile\n"
    assert not any(ws.exists(path) for path in files)
    assert ws.pending() == []
    client = make_backend(bucket=backend.bucket, prefix=backend.prefix, storage={"skip_instance_cache": True})
    uploads = client._run(lambda: client._call("list_multipart_uploads", "", Prefix=client._obj(".vfs/")))
    assert not uploads.get("Uploads")


def test_a_prefetch_of_new_files_looks_at_their_folders_in_its_own_round(make_backend: BackendMaker) -> None:
    """The folders a new file's write would stat are fetched and listed with the prefetch, in
    its one concurrent round: the writes that follow send nothing, and the commit re-checks
    the folders under the lock as before."""
    backend = make_backend()
    ws = _workspace(backend)
    files = {f"{MOUNT}/src/sub/mod_{i:02d}.py": f"# {i}\n".encode() for i in range(10)}
    sent = _record(backend)
    with ws.transaction() as tx:
        tx.prefetch(list(files))
        prefetched = list(sent)
        for path, data in files.items():
            tx.write(path, data)
        assert sent == prefetched  # staging sent nothing
    backend._settle_releases()
    # the folder of the new files listed once; each folder fetched and listed (one round, concurrent)
    folders = [
        ("get_object", "src"),
        ("list_objects_v2", "src"),
        ("get_object", "src/sub"),
        ("list_objects_v2", "src/sub"),
    ]
    assert sorted(prefetched) == sorted([("list_objects_v2", "src/sub"), *folders])
    commit = sent[len(prefetched) :]
    assert ("head_object", "src") in commit and ("head_object", "src/sub") in commit  # re-checked
    assert all(ws.read_bytes(path) == data for path, data in files.items())


def test_the_folders_of_prefetched_files_not_written_are_not_checked(make_backend: BackendMaker) -> None:
    backend = make_backend()
    ws = _workspace(backend)
    sent = _record(backend)
    with ws.transaction() as tx:
        tx.prefetch([f"{MOUNT}/docs/a.md", f"{MOUNT}/docs/b.md"])  # absent, and never written
        tx.write(f"{MOUNT}/src/app.py", b"print(2)\n")
        staged = len(sent)
    backend._settle_releases()
    assert ("get_object", "docs") in sent[:staged]  # looked at with the prefetch...
    assert not [key for _, key in sent[staged:] if key == "docs"]  # ...but no part of the commit's check
    assert ws.read_bytes(f"{MOUNT}/src/app.py") == b"print(2)\n"
