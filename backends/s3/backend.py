"""S3Backend: the seam's primitives and its batch extension on S3, put together from the parts
of this package (see ``backends/s3/__init__.py`` for the whole picture).

Objects are read and written here: ``GET`` (refused by its ``ContentLength`` before any body byte
when over ``limit``), ``PUT`` / multipart with ``If-Match`` / ``If-None-Match``, ``DeleteObject``
with ``If-Match``. A conditional request that botocore had to *retry* (the first attempt may have
landed) and then got 412 is resolved by a ``HEAD``: if the object now holds exactly our bytes
(plain MD5 ETag) the write is ours. ``write`` does not require the parent "directory" to exist and
does not look for a directory at the key (each would cost a request per write; vfs checks both in
its preflight).
"""

from __future__ import annotations

import asyncio
import atexit
import builtins
import concurrent.futures
import contextlib
import errno
import hashlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

from backends.base import (
    BadRoot,
    Capabilities,
    DeleteItem,
    FileInfo,
    TooBig,
    Vanished,
    WriteItem,
    iter_parents,
    joined,
    parent_of,
)
from backends.lease import CasLease, HeldLocks
from backends.s3 import errors, fence, versions
from backends.s3.client import MiB, open_filesystem
from backends.s3.directories import PrefixDirectories
from backends.s3.multipart import MultipartUpload, Uploaded

T = TypeVar("T")

#: A batch read lists a folder first when it asks for this many of its keys (see ``_read_many``).
LIST_FIRST = 8

#: Backends with a lease release in flight: settled at exit, so no lease outlives its process.
_RELEASING: weakref.WeakSet[S3Backend] = weakref.WeakSet()


@atexit.register
def _settle_at_exit() -> None:
    for backend in list(_RELEASING):
        backend._settle_releases(timeout=10.0)


