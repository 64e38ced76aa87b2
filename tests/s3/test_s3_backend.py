"""S3Backend primitives against real S3 servers (moto and SeaweedFS), no mocked boto calls."""

from __future__ import annotations

import errno

import pytest

import backends
from backends.base import Backend, DeleteItem, PreconditionFailed, TooBig, WriteItem
from backends.s3 import S3Backend
from tests.s3.conftest import BackendMaker
from tests.support.s3_servers import S3Endpoint

MiB = 2**20


def _head_etag(server: S3Endpoint, backend: S3Backend, key: str) -> str:
    return str(server.client().head_object(Bucket=backend.bucket, Key=backend._obj(key))["ETag"])


# -- versions -----------------------------------------------------------------------------------


def test_roundtrip_version_is_the_exact_etag(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend()
    info = be.write(WriteItem("a.txt", b"hello\n"))
    assert info.kind == "file" and info.size == 6
    assert info.version == _head_etag(server, be, "a.txt")
    data, rinfo = be.read("a.txt")
    assert data == b"hello\n"
    assert rinfo.version == info.version
    st = be.stat("a.txt")
    assert st is not None and st.version == info.version and st.size == 6 and st.kind == "file"


def test_version_changes_with_content_and_matches(make_backend: BackendMaker) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"one")).version
    v2 = be.write(WriteItem("f", b"two")).version
    assert v1 != v2
    assert be.matches("f", v2)
    assert not be.matches("f", v1)
    assert be.matches("missing", None)
    assert not be.matches("f", None)
    assert not be.matches("missing", v2)


def test_outside_write_is_seen_despite_s3fs_listing_cache(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"one")).version
    # warm s3fs's own listing cache, then change the object behind everyone's back
    be.fs.ls(f"{be.bucket}/{be.prefix}", detail=True)
    server.client().put_object(Bucket=be.bucket, Key=be._obj("f"), Body=b"changed")
    st = be.stat("f")
    assert st is not None and st.version != v1 and st.size == 7
    assert not be.matches("f", v1)
    assert be.read("f")[0] == b"changed"


def test_versioned_bucket_tokens_change_on_identical_rewrite(make_backend: BackendMaker) -> None:
    be = make_backend(versioned=True)
    v1 = be.write(WriteItem("f", b"same")).version
    v2 = be.write(WriteItem("f", b"same")).version
    assert v1 != v2  # same ETag, new VersionId
    assert be.stat("f").version == v2  # type: ignore[union-attr]
    assert be.read("f")[1].version == v2
    assert [i.version for i in be.list("") if i.key == "f"] == [v2]
    assert be.matches("f", v2) and not be.matches("f", v1)
    v3 = be.write(WriteItem("f", b"new", if_version=v2)).version
    assert be.read("f")[0] == b"new" and v3 != v2
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("f", b"x", if_version=v2))
    assert be.read("f")[0] == b"new"


# -- conditional writes -------------------------------------------------------------------------


def test_create_if_absent_conflict(make_backend: BackendMaker) -> None:
    be = make_backend()
    first = be.write(WriteItem("new.txt", b"first", if_absent=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("new.txt", b"second", if_absent=True))
    assert exc.value.errno == errno.EEXIST
    assert "new.txt" in str(exc.value)
    data, info = be.read("new.txt")
    assert data == b"first" and info.version == first.version


def test_stale_etag_write_is_refused(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"v1")).version
    server.client().put_object(Bucket=be.bucket, Key=be._obj("f"), Body=b"someone else")
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("f", b"mine", if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert exc.value.filename == "f"
    assert be.read("f")[0] == b"someone else"


def test_if_version_on_missing_key_is_precondition_failed(make_backend: BackendMaker) -> None:
    be = make_backend()
    v = be.write(WriteItem("f", b"x")).version
    be.delete(DeleteItem("f"))
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("f", b"y", if_version=v))
    assert be.stat("f") is None


def test_conditional_write_with_current_version_succeeds(make_backend: BackendMaker) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"v1")).version
    info = be.write(WriteItem("f", b"v2", if_version=v1))
    data, rinfo = be.read("f")
    assert data == b"v2" and rinfo.version == info.version
    assert be.matches("f", info.version)


