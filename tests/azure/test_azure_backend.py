"""AzureBackend primitives against Azurite (a real Azure Blob server on 127.0.0.1), no mocked SDK:
the same contract tests as tests/s3/test_s3_backend.py, plus what is Azure's own."""

from __future__ import annotations

import errno
from typing import Any

import pytest

import backends
from backends.base import Backend, DeleteItem, PreconditionFailed, TooBig, Vanished, WriteItem
from tests.azure.conftest import BackendMaker
from tests.support.azurite import AzuriteEndpoint

pytestmark = pytest.mark.azurite

MiB = 2**20


def outside(ep: AzuriteEndpoint, be: Any, key: str) -> Any:
    """A blob client of another SDK client: a writer behind the backend's back."""
    return ep.service().get_blob_client(be.container.container_name, be._name(key))


# -- versions -----------------------------------------------------------------------------------


def test_version_is_the_blob_etag_never_last_modified(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    info = be.write(WriteItem("a.txt", b"hello\n"))
    props = outside(azurite_ep, be, "a.txt").get_blob_properties()
    assert info.size == 6 and info.version == props.etag.strip('"')
    data, rinfo = be.read("a.txt")
    assert data == b"hello\n" and rinfo.version == info.version
    st = be.stat("a.txt")
    assert st is not None and st.version == info.version and st.kind == "file"
    assert [i.version for i in be.list("")] == [info.version]  # listings give the same token


def test_identical_rewrite_changes_the_version(make_backend: BackendMaker) -> None:
    """Azure's ETag changes on every write (no ABA), unlike an MD5 ETag on S3."""
    be = make_backend()
    v1 = be.write(WriteItem("f", b"same")).version
    v2 = be.write(WriteItem("f", b"same")).version
    assert v1 != v2
    assert be.matches("f", v2) and not be.matches("f", v1)
    assert be.matches("missing", None) and not be.matches("f", None) and not be.matches("missing", v2)


def test_outside_write_is_seen(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("f", b"one")).version
    be.list("")
    outside(azurite_ep, be, "f").upload_blob(b"changed", overwrite=True)
    st = be.stat("f")
    assert st is not None and st.version != v1 and st.size == 7
    assert be.read("f")[0] == b"changed"


# -- conditional writes -------------------------------------------------------------------------


def test_create_if_absent_conflict(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.write(WriteItem("x", b"1", if_absent=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("x", b"2", if_absent=True))
    assert exc.value.errno == errno.EEXIST
    assert be.read("x")[0] == b"1"


def test_stale_version_write_and_delete_are_refused(make_backend: BackendMaker) -> None:
    be = make_backend()
    v1 = be.write(WriteItem("x", b"1")).version
    v2 = be.write(WriteItem("x", b"2", if_version=v1)).version
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("x", b"3", if_version=v1))
    assert exc.value.errno == errno.ESTALE and not isinstance(exc.value, Vanished)
    with pytest.raises(PreconditionFailed):
        be.delete(DeleteItem("x", if_version=v1))
    assert be.read("x") == (b"2", be.stat("x"))
    be.delete(DeleteItem("x", if_version=v2))
    assert be.stat("x") is None


def test_conditions_on_a_deleted_blob_say_vanished(make_backend: BackendMaker) -> None:
    be = make_backend()
    v = be.write(WriteItem("x", b"1")).version
    be.delete(DeleteItem("x"))
    with pytest.raises(Vanished):
        be.write(WriteItem("x", b"2", if_version=v))
    with pytest.raises(Vanished):
        be.delete(DeleteItem("x", if_version=v))
    assert be.stat("x") is None
    with pytest.raises(FileNotFoundError):
        be.delete(DeleteItem("x"))


def test_block_upload_roundtrip_and_conditions(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend(block_threshold=2 * MiB, block_size=1 * MiB)
    big = bytes(range(256)) * (5 * MiB // 256 + 3)
    info = be.write(WriteItem("big.bin", big, if_absent=True))
    blocks = outside(azurite_ep, be, "big.bin").get_block_list("committed")[0]
    assert len(blocks) == 6  # really a block upload: 5 MiB + 768 bytes in 1 MiB blocks
    data, rinfo = be.read("big.bin")
    assert data == big and rinfo.version == info.version
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("big.bin", big, if_absent=True))
    assert exc.value.errno == errno.EEXIST
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("big.bin", big[::-1], if_version="0x8D000000000000"))
    info2 = be.write(WriteItem("big.bin", big[::-1], if_version=info.version))
    assert be.read("big.bin")[0] == big[::-1] and info2.version != info.version


def test_read_over_the_limit_is_refused_and_the_client_stays_usable(make_backend: BackendMaker) -> None:
    be = make_backend(first_get_size=1 * MiB)
    be.write(WriteItem("big", b"z" * (3 * MiB)))
    with pytest.raises(TooBig) as exc:
        be.read("big", limit=MiB)
    assert exc.value.size == 3 * MiB and exc.value.limit == MiB
    assert be.read("big", limit=3 * MiB)[0] == b"z" * (3 * MiB)


@pytest.mark.parametrize("size", [0, 1, 5, 6, 4096])
def test_a_limited_read_fetches_at_most_the_limit_and_one_byte(make_backend: BackendMaker, size: int) -> None:
    """The refusal costs ``limit + 1`` bytes, not the first GET's size (32 MiB by default): the
    range asked for is bounded, and the size reported is the blob's, from its Content-Range."""
    be = make_backend()
    be.write(WriteItem("f", b"q" * size))
    asked: list[int | None] = []
    blob_of = be._blob

    class Recording:
        def __init__(self, key: str) -> None:
            self.inner = blob_of(key)

        def download_blob(self, **kw: object) -> object:
            asked.append(kw.get("length"))  # type: ignore[arg-type]
            return self.inner.download_blob(**kw)

    be._blob = Recording
    if size > 5:
        with pytest.raises(TooBig) as exc:
            be.read("f", limit=5)
        assert exc.value.size == size
        assert asked == [6]
    else:
        data, info = be.read("f", limit=5)
        assert data == b"q" * size and info.size == size


# -- directories --------------------------------------------------------------------------------


def test_listing_files_prefixes_and_markers(make_backend: BackendMaker, azurite_ep: AzuriteEndpoint) -> None:
    be = make_backend()
    be.write(WriteItem("top.txt", b"t"))
    be.mkdir("src")
    be.write(WriteItem("src/a.py", b"a"))
    be.mkdir("src/pkg")
    be.write(WriteItem("src/pkg/b.py", b"bb"))
    be.mkdir("empty")
    outside(azurite_ep, be, "implicit/deep/c.txt").upload_blob(b"c")  # a prefix without a marker
    root = {i.key: i.kind for i in be.list("")}
    assert root == {"top.txt": "file", "src": "directory", "empty": "directory", "implicit": "directory"}
    assert {i.key: (i.kind, i.size) for i in be.list("src")} == {"src/a.py": ("file", 1), "src/pkg": ("directory", 0)}
    assert be.list("empty") == []
    assert [i.key for i in be.list("implicit")] == ["implicit/deep"]
    assert be.stat("implicit/deep").kind == "directory"
    with pytest.raises(FileNotFoundError):
        be.list("nope")
    with pytest.raises(NotADirectoryError):
        be.list("top.txt")
    with pytest.raises(IsADirectoryError):
        be.read("src")


def test_mkdir_rmdir_semantics(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.mkdir("a")
    with pytest.raises(FileExistsError):
        be.mkdir("a")
    with pytest.raises(FileNotFoundError):
        be.mkdir("missing/child")
    be.write(WriteItem("file", b"x"))
    with pytest.raises(NotADirectoryError):
        be.mkdir("file/child")
    be.mkdir("a/b")
    be.write(WriteItem("a/b/c", b"c"))
    with pytest.raises(OSError) as exc:
        be.rmdir("a")
    assert exc.value.errno == errno.ENOTEMPTY
    be.delete(DeleteItem("a/b/c"))
    assert be.stat("a/b") is not None  # the marker keeps the emptied directory
    be.rmdir("a/b")
    assert be.stat("a/b") is None and be.list("a") == []
    with pytest.raises(FileNotFoundError):
        be.rmdir("a/b")
    with pytest.raises(NotADirectoryError):
        be.rmdir("file")
    with pytest.raises(IsADirectoryError):
        be.delete(DeleteItem("a"))


def test_a_file_used_as_a_directory_is_not_a_directory(make_backend: BackendMaker) -> None:
    be = make_backend()
    be.write(WriteItem("f", b"x"))
    with pytest.raises(NotADirectoryError):
        be.read("f/child")


def test_prefix_isolation(make_backend: BackendMaker) -> None:
    a = make_backend(prefix="one")
    b = make_backend(container=a.container.container_name, prefix="one-two")
    a.write(WriteItem("x", b"a"))
    b.write(WriteItem("x", b"b"))
    assert [i.key for i in a.list("")] == ["x"]
    assert a.read("x")[0] == b"a" and b.read("x")[0] == b"b"
    whole = make_backend(container=a.container.container_name, prefix="")
    assert whole.describe() == f"az://{a.container.container_name}"
    assert {i.key for i in whole.list("")} == {"one", "one-two"}


# -- batches ------------------------------------------------------------------------------------


def test_batch_operations_return_per_item_results(make_backend: BackendMaker) -> None:
    be = make_backend()
    v = be.write(WriteItem("keep", b"k")).version
    be.mkdir("dir")
    items = [WriteItem("n1", b"1", if_absent=True), WriteItem("keep", b"x", if_absent=True)]
    items += [WriteItem("keep", b"k2", if_version=v), WriteItem("n2", b"2")]
    results = be.write_many(items)
    assert isinstance(results[1], PreconditionFailed) and results[1].errno == errno.EEXIST
    assert all(not isinstance(r, BaseException) for i, r in enumerate(results) if i != 1)
    reads = be.read_many(["n1", "keep", "missing", "n2", "dir"])
    assert isinstance(reads[2], FileNotFoundError) and isinstance(reads[4], IsADirectoryError)
    assert [r[0] for r in reads if isinstance(r, tuple)] == [b"1", b"k2", b"2"]
    stats = be.stat_many(["n1", "missing"])
    assert stats[1] is None and stats[0].kind == "file"
    kv = be.read("keep")[1].version
    assert be.matches_many([("keep", kv), ("keep", v), ("missing", None)]) == [True, False, True]
    dels = be.delete_many([DeleteItem("n1"), DeleteItem("keep", if_version=v), DeleteItem("missing")])
    assert dels[0] is None and isinstance(dels[1], PreconditionFailed) and isinstance(dels[2], FileNotFoundError)
    assert be.stat("n1") is None and be.stat("keep") is not None


# -- wiring and errors --------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["az", "abfs", "abfss"])
def test_registry_opens_azure_urls(scheme: str, azurite_ep: AzuriteEndpoint, make_backend: BackendMaker) -> None:
    from backends.azure import AzureBackend

    container = make_backend().container.container_name
    be = backends.open_backend(
        f"{scheme}://{container}/some/prefix/", {**azurite_ep.storage_options, "vfs_lease_ttl": 7}
    )
    try:
        assert isinstance(be, AzureBackend) and isinstance(be, Backend)
        assert be.describe() == f"{scheme}://{container}/some/prefix" and be.lease_ttl == 7.0
        be.write(WriteItem("f", b"via the registry"))
        assert be.read("f")[0] == b"via the registry"
    finally:
        be.close()


def test_account_name_and_key_options(azurite_ep: AzuriteEndpoint, make_backend: BackendMaker) -> None:
    from tests.support.azurite import ACCOUNT, ACCOUNT_KEY

    container = make_backend().container.container_name
    opts = {"account_name": ACCOUNT, "account_key": ACCOUNT_KEY, "account_url": azurite_ep.blob_url}
    be = backends.open_backend(f"az://{container}/p", opts)
    try:
        be.write(WriteItem("f", b"shared key"))
        assert be.read("f")[0] == b"shared key"
    finally:
        be.close()


def test_bad_key_is_a_permission_error(azurite_ep: AzuriteEndpoint, make_backend: BackendMaker) -> None:
    from tests.support.azurite import ACCOUNT

    container = make_backend().container.container_name
    opts = {"account_name": ACCOUNT, "account_key": "d3Jvbmc=", "account_url": azurite_ep.blob_url}
    be = backends.open_backend(f"az://{container}/p", opts)
    try:
        with pytest.raises(PermissionError):
            be.write(WriteItem("f", b"x"))
    finally:
        be.close()


def test_missing_container_is_file_not_found(azurite_ep: AzuriteEndpoint) -> None:
    be = backends.open_backend("az://no-such-container-here/p", azurite_ep.storage_options)
    try:
        with pytest.raises(FileNotFoundError):
            be.write(WriteItem("f", b"x"))
    finally:
        be.close()


def test_capabilities_are_honest() -> None:
    from backends.azure import AzureBackend

    caps = AzureBackend.capabilities
    assert caps.conditional_write and caps.exclusive_create and caps.lock_can_expire
    assert not caps.real_directories and not caps.modes and not caps.symlinks


def test_import_vfs_does_not_load_the_azure_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, vfs, backends; print(sorted(m for m in sys.modules if m.startswith('azure')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("url", "container", "prefix", "account"),
    [
        ("az://c/p/q/", "c", "p/q", None),
        ("abfs://c", "c", "", None),
        ("abfss://c@acct.dfs.core.windows.net/p", "c", "p", "acct"),
    ],
)
def test_urls_name_container_prefix_and_account(url: str, container: str, prefix: str, account: str | None) -> None:
    from backends.azure.connect import parse_url

    loc = parse_url(url)
    assert (loc.container, loc.prefix, loc.account_name) == (container, prefix, account)


def test_a_root_without_container_or_account_is_refused() -> None:
    from backends.azure.connect import container_client, parse_url

    with pytest.raises(ValueError):
        parse_url("az:///p")
    with pytest.raises(ValueError):
        container_client(parse_url("az://c/p"), {"anon": True}, {})
