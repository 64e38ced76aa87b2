"""The Azure Blob Storage backend (see the package docstring for the contract it keeps)."""

from __future__ import annotations

import builtins
import contextlib
import errno
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, ClassVar, TypeVar

from backends.azure import connect, fence
from backends.azure.errors import conflict, is_conflict, is_not_found, status_of, translate, vanished
from backends.base import (
    BadRoot,
    Capabilities,
    DeleteItem,
    FileInfo,
    TooBig,
    WriteItem,
    iter_parents,
    joined,
    miss_verdict,
    parent_of,
)
from backends.fence import FENCE, INLINE_BODY, RESOLUTION, late
from backends.lease import CasLease, HeldLocks

T = TypeVar("T")
MiB = 2**20

#: Metadata key naming one write attempt, so that a conditional write the SDK retried (its first
#: attempt may have landed, the retry then fails its own condition) can be recognised as ours.
WRITE_ID = "vfswrite"


def _version(etag: str | None) -> str | None:
    """The ETag without quotes: listings give it bare, HEAD/PUT responses quoted."""
    return etag.strip('"') if etag else None


def _quoted(version: str) -> str:
    return f'"{version}"'


def _mtime(props: Any) -> float | None:
    lm = getattr(props, "last_modified", None)
    return float(lm.timestamp()) if lm is not None else None


def _info(key: str, props: Any) -> FileInfo:
    return FileInfo(key, "file", _whole_size(props), None, _version(props.etag), _mtime(props))


def _whole_size(props: Any) -> int:
    """The blob's size, also after a ranged GET (``bytes 0-10/3000``: its properties' ``size`` is
    then the range's length; the Content-Range's total is the blob's)."""
    total = str(getattr(props, "content_range", None) or "").rpartition("/")[2]
    return int(total) if total.isdigit() else int(props.size or 0)