def test_conditional_delete(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"v1")).version
    server.client().put_object(Bucket=be.bucket, Key=be._obj("f"), Body=b"v2")
    with pytest.raises(PreconditionFailed) as exc:
        be.delete(DeleteItem("f", if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert be.read("f")[0] == b"v2"
    v2 = be.stat("f").version  # type: ignore[union-attr]
    be.delete(DeleteItem("f", if_version=v2))
    assert be.stat("f") is None
    with pytest.raises(FileNotFoundError):
        be.delete(DeleteItem("f", if_version=v2))  # SeaweedFS answers 412 here, AWS/moto 404
    with pytest.raises(FileNotFoundError):
        be.delete(DeleteItem("f"))


def test_unconditional_delete_and_missing(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.write(WriteItem("f", b"x"))
    be.delete(DeleteItem("f"))
    assert be.stat("f") is None
    with pytest.raises(FileNotFoundError):
        be.delete(DeleteItem("never"))


def test_multipart_roundtrip_and_conditions(make_backend: BackendMaker) -> None:
    be = make_backend(multipart_threshold=6 * MiB, part_size=5 * MiB)
    big = bytes(range(256)) * (11 * MiB // 256)
    info = be.write(WriteItem("big.bin", big, if_absent=True))
    assert info.version and info.version.rstrip('"').endswith("-3")  # really a 3-part upload
    data, rinfo = be.read("big.bin")
    assert data == big and rinfo.version == info.version
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("big.bin", big, if_absent=True))
    assert exc.value.errno == errno.EEXIST
    info2 = be.write(WriteItem("big.bin", big[::-1], if_version=info.version))
    assert be.read("big.bin")[0] == big[::-1] and info2.version != info.version
    uploads = be.fs.call_s3("list_multipart_uploads", Bucket=be.bucket).get("Uploads") or []
    assert not [u for u in uploads if u["Key"].startswith(be._base)]  # the refused one was aborted


# -- directories --------------------------------------------------------------------------------


def test_listing_files_prefixes_and_markers(make_backend: BackendMaker, server: S3Endpoint) -> None:
    be = make_backend()
    be.write(WriteItem("top.txt", b"t"))
    be.mkdir("src")
    be.write(WriteItem("src/a.py", b"a"))
    be.mkdir("src/pkg")
    be.write(WriteItem("src/pkg/b.py", b"bb"))
    be.mkdir("empty")
    # a prefix with children but no marker (written by another tool)
    server.client().put_object(Bucket=be.bucket, Key=be._obj("implicit/deep/c.txt"), Body=b"c")

    root = {i.key: i for i in be.list("")}
    assert {k: i.kind for k, i in root.items()} == {
        "top.txt": "file",
        "src": "directory",
        "empty": "directory",
        "implicit": "directory",
    }
    assert root["top.txt"].version == be.stat("top.txt").version  # type: ignore[union-attr]
    src = {i.key: (i.kind, i.size) for i in be.list("src")}
    assert src == {"src/a.py": ("file", 1), "src/pkg": ("directory", 0)}
    assert be.list("empty") == []
    assert [i.key for i in be.list("implicit")] == ["implicit/deep"]
    assert be.stat("implicit").kind == "directory"  # type: ignore[union-attr]
    assert be.stat("implicit/deep").kind == "directory"  # type: ignore[union-attr]
    assert be.stat("empty").kind == "directory"  # type: ignore[union-attr]
    with pytest.raises(FileNotFoundError):
        be.list("nope")
    with pytest.raises(NotADirectoryError):
        be.list("top.txt")
    with pytest.raises(IsADirectoryError):
        be.read("src")


def test_listing_paginates(make_backend: BackendMaker) -> None:
    be = make_backend()
    results = be.write_many([WriteItem(f"d/f{n:02}", b"x") for n in range(7)])
    assert not [r for r in results if isinstance(r, BaseException)]
    be._list_page_size = 2
    assert sorted(i.key for i in be.list("d")) == [f"d/f{n:02}" for n in range(7)]


def test_mkdir_rmdir_semantics(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.mkdir("a")
    with pytest.raises(FileExistsError):
        be.mkdir("a")
    with pytest.raises(FileNotFoundError):
        be.mkdir("missing/child")
    be.write(WriteItem("file", b"x"))
    with pytest.raises(FileExistsError):
        be.mkdir("file")
    with pytest.raises(NotADirectoryError):
        be.mkdir("file/child")
    be.mkdir("a/b")
    be.write(WriteItem("a/b/c", b"c"))
    with pytest.raises(OSError) as exc:
        be.rmdir("a/b")
    assert exc.value.errno == errno.ENOTEMPTY
    with pytest.raises(OSError) as exc:
        be.rmdir("a")
    assert exc.value.errno == errno.ENOTEMPTY
    be.delete(DeleteItem("a/b/c"))
    assert be.stat("a/b") is not None  # the marker keeps the emptied directory
    be.rmdir("a/b")
    assert be.stat("a/b") is None
    assert be.list("a") == []
    with pytest.raises(FileNotFoundError):
        be.rmdir("a/b")
    with pytest.raises(NotADirectoryError):
        be.rmdir("file")
    with pytest.raises(IsADirectoryError):
        be.delete(DeleteItem("a"))


def test_read_errors(make_backend: BackendMaker) -> None:
    be = make_backend()
    with pytest.raises(FileNotFoundError):
        be.read("nope")
    assert be.stat("nope") is None
    root = be.stat("")
    assert root is not None and root.kind == "directory"


def test_prefix_isolation(make_backend: BackendMaker) -> None:
    a = make_backend(prefix="one")
    b = make_backend(bucket=a.bucket, prefix="one-two")
    a.write(WriteItem("x", b"a"))
    b.write(WriteItem("x", b"b"))
    assert [i.key for i in a.list("")] == ["x"]
    assert a.read("x")[0] == b"a" and b.read("x")[0] == b"b"
    whole = make_backend(bucket=a.bucket, prefix="")
    assert whole.describe() == f"s3://{a.bucket}"
    assert {i.key for i in whole.list("")} == {"one", "one-two"}


# -- batch extension ----------------------------------------------------------------------------


def test_batch_operations_return_per_item_results(make_backend: BackendMaker) -> None:
    be = make_backend()
    v = be.write(WriteItem("keep", b"k")).version
    results = be.write_many(
        [
            WriteItem("n1", b"1", if_absent=True),
            WriteItem("keep", b"x", if_absent=True),  # conflict
            WriteItem("keep", b"k2", if_version=v),
            WriteItem("n2", b"2"),
        ]
    )
    assert isinstance(results[1], PreconditionFailed) and results[1].errno == errno.EEXIST
    ok = [r for i, r in enumerate(results) if i != 1]
    assert all(not isinstance(r, BaseException) for r in ok)
    reads = be.read_many(["n1", "keep", "missing", "n2"])
    assert isinstance(reads[2], FileNotFoundError)
    assert [r[0] for r in reads if isinstance(r, tuple)] == [b"1", b"k2", b"2"]
    stats = be.stat_many(["n1", "missing"])
    assert stats[1] is None and stats[0].kind == "file"  # type: ignore[union-attr]
    kv = be.read("keep")[1].version
    assert be.matches_many([("keep", kv), ("keep", v), ("missing", None)]) == [True, False, True]
    dels = be.delete_many([DeleteItem("n1"), DeleteItem("keep", if_version=v), DeleteItem("missing")])
    assert dels[0] is None and isinstance(dels[1], PreconditionFailed) and isinstance(dels[2], FileNotFoundError)
    assert be.stat("n1") is None and be.stat("keep") is not None


# -- wiring -------------------------------------------------------------------------------------


def test_registry_opens_s3_urls(server: S3Endpoint, make_backend: BackendMaker) -> None:
    bucket = make_backend().bucket
    opts = dict(server.storage_options, vfs_lease_ttl=7)
    be = backends.open_backend(f"s3a://{bucket}/some/prefix/", opts)
    try:
        assert isinstance(be, S3Backend) and isinstance(be, Backend)
        assert be.describe() == f"s3://{bucket}/some/prefix"
        assert be.lease_ttl == 7.0
        be.write(WriteItem("x", b"1"))
        assert server.client().get_object(Bucket=bucket, Key="some/prefix/x")["Body"].read() == b"1"
    finally:
        be.close()


def test_capabilities_are_honest() -> None:
    caps = S3Backend.capabilities
    assert (caps.conditional_write, caps.exclusive_create, caps.atomic_replace, caps.durable) == (True,) * 4
    assert caps.cross_process_lock
    assert not (caps.real_directories or caps.real_mtime or caps.modes or caps.symlinks)
    assert caps.notes


@pytest.mark.s3
def test_errors_are_builtin(moto_ep: S3Endpoint) -> None:
    be = S3Backend.from_url("s3://no-such-bucket-vfs/x", dict(moto_ep.storage_options))
    try:
        with pytest.raises(FileNotFoundError):
            be.write(WriteItem("f", b"x"))
        with pytest.raises(FileNotFoundError):
            be.read("f")
    finally:
        be.close()


@pytest.mark.seaweedfs
def test_bad_credentials_are_permission_errors(seaweed_ep: S3Endpoint) -> None:
    opts = dict(seaweed_ep.storage_options, key="wrong", secret="wrong")
    be = S3Backend.from_url(f"s3://{seaweed_ep.bucket}/x", opts)
    try:
        with pytest.raises(PermissionError):
            be.write(WriteItem("f", b"x"))
    finally:
        be.close()


def test_mkdir_where_an_implicit_directory_was_emptied(make_backend: BackendMaker) -> None:
    # SeaweedFS keeps "d" in its filer after its last object is deleted: invisible to listings,
    # yet If-None-Match on the "d/" marker fails. mkdir must still work there.
    be = make_backend()
    be.write(WriteItem("d/only", b"x"))
    be.delete(DeleteItem("d/only"))
    assert be.stat("d") is None
    be.mkdir("d")
    assert be.stat("d").kind == "directory"  # type: ignore[union-attr]
    be.mkdir("d/sub")
    assert [(i.key, i.kind) for i in be.list("d")] == [("d/sub", "directory")]
    with pytest.raises(FileExistsError):
        be.mkdir("d")


def test_a_file_used_as_a_directory_is_not_a_directory(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.write(WriteItem("f", b"x"))
    with pytest.raises(NotADirectoryError):
        be.read("f/x")
    with pytest.raises(NotADirectoryError):
        be.read("f/x/y")
    with pytest.raises(NotADirectoryError):
        be.delete(DeleteItem("f/x"))
    with pytest.raises(NotADirectoryError):
        be.list("f/x")
    assert be.stat("f/x") is None
    with pytest.raises(FileNotFoundError):
        be.read("g/x")


# -- size limits --------------------------------------------------------------------------------


def test_read_over_the_limit_is_refused_and_the_client_stays_usable(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.write(WriteItem("big", b"x" * 4096))
    with pytest.raises(TooBig) as caught:
        be.read("big", limit=4095)
    assert (caught.value.size, caught.value.limit, caught.value.errno) == (4096, 4095, errno.EFBIG)
    # the refused body was dropped, not left half-read on a pooled connection
    for _ in range(3):
        assert be.read("big", limit=4096)[0] == b"x" * 4096


def test_a_directory_view_makes_one_delimiter_listing_per_shown_folder(make_backend: BackendMaker) -> None:
    """Issue 20: the str_replace_editor's view of a folder lists the root and each shown level-1
    folder with ``Delimiter="/"`` (everything deeper comes back rolled up into one common prefix),
    never a recursive listing, whatever lies below the 2 levels shown."""
    import vfs
    from editors.str_replace_editor.tool import StrReplaceEditor

    backend = make_backend()
    for key in ["a/f.py", "b/y/z/w.py", "c.txt", *(f"a/x/p{i}/q/f.py" for i in range(6))]:
        backend.write(WriteItem(key, b"x"))
    ws = vfs.Workspace(backend, mount="/workspace")
    lists: list[dict[str, object]] = []
    real_call = backend._call

    async def spy(op: str, key: str, **kwargs: object) -> dict[str, object]:
        if op == "list_objects_v2":
            lists.append(kwargs)
        return await real_call(op, key, **kwargs)

    backend._call = spy  # type: ignore[method-assign]
    result = StrReplaceEditor(ws).run({"command": "view", "path": "/workspace"})
    assert not result.is_error and "/workspace/a/x\n" in result.text and "/p0" not in result.text
    assert sorted(str(kw["Prefix"]) for kw in lists) == [
        f"{backend.prefix}/",
        f"{backend.prefix}/a/",
        f"{backend.prefix}/b/",
    ]
    assert all(kw.get("Delimiter") == "/" for kw in lists)