class S3Backend(PrefixDirectories, MultipartUpload):
    name: ClassVar[str] = "s3"
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
        lock_knows_resolved=True,
        sends_ahead=True,
        notes=(
            "Versions are S3 ETags (plus VersionId on versioned buckets); writes and deletes are "
            "conditional in the store (If-Match / If-None-Match), multipart uploads included.",
            "Directories are key prefixes: mkdir writes an empty '<dir>/' marker object; a directory "
            "whose last file is deleted disappears unless it has a marker.",
            "The commit lock is a lease object with an expiry (default 30 s), renewed in the "
            "background; a crashed holder blocks others for at most the lease time.",
            "No file modes, no symlinks; LastModified has 1 s resolution and is never used as a version.",
            "On a versioned bucket If-Match compares ETags: a concurrent rewrite with byte-identical "
            "content is not detected (nothing is lost: the bytes are the expected ones).",
        ),
    )

    def __init__(
        self,
        fs: Any,
        bucket: str,
        prefix: str = "",
        *,
        lease_ttl: float = 30.0,
        clock_skew: float = 5.0,
        multipart_threshold: int = 100 * MiB,
        part_size: int = 50 * MiB,
        max_concurrency: int = 128,
        owns_fs: bool = False,
        private_fs: bool = False,
    ) -> None:
        if part_size < 5 * MiB:
            raise ValueError("S3 multipart parts must be at least 5 MiB")
        super().__init__(fs, bucket, prefix, max_concurrency=max_concurrency)
        self.lease_ttl = lease_ttl
        self.clock_skew = clock_skew
        self.multipart_threshold = max(multipart_threshold, part_size)
        self.part_size = part_size
        self._owns_fs = owns_fs
        self._private_fs = private_fs
        self._held = HeldLocks()
        self._releases: builtins.list[tuple[str, concurrent.futures.Future[None]]] = []
        self._releases_guard = threading.Lock()
        #: key -> the bytes and the parts upload of a write sent ahead (see :meth:`write_ahead`)
        self._ahead: dict[str, tuple[bytes, concurrent.futures.Future[Uploaded]]] = {}

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> S3Backend:
        options = dict(storage_options)
        tuning = {k[4:]: options.pop(k) for k in list(options) if k.startswith("vfs_")}
        _, _, rest = url.partition("://")
        bucket, _, prefix = rest.partition("/")
        concurrency = int(tuning.get("max_concurrency", 128))
        return cls(
            open_filesystem(options, concurrency),
            bucket,
            prefix,
            lease_ttl=float(tuning.get("lease_ttl", 30.0)),
            clock_skew=float(tuning.get("clock_skew", 5.0)),
            multipart_threshold=int(tuning.get("multipart_threshold", 100 * MiB)),
            part_size=int(tuning.get("part_size", 50 * MiB)),
            max_concurrency=concurrency,
            owns_fs=True,
            private_fs=bool(options.get("skip_instance_cache")),
        )

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def _run(self, factory: Callable[[], Awaitable[T]]) -> T:
        """Every synchronous call: a lease release in flight lands first, so this backend never
        sees its own released lease (nor waits on it), as if the release had been synchronous."""
        if self._releases:
            self._settle_releases()
        return super()._run(factory)

    def check_root(self) -> None:
        """The bucket exists (one ``HeadBucket``); a prefix needs nothing: a fresh one is empty."""
        self._run(self._check_root)

    async def _check_root(self) -> None:
        try:
            await self._call("head_bucket", "")
        except Exception as exc:
            parts = errors.error_parts(exc)
            if errors.is_not_found(parts) or (parts is not None and parts.code == "NoSuchBucket"):
                raise BadRoot(
                    f"The bucket {self.bucket} of the workspace root {{root}} does not exist (create it first; "
                    "check the name, and the endpoint_url storage option for a server other than AWS)."
                ) from None
            raise errors.translate(exc, "") from exc

    # -- async primitives -------------------------------------------------------------------

    async def _read(self, key: str, *, limit: int | None = None, explain_misses: bool = True) -> tuple[bytes, FileInfo]:
        """``explain_misses=False`` (batches): a miss is a plain ``FileNotFoundError``, for the
        caller to tell apart from a directory (see :meth:`_read_many`). Over ``limit``: the
        response head's ContentLength refuses it before any body byte is read."""
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        try:
            out = await self._call("get_object", key, Key=self._obj(key))
        except Exception as exc:
            if errors.is_not_found(errors.error_parts(exc)):
                if not explain_misses:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", key) from None
                raise await self._missing(key, want="file") from None
            raise errors.translate(exc, key) from exc
        size = int(out.get("ContentLength", 0))
        if limit is not None and size > limit:
            with contextlib.suppress(Exception):
                await out["Body"].aclose()  # drop the unread body rather than drain it
            raise TooBig(key, size, limit)
        try:
            async with out["Body"] as body:
                data = await body.read()
        except Exception as exc:
            raise errors.translate(exc, key) from exc
        info = versions.file_info(key, out, len(data))
        return bytes(data), info

    def _condition(self, if_version: str | None, if_absent: bool) -> dict[str, str]:
        if if_absent and if_version is not None:
            raise ValueError("if_absent and if_version are mutually exclusive")
        if if_absent:
            return {"IfNoneMatch": "*"}
        if if_version is not None:
            return {"IfMatch": versions.etag_of(if_version)}
        return {}

    async def _write(self, item: WriteItem) -> FileInfo:
        """``item.mode`` is ignored (S3 stores no permission bits); every acknowledged PUT is
        durable, so ``durable`` changes nothing either."""
        key, if_version, if_absent = item.key, item.if_version, item.if_absent
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        cond = self._condition(if_version, if_absent)
        data = bytes(joined(item.data))
        ahead = self._take_ahead(key, data)
        multipart = ahead is not None or self._in_parts(key, len(data))
        try:
            if ahead is not None:
                out = await self._complete(key, await asyncio.wrap_future(ahead), cond)
            elif multipart:
                out = await self._multipart(key, data, cond)
            else:
                out = await self._call("put_object", key, Key=self._obj(key), Body=data, **cond)
        except Exception as exc:
            parts = errors.error_parts(exc)
            if cond and (errors.is_precondition(parts) or (if_version is not None and errors.is_not_found(parts))):
                # 412/409; or If-Match on a missing key (AWS and moto answer 404)
                current: FileInfo | None = None
                looked = False
                if parts is not None and parts[3] > 0 and not multipart:
                    # botocore retried: the first attempt may have landed. Is it our write?
                    current, looked = await self._head(key), True
                    md5 = f'"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'
                    if current is not None and versions.etag_of(current.version or "") == md5:
                        return current
                if if_version is not None:
                    # Gone rather than changed? (SeaweedFS answers a missing key with 412 too.)
                    gone = errors.is_not_found(parts) or (current if looked else await self._head(key)) is None
                    if gone:
                        raise Vanished(errno.ENOENT, "no longer exists", key) from None
                raise errors.conflict(key, if_absent) from None
            raise errors.translate(exc, key) from exc
        return versions.file_info(key, out, len(data))

    def _in_parts(self, key: str, size: int, *, leased: bool | None = None) -> bool:
        """Whether a write of ``size`` bytes at ``key`` goes up in parts: a large one, or under a
        lease one too big to leave in one write, unseen until a small fenced completion
        (backends.fence.INLINE_BODY says why). ``leased``: whether it goes under a lease, if
        the caller knows (a write sent ahead while the lease is taken); else as held now."""
        if size >= self.multipart_threshold:
            return True
        return size > fence.INLINE_BODY and (self._under_lease(key) if leased is None else leased)

    def _take_ahead(self, key: str, data: bytes) -> concurrent.futures.Future[Uploaded] | None:
        """The parts sent ahead for this very write (same key, same bytes), if any; parts sent
        ahead with other bytes are dropped."""
        with self._releases_guard:
            ahead = self._ahead.pop(key, None)
        if ahead is None:
            return None
        sent, future = ahead
        if sent == data:
            return future
        self._drop(key, future)
        return None

    def _drop(self, key: str, future: concurrent.futures.Future[Uploaded]) -> None:
        """Abort a parts upload sent ahead and not completed. Not waited for (no one sees its
        parts), but settled as a lease release is: before this backend's next synchronous call,
        ``close`` and exit, so no upload is left open to be billed."""

        async def abort() -> None:
            with contextlib.suppress(Exception):
                upload_id, _ = await asyncio.wrap_future(future)
                await self._abort(key, upload_id)

        aborted = asyncio.run_coroutine_threadsafe(abort(), self.fs.loop)
        with self._releases_guard:
            self._releases.append((key, aborted))
        _RELEASING.add(self)

    async def _delete(self, item: DeleteItem) -> None:
        key, if_version = item.key, item.if_version
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if if_version is None:
            if await self._head(key) is None:
                raise await self._missing(key, want="file")
            await self._calls("delete_object", key, Key=self._obj(key))
            return
        try:
            await self._call("delete_object", key, Key=self._obj(key), IfMatch=versions.etag_of(if_version))
        except Exception as exc:
            parts = errors.error_parts(exc)
            if errors.is_not_found(parts) or errors.is_precondition(parts):
                # SeaweedFS answers If-Match on a missing key with 412, AWS/moto with 404
                if await self._head(key) is None:
                    raise Vanished(errno.ENOENT, "no longer exists", key) from None
                raise errors.conflict(key, if_absent=False) from None
            raise errors.translate(exc, key) from exc

    async def _read_many(
        self, keys: Sequence[str], limit: int | None = None
    ) -> builtins.list[tuple[bytes, FileInfo] | BaseException]:
        """One concurrent round of GETs, then the misses told apart from directories. A folder
        with ``LIST_FIRST`` keys or more asked for is listed first (one page): only the keys
        found there as objects are fetched, so new files (a patch adding a module) cost one
        LIST instead of a GET each; a key that appears after the listing reads as missing, as
        it would had the GET come first (the write's ``If-None-Match`` is its check). A miss is
        not explained further (a file where a parent directory should be): vfs checks the
        ancestors of what it writes itself, and ``read`` explains it fully. A key that is a
        folder of other keys asked (vfs asks for the folders of new files with them) is fetched
        and listed at once, in the same round: a miss there is told apart from a directory
        without a round of its own."""
        asked = set(keys)
        folders = sorted({a for k in keys for a in iter_parents(k) if a in asked})
        others = [k for k in keys if k not in folders]
        known, folder_results = await asyncio.gather(
            self._listed_misses(others), self._gather([self._read_folder(k, limit) for k in folders])
        )
        fetch = [k for k in others if k not in known]
        fetched = await self._gather([self._read(k, limit=limit, explain_misses=False) for k in fetch])
        await self._explain_misses(fetch, fetched)
        got: dict[str, tuple[bytes, FileInfo] | BaseException] = dict(zip(fetch, fetched, strict=True))
        got.update(zip(folders, folder_results, strict=True))
        got.update(known)
        return [got[k] for k in keys]

    async def _read_folder(self, key: str, limit: int | None) -> tuple[bytes, FileInfo]:
        """``_read`` of a key expected to be a folder: its GET and its listing in one round."""
        read, is_dir = await asyncio.gather(
            self._read(key, limit=limit, explain_misses=False), self._has_children(key), return_exceptions=True
        )
        if not isinstance(read, FileNotFoundError):
            if isinstance(read, BaseException):
                raise read
            return read
        if isinstance(is_dir, BaseException):
            raise is_dir
        if is_dir:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        raise read

    async def _listed_misses(self, keys: Sequence[str]) -> dict[str, OSError]:
        """The keys of the well-asked folders (see :meth:`_read_many`) that their listing shows
        are no object: missing, or a directory."""
        folders: dict[str, set[str]] = {}
        for key in keys:
            folders.setdefault(parent_of(key), set()).add(key)
        asked = [p for p, members in folders.items() if len(members) >= LIST_FIRST]
        misses: dict[str, OSError] = {}
        for folder, entries in zip(asked, await self._gather([self._entries(p, 1) for p in asked]), strict=True):
            if not isinstance(entries, tuple):
                continue  # too large to list in one page, or the listing failed: GET them
            files, dirs = entries
            for key in folders[folder] - files:
                if key in dirs:
                    misses[key] = IsADirectoryError(errno.EISDIR, "Is a directory", key)
                else:
                    misses[key] = FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        return misses

    async def _matches(self, key: str, version: str | None) -> bool:
        if version is None:
            return await self._stat(key) is None
        head = await self._head(key)
        return head is not None and head.version == version

    # -- the Backend primitives -------------------------------------------------------------

    def stat(self, key: str) -> FileInfo | None:
        return self._run(lambda: self._stat(key))

    def read(self, key: str, *, limit: int | None = None) -> tuple[bytes, FileInfo]:
        return self._run(lambda: self._read(key, limit=limit))

    def write(self, item: WriteItem) -> FileInfo:
        return self._run(lambda: self._write(item))

    def delete(self, item: DeleteItem) -> None:
        self._run(lambda: self._delete(item))

    def list(self, key: str) -> list[FileInfo]:
        return self._run(lambda: self._list(key))

    def mkdir(self, key: str) -> None:
        self._run(lambda: self._mkdir(key))

    def rmdir(self, key: str) -> None:
        self._run(lambda: self._rmdir(key))

    def matches(self, key: str, version: str | None) -> bool:
        return self._run(lambda: self._matches(key, version))

    def resolve(self, key: str) -> str:
        return key  # no symlinks in S3

    def lock(self, key: str, *, timeout: float) -> CasLease:
        return CasLease(
            self,
            key,
            timeout=timeout,
            ttl=self.lease_ttl,
            clock_skew=self.clock_skew,
            held=self._held,
            resolution=fence.RESOLUTION,
        )

    def write_ahead(self, item: WriteItem) -> bool:
        """Start sending the bytes of ``item``, which this backend is about to :meth:`write` under
        a lease (held now, or being taken), without waiting: where they go up in parts, the
        upload is created and the parts sent now, while the caller does other work (neither
        needs the lease: no one sees a part before the completion), and the write itself then
        sends only the small fenced completion with its condition. False where there is nothing
        to send ahead (a body that goes up in one request). :meth:`drop_ahead` discards what was
        not written."""
        data = bytes(joined(item.data))
        leased = item.key not in self._held.lease_keys()  # (the lease's own objects are not fenced)
        if item.key == "" or not self._in_parts(item.key, len(data), leased=leased):
            return False
        future = asyncio.run_coroutine_threadsafe(self._upload_parts(item.key, data), self.fs.loop)
        with self._releases_guard:
            previous = self._ahead.pop(item.key, None)
            self._ahead[item.key] = (data, future)
        if previous is not None:
            self._drop(item.key, previous[1])
        return True

    def drop_ahead(self, key: str) -> None:
        """Abort what :meth:`write_ahead` sent for ``key`` and no write completed."""
        with self._releases_guard:
            ahead = self._ahead.pop(key, None)
        if ahead is not None:
            self._drop(key, ahead[1])

    def close(self) -> None:
        with self._releases_guard:
            ahead, self._ahead = self._ahead, {}
        for key, (_, upload) in ahead.items():
            self._drop(key, upload)
        self._held.release_all()
        self._settle_releases()
        if self._owns_fs and self._private_fs:
            self._close_client()

    # -- the batch extension ----------------------------------------------------------------

    def stat_many(self, keys: Sequence[str]) -> builtins.list[FileInfo | BaseException | None]:
        return self._run(lambda: self._gather([self._stat(k) for k in keys]))

    def read_many(
        self, keys: Sequence[str], *, limit: int | None = None
    ) -> builtins.list[tuple[bytes, FileInfo] | BaseException]:
        return self._run(lambda: self._read_many(keys, limit))

    def write_many(self, items: Sequence[WriteItem]) -> builtins.list[FileInfo | BaseException]:
        return self._run(lambda: self._gather([self._write(i) for i in items]))

    def delete_many(self, items: Sequence[DeleteItem]) -> builtins.list[BaseException | None]:
        return self._run(lambda: self._gather([self._delete(i) for i in items]))

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> builtins.list[bool | BaseException]:
        return self._run(lambda: self._gather([self._matches(k, v) for k, v in items]))

    # -- the lease store (backends.lease.CasStore) ------------------------------------------

    def lease_get(self, key: str) -> tuple[bytes, str] | None:
        try:
            data, info = self.read(key)
        except FileNotFoundError:
            return None
        return data, versions.etag_of(info.version or "")

    def lease_put(self, key: str, body: bytes, *, if_etag: str | None) -> str:
        info = self.write(WriteItem(key, body, if_absent=if_etag is None, if_version=if_etag))
        return versions.etag_of(info.version or "")

    def lease_delete(self, key: str, *, if_etag: str) -> None:
        self.delete(DeleteItem(key, if_version=if_etag))

    def lease_delete_soon(self, key: str, *, if_etag: str) -> None:
        """Release the lease without waiting for the answer: everything the holder did is
        acknowledged by now (its decision and history records included), so the caller's
        result need not wait one more round trip. The DELETE lands before any later request of
        this backend is sent (see :meth:`_run`), before ``close`` and before the interpreter
        exits; other clients see the lease a round trip longer, as if released later."""
        future = asyncio.run_coroutine_threadsafe(self._delete(DeleteItem(key, if_version=if_etag)), self.fs.loop)
        with self._releases_guard:
            self._releases.append((key, future))
        _RELEASING.add(self)

    def _settle_releases(self, key: str | None = None, timeout: float = 30.0) -> None:
        """Wait for the releases in flight (of ``key``, or all), and the aborts of uploads sent
        ahead. A failed release changes nothing: the lease was taken over meanwhile, or it stays
        until it expires (a failed abort: the upload stays unseen, for the bucket's lifecycle)."""
        with self._releases_guard:
            mine = [(k, f) for k, f in self._releases if key is None or k == key]
            self._releases = [(k, f) for k, f in self._releases if (k, f) not in mine]
        for _, future in mine:
            with contextlib.suppress(Exception):
                future.result(timeout=timeout)