class AzureBackend:
    name: ClassVar[str] = "azure"
    capabilities = Capabilities(
        atomic_replace=True,
        conditional_write=True,
        exclusive_create=True,
        durable=True,
        cross_process_lock=True,
        real_directories=False,
        real_mtime=False,
        modes=False,
        symlinks=False,
        lock_can_expire=True,
        notes=(
            "Versions are blob ETags (which change on every write, even with identical bytes); writes "
            "and deletes are conditional in the store (If-Match / If-None-Match: *), the commit of a "
            "block upload included.",
            "Directories are key prefixes: mkdir writes an empty '<dir>/' marker blob; a directory "
            "whose last file is deleted disappears unless it has a marker.",
            "The commit lock is a lease object with an expiry (default 30 s) on the shared "
            "compare-and-swap lease, renewed in the background; a crashed holder blocks others for "
            "at most the lease time.",
            "Where the account key is known, each change under the lease carries a SAS that expires "
            "with the lease, so the store refuses a paused holder's late change (backends/azure/fence.py); "
            "with a SAS token or an Azure AD credential, the lease is checked again right before each write.",
            "No file modes, no symlinks; Last-Modified has 1 s resolution and is never used as a version.",
        ),
    )

    def __init__(
        self,
        container: Any,
        prefix: str = "",
        *,
        label: str = "",
        lease_ttl: float = 30.0,
        clock_skew: float = 5.0,
        block_threshold: int = 64 * MiB,
        block_size: int = 8 * MiB,
        max_concurrency: int = 32,
        fenced: Any = None,
    ) -> None:
        self.container = container
        #: the client that sends changes under a lease, signed to expire with it (None: no key)
        self._fenced = fenced
        self.prefix = prefix.strip("/")
        self._base = f"{self.prefix}/" if self.prefix else ""
        self.label = label or f"az://{container.container_name}"
        self.lease_ttl = lease_ttl
        self.clock_skew = clock_skew
        self.block_threshold = max(block_threshold, 1)
        self.block_size = block_size
        self.max_concurrency = max_concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._held = HeldLocks()
        self._session: Any = None

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> AzureBackend:
        loc = connect.parse_url(url)
        options, tuning = connect.split_options(storage_options)
        concurrency = int(tuning.get("max_concurrency", 32))
        session, transport = _transport(concurrency)
        client_kwargs = {
            "transport": transport,
            "raw_request_hook": connect.check_before_send,
            # the first GET of an unlimited read is this big (a limited one asks for limit + 1 bytes)
            "max_single_get_size": int(tuning.get("first_get_size", 4 * MiB)),
            "max_chunk_get_size": int(tuning.get("chunk_get_size", 8 * MiB)),
        }
        container = connect.container_client(loc, options, client_kwargs)
        signer = fence.signer_for(container)
        fenced = None
        if signer is not None:
            hooked = {**client_kwargs, "raw_request_hook": fence.fenced_hook(signer)}
            fenced = connect.fenced_client(container, connect.sdk_kwargs(options, hooked))
        backend = cls(
            container,
            loc.prefix,
            label=f"{url.partition('://')[0]}://{url.partition('://')[2].partition('/')[0]}",
            lease_ttl=float(tuning.get("lease_ttl", 30.0)),
            clock_skew=float(tuning.get("clock_skew", 5.0)),
            block_threshold=int(tuning.get("block_threshold", 64 * MiB)),
            block_size=int(tuning.get("block_size", 8 * MiB)),
            max_concurrency=concurrency,
            fenced=fenced,
        )
        backend._session = session
        return backend

    @property
    def fenced(self) -> bool:
        """Whether changes under a lease are fenced by the store (see backends/azure/fence.py)."""
        return self._fenced is not None

    def describe(self) -> str:
        return f"{self.label}/{self.prefix}" if self.prefix else self.label

    def check_root(self) -> None:
        """The container exists (one request); a prefix needs nothing: a fresh one is empty."""
        try:
            self.container.get_container_properties()
        except Exception as exc:
            if is_not_found(exc):  # ContainerNotFound is a 404
                raise BadRoot(
                    f"The container {self.container.container_name} of the workspace root {{root}} does not "
                    "exist (create it first; check the name and the account)."
                ) from None
            raise translate(exc, "") from exc

    # -- plumbing ---------------------------------------------------------------------------

    def _name(self, key: str) -> str:
        return f"{self._base}{key}"

    def _dir_prefix(self, key: str) -> str:
        return f"{self._base}{key}/" if key else self._base

    def _blob(self, key: str, client: Any = None) -> Any:
        """The SDK's client of ``key``'s blob, through ``client`` (a container client; by default
        the credentialed one)."""
        return (client or self.container).get_blob_client(self._name(key))

    def _gather(self, calls: Sequence[Callable[[], T]]) -> builtins.list[T | BaseException]:
        """Run ``calls`` concurrently; one result per call (its value or its exception)."""

        def one(call: Callable[[], T]) -> T | BaseException:
            try:
                return call()
            except Exception as exc:  # noqa: BLE001 - a per-item result, by design
                return exc

        if len(calls) <= 1:
            return [one(c) for c in calls]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="vfs-azure")
        return list(self._pool.map(one, calls))

    # -- single-key primitives ---------------------------------------------------------------

    def _head(self, key: str) -> FileInfo | None:
        try:
            props = self._blob(key).get_blob_properties()
        except Exception as exc:
            if is_not_found(exc):
                return None
            raise translate(exc, key) from exc
        return _info(key, props)

    def _has_children(self, key: str) -> bool:
        try:
            pages = self.container.list_blobs(name_starts_with=self._dir_prefix(key), results_per_page=1).by_page()
            return any(True for _ in next(pages, []))
        except Exception as exc:
            raise translate(exc, key) from exc

    def stat(self, key: str) -> FileInfo | None:
        if key == "":
            return FileInfo("", "directory")
        head = self._head(key)
        if head is not None:
            return head
        return FileInfo(key, "directory") if self._has_children(key) else None

    def _missing(self, key: str, *, want: str) -> OSError:
        """Why there is no ``want`` ("file" or "directory") at ``key``, as a filesystem would say
        (misses only: the prefix, the blob and every ancestor, concurrently)."""
        ancestors = list(iter_parents(key))
        calls: list[Callable[[], Any]] = [lambda: self._has_children(key), lambda: self._head(key)]
        calls += [partial(self._head, a) for a in ancestors]
        is_dir, here, *heads = self._gather(calls)
        for result in (is_dir, here, *heads):
            if isinstance(result, BaseException):
                return OSError(errno.EIO, f"Azure request failed: {result}", key)
        return miss_verdict(key, want, bool(is_dir), here, heads)

    def read(self, key: str, *, limit: int | None = None, explain_misses: bool = True) -> tuple[bytes, FileInfo]:
        """One GET gives the size and ETag. Under a ``limit`` that GET asks for ``limit + 1``
        bytes at most and the blob's whole size comes from its Content-Range, so a file over the
        limit costs that many bytes, never its size. Later chunks are read with If-Match on that
        ETag (the SDK's own rule), so the bytes returned are exactly those of the version returned."""
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        try:
            stream = self._download(key, limit)
            size = _whole_size(stream.properties)
            if limit is not None and size > limit:
                raise TooBig(key, size, limit)
            data = stream.readall()
        except TooBig:
            raise
        except Exception as exc:
            if is_not_found(exc):
                if not explain_misses:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", key) from None
                raise self._missing(key, want="file") from None
            raise translate(exc, key) from exc
        return bytes(data), _info(key, stream.properties)

    def _download(self, key: str, limit: int | None) -> Any:
        blob = self._blob(key)
        if limit is None:
            return blob.download_blob()
        try:
            return blob.download_blob(offset=0, length=limit + 1)
        except Exception as exc:
            if status_of(exc) != 416:
                raise
            return blob.download_blob()  # a range is invalid only on an empty blob

    def write(self, item: WriteItem) -> FileInfo:
        """``mode`` is ignored (no permission bits in Azure); every acknowledged PUT is durable."""
        key = item.key
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if item.if_absent and item.if_version is not None:
            raise ValueError("if_absent and if_version are mutually exclusive")
        cond = self._condition(item)
        data = bytes(joined(item.data))
        write_id = uuid.uuid4().hex
        try:
            with self._sending(key) as client:
                out = self._put(key, data, cond, write_id, client)
        except Exception as exc:
            if cond and (is_conflict(exc) or is_not_found(exc)):
                outcome = self._explain_conflict(item, write_id)
                if isinstance(outcome, FileInfo):
                    return outcome
                raise outcome from None
            raise translate(exc, key) from exc
        return FileInfo(key, "file", len(data), None, _version(out.get("etag")), None)

    def _put(self, key: str, data: bytes, cond: dict[str, str], write_id: str, client: Any) -> dict[str, Any]:
        """One Put Blob, or blocks and a Put Block List: for a large body, and for any body a fenced
        request should not carry itself (``backends.fence.INLINE_BODY``)."""
        if len(data) >= self.block_threshold or (client is self._fenced and len(data) > INLINE_BODY):
            return self._upload_blocks(key, data, cond, write_id, client)
        blob = self._blob(key, client)
        out: dict[str, Any] = blob.upload_blob(data, overwrite=True, metadata={WRITE_ID: write_id}, **cond)
        return out

    @contextlib.contextmanager
    def _sending(self, key: str) -> Iterator[Any]:
        """Around a request that changes the store, giving the container client to send it with:
        sent only while every lease held here is valid (checked now, and again before each
        attempt by the client's hook); under a lease, through the fenced client where there is
        one, so the store refuses it once the lease's validity is over (``backends.azure.fence``).
        The lease's own object is exempt from both."""
        check = None if key in self._held.lease_keys() else self._held.require_valid
        if check is not None:
            check()
        fenced = self._fenced is not None and check is not None and self._held.guards(key)
        token = connect.SEND_CHECK.set(check)
        fence_token = FENCE.set(self._held.valid_until if fenced else None)
        try:
            yield self._fenced if fenced else self.container
        except connect.NotSent as stopped:
            raise stopped.lost from None
        except Exception as exc:
            if fenced and fence.refused_as_late(exc):
                self._held.require_valid()  # LeaseLost, unless the lease was renewed meanwhile
                raise late(key) from exc
            raise
        finally:
            FENCE.reset(fence_token)
            connect.SEND_CHECK.reset(token)

    def _condition(self, item: WriteItem | DeleteItem) -> dict[str, str]:
        if isinstance(item, WriteItem) and item.if_absent:
            return {"if_none_match": "*"}
        if item.if_version is not None:
            return {"if_match": _quoted(item.if_version)}
        return {}

    def _explain_conflict(self, item: WriteItem, write_id: str) -> FileInfo | BaseException:
        """A failed condition, told apart: our own retried write that landed (the SDK retries
        after a lost response; the retry then fails the condition the first attempt changed),
        a deleted version (``Vanished``), or another version (``PreconditionFailed``)."""
        try:
            props = self._blob(item.key).get_blob_properties()
        except Exception as exc:  # noqa: BLE001 - returned (translated), not swallowed
            if is_not_found(exc):
                return vanished(item.key) if item.if_version is not None else conflict(item.key, if_absent=True)
            return translate(exc, item.key)
        if (props.metadata or {}).get(WRITE_ID) == write_id:
            return _info(item.key, props)
        return conflict(item.key, if_absent=item.if_absent)

    def _upload_blocks(self, key: str, data: bytes, cond: dict[str, str], write_id: str, client: Any) -> dict[str, Any]:
        """Stage the blocks concurrently (unconditionally, unfenced: staged blocks are invisible),
        then commit the block list through ``client`` with the write's condition: the store
        checks it at the commit."""
        blob = self._blob(key)
        upload = uuid.uuid4().hex  # block ids unique to this upload: never mixed with a concurrent one
        offsets = list(range(0, len(data), self.block_size))
        ids = [f"{upload}-{i:06d}" for i in range(len(offsets))]
        staged = self._gather(
            [partial(blob.stage_block, b, data[s : s + self.block_size]) for b, s in zip(ids, offsets, strict=True)]
        )
        for result in staged:
            if isinstance(result, BaseException):
                raise result
        committer = blob if client is self.container else self._blob(key, client)
        out: dict[str, Any] = committer.commit_block_list(ids, metadata={WRITE_ID: write_id}, **cond)
        return out

    def delete(self, item: DeleteItem) -> None:
        key = item.key
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if item.if_version is None and self._head(key) is None:
            raise self._missing(key, want="file")
        try:
            with self._sending(key) as client:
                self._blob(key, client).delete_blob(**self._condition(item))
        except Exception as exc:
            if item.if_version is not None and (is_not_found(exc) or is_conflict(exc)):
                # gone rather than changed? (Azurite answers If-Match on a missing blob with 412)
                raise (vanished(key) if self._head(key) is None else conflict(key, if_absent=False)) from None
            raise translate(exc, key) from exc

    def list(self, key: str) -> builtins.list[FileInfo]:
        prefix = self._dir_prefix(key)
        files: dict[str, FileInfo] = {}
        dirs: dict[str, FileInfo] = {}
        seen_anything = False
        try:
            for entry in self.container.walk_blobs(name_starts_with=prefix, delimiter="/"):
                seen_anything = True
                name = str(entry.name)[len(prefix) :]
                is_prefix = name.endswith("/") and not hasattr(entry, "etag")
                name = name.rstrip("/") if is_prefix else name
                if not name or "/" in name:  # the directory's own marker
                    continue
                child = f"{key}/{name}" if key else name
                if is_prefix:
                    dirs[child] = FileInfo(child, "directory")
                else:
                    files[child] = _info(child, entry)
        except Exception as exc:
            raise translate(exc, key) from exc
        if not seen_anything and key != "":
            raise self._missing(key, want="directory")
        for k in files:
            dirs.pop(k, None)  # blob "k" and prefix "k/" both exist: report the file
        return [*files.values(), *dirs.values()]

    def mkdir(self, key: str) -> None:
        if key == "":
            raise FileExistsError(errno.EEXIST, "File exists", key)
        parent = parent_of(key)
        here, up = self._gather([lambda: self.stat(key), lambda: self.stat(parent)])
        for result in (here, up):
            if isinstance(result, BaseException):
                raise result
        if here is not None:
            raise FileExistsError(errno.EEXIST, "File exists", key)
        if up is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", parent)
        if isinstance(up, FileInfo) and up.kind != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
        try:
            with self._sending(key) as client:
                marker = client.get_blob_client(self._dir_prefix(key))
                marker.upload_blob(b"", overwrite=True, if_none_match="*")
        except Exception as exc:
            if is_conflict(exc):
                raise FileExistsError(errno.EEXIST, "File exists", key) from None
            raise translate(exc, key) from exc

    def rmdir(self, key: str) -> None:
        if key == "":
            raise OSError(errno.EBUSY, "cannot remove the root", key)
        marker = self._dir_prefix(key)
        try:
            pages = self.container.list_blobs(name_starts_with=marker, results_per_page=2).by_page()
            names = [str(b.name) for b in next(pages, [])]
        except Exception as exc:
            raise translate(exc, key) from exc
        if not names:
            if self._head(key) is not None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        if any(n != marker for n in names):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", key)
        try:
            with self._sending(key) as client:
                client.get_blob_client(marker).delete_blob()
        except Exception as exc:
            raise translate(exc, key) from exc

    def matches(self, key: str, version: str | None) -> bool:
        if version is None:
            return self.stat(key) is None
        head = self._head(key)
        return head is not None and head.version == version

    def resolve(self, key: str) -> str:
        return key  # no symlinks in Azure Blob Storage

    def lock(self, key: str, *, timeout: float) -> CasLease:
        return CasLease(
            self,
            key,
            timeout=timeout,
            ttl=self.lease_ttl,
            clock_skew=self.clock_skew,
            held=self._held,
            resolution=RESOLUTION if self._fenced is not None else 0.0,
        )

    def close(self) -> None:
        self._held.release_all()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._session is not None:  # only the instance from_url made owns the client
            for client in (self.container, self._fenced):
                if client is not None:
                    with contextlib.suppress(Exception):
                        client.close()
            self._session.close()
            self._session = None

    # -- the batch extension ----------------------------------------------------------------

    def stat_many(self, keys: Sequence[str]) -> builtins.list[FileInfo | BaseException | None]:
        return self._gather([partial(self.stat, k) for k in keys])

    def read_many(
        self, keys: Sequence[str], *, limit: int | None = None
    ) -> builtins.list[tuple[bytes, FileInfo] | BaseException]:
        """Concurrent GETs; a miss is then told apart from a directory by one listing per miss
        (a miss is not explained further: vfs checks the ancestors of what it writes itself)."""
        results = self._gather([partial(self.read, k, limit=limit, explain_misses=False) for k in keys])
        misses = [i for i, r in enumerate(results) if isinstance(r, FileNotFoundError)]
        verdicts = self._gather([partial(self._has_children, keys[i]) for i in misses])
        for index, is_dir in zip(misses, verdicts, strict=True):
            if isinstance(is_dir, BaseException):
                results[index] = is_dir
            elif is_dir:
                results[index] = IsADirectoryError(errno.EISDIR, "Is a directory", keys[index])
        return results

    def write_many(self, items: Sequence[WriteItem]) -> builtins.list[FileInfo | BaseException]:
        return self._gather([partial(self.write, i) for i in items])

    def delete_many(self, items: Sequence[DeleteItem]) -> builtins.list[BaseException | None]:
        return self._gather([partial(self.delete, i) for i in items])

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> builtins.list[bool | BaseException]:
        return self._gather([partial(self.matches, k, v) for k, v in items])

    # -- the lease store (backends.lease.CasStore) ------------------------------------------

    def lease_get(self, key: str) -> tuple[bytes, str] | None:
        try:
            data, info = self.read(key)
        except FileNotFoundError:
            return None
        return data, info.version or ""

    def lease_put(self, key: str, body: bytes, *, if_etag: str | None) -> str:
        info = self.write(WriteItem(key, body, if_absent=if_etag is None, if_version=if_etag))
        return info.version or ""

    def lease_delete(self, key: str, *, if_etag: str) -> None:
        self.delete(DeleteItem(key, if_version=if_etag))


def _transport(concurrency: int) -> tuple[Any, Any]:
    """The session of :mod:`backends.azure.transport`, wrapped as the SDK's transport."""
    from azure.core.pipeline.transport import RequestsTransport

    from backends.azure import transport

    session = transport.session(concurrency)
    return session, RequestsTransport(session=session, session_owner=False)
