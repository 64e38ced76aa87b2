"""S3 backend: objects under ``s3://bucket/prefix``, with real compare-and-swap.

Built on s3fs's aiobotocore client (``storage_options`` go to :class:`s3fs.S3FileSystem`), but
every call here is a direct S3 request: s3fs's listing cache is never consulted.

Versions
    The exact ETag string from the store (a fresh ``HEAD``/``GET``/``PUT`` response or a fresh
    ``ListObjectsV2`` page, never a cache, never ``LastModified``), plus the ``VersionId`` when
    the bucket is versioned (so a rewrite with identical bytes still changes the version there).
    Tokens are opaque; only this module splits them.

Conditional writes
    ``write(if_version=v)`` sends ``If-Match: <etag of v>``, ``write(if_absent=True)`` sends
    ``If-None-Match: *``; objects of ``multipart_threshold`` bytes and more are uploaded as a
    multipart upload whose ``CompleteMultipartUpload`` carries the same condition (s3fs's
    ``pipe_file`` drops it there, so this module does its own multipart). ``delete(if_version=v)``
    is a ``DeleteObject`` with ``If-Match``. A 412 or 409 becomes :class:`PreconditionFailed`
    (``errno.ESTALE``, or ``errno.EEXIST`` for a create conflict). Server differences handled:
    AWS/moto answer ``If-Match`` on a missing key with 404, SeaweedFS with 412 (and without the
    ``Condition`` field that s3fs needs to raise ``FileExistsError``); both are read from the raw
    botocore error here, never from s3fs's translated exception. A conditional request that
    botocore had to *retry* (the first attempt may have landed) and then got 412 is resolved by a
    ``HEAD``: if the object now holds exactly our bytes (plain MD5 ETag) the write is ours.
    With versioning, ``If-Match`` compares the ETag only: a concurrent rewrite with identical
    bytes is not detected by the store (the bytes are the ones expected, so nothing is lost).

Directories
    S3 has none: a directory is a key prefix. ``mkdir`` writes an empty *marker* object
    ``<key>/`` (created with ``If-None-Match: *``), so an empty directory made by vfs is listable;
    ``rmdir`` removes the marker (``ENOTEMPTY`` if anything else is below it). A prefix with
    children is a directory whether or not it has a marker, and it vanishes when its last child
    is deleted, unless it has a marker. ``write`` does not require the parent "directory" to
    exist and does not look for a directory at the key (each would cost a request per write;
    vfs checks both in its preflight). If both an object ``k`` and a prefix ``k/`` exist, ``k``
    is reported as the file.

Commit lock
    :meth:`S3Backend.lock` returns a :class:`backends.lease.CasLease` (``S3Lease``): created with
    ``If-None-Match: *``, renewed and taken over with ``PutObject`` + ``If-Match`` on the lease's
    ETag (so only one waiter wins a takeover), released with ``DeleteObject`` + ``If-Match``.
    This backend provides its store (``lease_get``/``lease_put``/``lease_delete``); expiry,
    renewal and takeover rules are in :mod:`backends.lease`. A holder that loses its lease
    (stalled past ``ttl``) raises :class:`LeaseLost` when the lock is released.

Batch extension (optional, see :class:`BatchBackend`)
    ``stat_many``, ``read_many``, ``write_many``, ``delete_many`` and ``matches_many`` run their
    items concurrently on s3fs's event loop (bounded by ``max_concurrency``) and return one
    result per item: the value, or the exception the single-item call would have raised.

Options (``vfs_``-prefixed keys in ``storage_options`` are taken out before s3fs sees them)
    ``vfs_lease_ttl`` (s, default 30), ``vfs_clock_skew`` (s, default 5),
    ``vfs_multipart_threshold`` (bytes, default 100 MiB), ``vfs_part_size`` (default 50 MiB),
    ``vfs_max_concurrency`` (default 64: requests of one batch in flight at once; the HTTP
    connection pool is raised to match unless ``config_kwargs`` sets ``max_pool_connections``,
    whose botocore default of 10 would otherwise be the real bound).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import hashlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, TypeVar

from backends.base import (
    Capabilities,
    DeleteItem,
    FileInfo,
    PreconditionFailed,
    TooBig,
    Vanished,
    WriteItem,
    iter_parents,
    joined,
    parent_of,
)
from backends.lease import CasLease, HeldLocks, LeaseLost

T = TypeVar("T")

_VID_SEP = "|vid="
MiB = 2**20


# -- helpers ----------------------------------------------------------------------------------


def _token(etag: str, version_id: str | None) -> str:
    return f"{etag}{_VID_SEP}{version_id}" if version_id else etag


def _etag_of(token: str) -> str:
    return token.split(_VID_SEP, 1)[0]


def _version_id(meta: dict[str, Any]) -> str | None:
    vid = meta.get("VersionId")
    # moto answers CompleteMultipartUpload with VersionId "null" on an unversioned bucket; a
    # suspended bucket uses "null" too. Neither distinguishes versions: drop it.
    return None if not vid or vid == "null" else str(vid)


def _mtime(meta: dict[str, Any]) -> float | None:
    lm = meta.get("LastModified")
    return float(lm.timestamp()) if lm is not None and hasattr(lm, "timestamp") else None


def _client_error_parts(exc: BaseException) -> tuple[int, str, str, int] | None:
    """(HTTP status, error code, condition, retry attempts) of a botocore ClientError."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    meta = response.get("ResponseMetadata", {})
    error = response.get("Error", {})
    status = int(meta.get("HTTPStatusCode") or 0)
    code = str(error.get("Code", ""))
    if not status and code.isdigit():
        status = int(code)
    return status, code, str(error.get("Condition", "")), int(meta.get("RetryAttempts") or 0)


def _is_precondition(parts: tuple[int, str, str, int] | None) -> bool:
    return parts is not None and (
        parts[0] in (409, 412) or parts[1] in ("PreconditionFailed", "ConditionalRequestConflict")
    )


def _is_not_found(parts: tuple[int, str, str, int] | None) -> bool:
    return parts is not None and (parts[0] == 404 or parts[1] in ("NoSuchKey", "NotFound", "404"))


def _translate(exc: BaseException, key: str) -> BaseException:
    """A builtin exception for a botocore failure (ClientError or transport error)."""
    parts = _client_error_parts(exc)
    if parts is None:
        if isinstance(exc, OSError):
            return exc
        # botocore transport errors (EndpointConnectionError, ReadTimeoutError, ...)
        if type(exc).__module__.startswith(("botocore", "aiobotocore", "aiohttp")):
            return OSError(errno.EIO, f"S3 request failed: {type(exc).__name__}: {exc}", key)
        return exc
    status, code, _cond, _ = parts
    message = str(exc)
    if _is_precondition(parts):
        return PreconditionFailed(errno.ESTALE, "changed since it was read", key)
    if _is_not_found(parts):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)
    if status == 403 or code in ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
        return PermissionError(errno.EACCES, f"S3 denied access ({code})", key)
    if code == "NoSuchBucket":
        return FileNotFoundError(errno.ENOENT, f"No such bucket ({message})", key)
    if code == "EntityTooLarge":
        return OSError(errno.EFBIG, "object too large for S3", key)
    return OSError(errno.EIO, f"S3 error {status} {code}: {message}", key)


_SESSION: Any = None
_SESSION_GUARD = threading.Lock()


def _shared_session() -> Any:
    global _SESSION
    with _SESSION_GUARD:
        if _SESSION is None:
            from aiobotocore.session import AioSession

            _SESSION = AioSession()
        return _SESSION


#: Bodies below this size are sent without ``Expect: 100-continue``.
SMALL_BODY = 1 * MiB


def _drop_expect_for_small_bodies(request: Any = None, **_: Any) -> None:
    """botocore asks every PUT body for ``Expect: 100-continue``; for a small body that only
    costs a round trip (the client waits for the interim 100 before sending it)."""
    if request is None or "Expect" not in request.headers:
        return
    from botocore.utils import determine_content_length

    size = determine_content_length(request.body)
    if size is not None and size < SMALL_BODY:
        del request.headers["Expect"]


def _tune_client(client: Any) -> None:
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is not None and not getattr(client, "_vfs_tuned", False):
        events.register_last("before-sign.s3.PutObject", _drop_expect_for_small_bodies, unique_id="vfs-no-expect")
        client._vfs_tuned = True


# -- the backend ------------------------------------------------------------------------------


class S3Backend:
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
        max_concurrency: int = 64,
        owns_fs: bool = False,
        private_fs: bool = False,
    ) -> None:
        if not bucket:
            raise ValueError("an S3 root needs a bucket: s3://bucket[/prefix]")
        if part_size < 5 * MiB:
            raise ValueError("S3 multipart parts must be at least 5 MiB")
        self.fs = fs
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._base = f"{self.prefix}/" if self.prefix else ""
        self.lease_ttl = lease_ttl
        self.clock_skew = clock_skew
        self.multipart_threshold = max(multipart_threshold, part_size)
        self.part_size = part_size
        self.max_concurrency = max_concurrency
        self._owns_fs = owns_fs
        self._private_fs = private_fs
        self._list_page_size: int | None = None  # MaxKeys per listing page (None: server default)
        self._versioned: bool | None = None  # None: not asked yet / not allowed to ask
        self._versioning_checked = False
        self._held = HeldLocks()

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> S3Backend:
        import s3fs

        options = dict(storage_options)
        tuning = {k[4:]: options.pop(k) for k in list(options) if k.startswith("vfs_")}
        _, _, rest = url.partition("://")
        bucket, _, prefix = rest.partition("/")
        private = bool(options.get("skip_instance_cache"))
        concurrency = int(tuning.get("max_concurrency", 64))
        config = dict(options.get("config_kwargs") or {})
        config.setdefault("max_pool_connections", concurrency)
        options["config_kwargs"] = config
        fs = s3fs.S3FileSystem(**options)
        if fs.session is None and not fs.kwargs:
            # One botocore session per process: its loaded service models make each new client
            # cheap (a fresh session costs ~0.3 s before the first request).
            fs.session = _shared_session()
            fs._session_is_owned = False
        return cls(
            fs,
            bucket,
            prefix,
            lease_ttl=float(tuning.get("lease_ttl", 30.0)),
            clock_skew=float(tuning.get("clock_skew", 5.0)),
            multipart_threshold=int(tuning.get("multipart_threshold", 100 * MiB)),
            part_size=int(tuning.get("part_size", 50 * MiB)),
            max_concurrency=concurrency,
            owns_fs=True,
            private_fs=private,
        )

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    # -- plumbing ---------------------------------------------------------------------------

    def _obj(self, key: str) -> str:
        return f"{self._base}{key}"

    def _dir_prefix(self, key: str) -> str:
        return f"{self._base}{key}/" if key else self._base

    def _run(self, factory: Callable[[], Awaitable[T]]) -> T:
        from fsspec.asyn import sync

        async def runner() -> T:
            return await factory()

        result: T = sync(self.fs.loop, runner)
        return result

    async def _call(self, op: str, key: str, **kwargs: Any) -> dict[str, Any]:
        """One S3 request; raises the *raw* botocore error (callers inspect it)."""
        await self.fs.set_session()
        client = await self.fs.get_s3(self.bucket)
        _tune_client(client)
        method = getattr(client, op)
        if hasattr(self.fs, "_get_s3_method_kwargs"):  # honours s3_additional_kwargs / requester pays
            kwargs = self.fs._get_s3_method_kwargs(method, Bucket=self.bucket, **kwargs)
        else:  # pragma: no cover - older s3fs
            kwargs = {"Bucket": self.bucket, **kwargs}
        result: dict[str, Any] = await method(**kwargs)
        return result

    async def _calls(self, op: str, key: str, **kwargs: Any) -> dict[str, Any]:
        """Like :meth:`_call` but with builtin exceptions."""
        try:
            return await self._call(op, key, **kwargs)
        except Exception as exc:
            raise _translate(exc, key) from exc

    async def _gather(self, coros: Sequence[Awaitable[T]]) -> list[T | BaseException]:
        sem = asyncio.Semaphore(self.max_concurrency)

        async def one(c: Awaitable[T]) -> T | BaseException:
            async with sem:
                try:
                    return await c
                except Exception as exc:  # noqa: BLE001 - a per-item result, by design
                    return exc

        return list(await asyncio.gather(*(one(c) for c in coros)))

    async def _versioning(self) -> bool | None:
        if not self._versioning_checked:
            try:
                out = await self._call("get_bucket_versioning", "")
                self._versioned = out.get("Status") in ("Enabled", "Suspended")
            except Exception:  # noqa: BLE001 - not allowed to ask: assume it may be versioned
                self._versioned = None
            self._versioning_checked = True
        return self._versioned

    # -- async primitives -------------------------------------------------------------------

    async def _head(self, key: str) -> FileInfo | None:
        try:
            meta = await self._call("head_object", key, Key=self._obj(key))
        except Exception as exc:
            if _is_not_found(_client_error_parts(exc)):
                return None
            raise _translate(exc, key) from exc
        return FileInfo(
            key,
            "file",
            int(meta.get("ContentLength", 0)),
            None,
            _token(meta["ETag"], _version_id(meta)),
            _mtime(meta),
        )

    async def _has_children(self, key: str) -> bool:
        out = await self._calls("list_objects_v2", key, Prefix=self._dir_prefix(key), MaxKeys=1)
        return bool(out.get("KeyCount") or out.get("Contents") or out.get("CommonPrefixes"))

    async def _stat(self, key: str) -> FileInfo | None:
        if key == "":
            return FileInfo("", "directory")
        head, is_dir = await asyncio.gather(self._head(key), self._has_children(key))
        if head is not None:
            return head
        return FileInfo(key, "directory") if is_dir else None

    async def _read(self, key: str, *, limit: int | None = None, explain_misses: bool = True) -> tuple[bytes, FileInfo]:
        """``explain_misses=False`` (batches): a miss is a plain ``FileNotFoundError``, for the
        caller to tell apart from a directory (see :meth:`_read_many`). Over ``limit``: the
        response head's ContentLength refuses it before any body byte is read."""
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        try:
            out = await self._call("get_object", key, Key=self._obj(key))
        except Exception as exc:
            if _is_not_found(_client_error_parts(exc)):
                if not explain_misses:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", key) from None
                raise await self._missing(key, want="file") from None
            raise _translate(exc, key) from exc
        size = int(out.get("ContentLength", 0))
        if limit is not None and size > limit:
            with contextlib.suppress(Exception):
                await out["Body"].aclose()  # drop the unread body rather than drain it
            raise TooBig(key, size, limit)
        try:
            async with out["Body"] as body:
                data = await body.read()
        except Exception as exc:
            raise _translate(exc, key) from exc
        info = FileInfo(key, "file", len(data), None, _token(out["ETag"], _version_id(out)), _mtime(out))
        return bytes(data), info

    def _condition(self, if_version: str | None, if_absent: bool) -> dict[str, str]:
        if if_absent and if_version is not None:
            raise ValueError("if_absent and if_version are mutually exclusive")
        if if_absent:
            return {"IfNoneMatch": "*"}
        if if_version is not None:
            return {"IfMatch": _etag_of(if_version)}
        return {}

    def _conflict(self, key: str, if_absent: bool) -> PreconditionFailed:
        if if_absent:
            return PreconditionFailed(errno.EEXIST, "already exists", key)
        return PreconditionFailed(errno.ESTALE, "changed since it was read", key)

    async def _write(self, item: WriteItem) -> FileInfo:
        """``item.mode`` is ignored (S3 stores no permission bits); every acknowledged PUT is
        durable, so ``durable`` changes nothing either."""
        key, if_version, if_absent = item.key, item.if_version, item.if_absent
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        cond = self._condition(if_version, if_absent)
        data = bytes(joined(item.data))
        try:
            if len(data) >= self.multipart_threshold:
                out = await self._multipart(key, data, cond)
            else:
                out = await self._call("put_object", key, Key=self._obj(key), Body=data, **cond)
        except Exception as exc:
            parts = _client_error_parts(exc)
            if cond and (_is_precondition(parts) or (if_version is not None and _is_not_found(parts))):
                # 412/409; or If-Match on a missing key (AWS and moto answer 404)
                current: FileInfo | None = None
                looked = False
                if parts is not None and parts[3] > 0 and len(data) < self.multipart_threshold:
                    # botocore retried: the first attempt may have landed. Is it our write?
                    current, looked = await self._head(key), True
                    md5 = f'"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'
                    if current is not None and _etag_of(current.version or "") == md5:
                        return current
                if if_version is not None:
                    # Gone rather than changed? (SeaweedFS answers a missing key with 412 too.)
                    gone = _is_not_found(parts) or (current if looked else await self._head(key)) is None
                    if gone:
                        raise Vanished(errno.ENOENT, "no longer exists", key) from None
                raise self._conflict(key, if_absent) from None
            raise _translate(exc, key) from exc
        return FileInfo(key, "file", len(data), None, _token(out["ETag"], _version_id(out)))

    async def _multipart(self, key: str, data: bytes, cond: dict[str, str]) -> dict[str, Any]:
        obj = self._obj(key)
        mpu = await self._call("create_multipart_upload", key, Key=obj)
        upload_id = mpu["UploadId"]
        try:
            offsets = list(range(0, len(data), self.part_size))

            async def part(index: int, start: int) -> dict[str, Any]:
                out = await self._call(
                    "upload_part",
                    key,
                    Key=obj,
                    UploadId=upload_id,
                    PartNumber=index + 1,
                    Body=data[start : start + self.part_size],
                )
                return {"PartNumber": index + 1, "ETag": out["ETag"]}

            results = await self._gather([part(i, s) for i, s in enumerate(offsets)])
            for r in results:
                if isinstance(r, BaseException):
                    raise r
            parts = [r for r in results if isinstance(r, dict)]
            return await self._call(
                "complete_multipart_upload",
                key,
                Key=obj,
                UploadId=upload_id,
                MultipartUpload={"Parts": parts},
                **cond,
            )
        except BaseException:
            with contextlib.suppress(Exception):
                await self._call("abort_multipart_upload", key, Key=obj, UploadId=upload_id)
            raise

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
            await self._call("delete_object", key, Key=self._obj(key), IfMatch=_etag_of(if_version))
        except Exception as exc:
            parts = _client_error_parts(exc)
            if _is_not_found(parts) or _is_precondition(parts):
                # SeaweedFS answers If-Match on a missing key with 412, AWS/moto with 404
                if await self._head(key) is None:
                    raise Vanished(errno.ENOENT, "no longer exists", key) from None
                raise PreconditionFailed(errno.ESTALE, "changed since it was read", key) from None
            raise _translate(exc, key) from exc

    async def _missing(self, key: str, *, want: str) -> OSError:
        """Why there is no ``want`` ("file" or "directory") at ``key``, as a filesystem would say.

        One round trip, on misses only: the prefix, the object itself and every ancestor at once.
        """
        ancestors = list(iter_parents(key))
        is_dir, here, *heads = await asyncio.gather(
            self._has_children(key), self._head(key), *(self._head(a) for a in ancestors)
        )
        if want == "file" and is_dir and here is None:
            return IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if want == "directory" and here is not None:
            return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        if any(h is not None for h in heads):
            return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)

    async def _read_many(self, keys: Sequence[str]) -> builtins.list[tuple[bytes, FileInfo] | BaseException]:
        """One concurrent round of GETs; then the misses told apart from directories: one LIST of
        the parent for a folder with several misses (new files usually share one), one LIST per
        key otherwise. A miss is not explained further (a file where a parent directory should
        be): vfs checks the ancestors of what it writes itself, and ``read`` explains it fully."""
        results = await self._gather([self._read(k, explain_misses=False) for k in keys])
        misses: dict[str, list[int]] = {}
        for index, (key, result) in enumerate(zip(keys, results, strict=True)):
            if isinstance(result, FileNotFoundError):
                misses.setdefault(parent_of(key), []).append(index)
        shared = [p for p, indexes in misses.items() if len(indexes) > 1]
        listings = dict(zip(shared, await self._gather([self._child_prefixes(p) for p in shared]), strict=True))
        single = [i for p, indexes in misses.items() for i in indexes if not isinstance(listings.get(p), set)]
        verdicts = dict(zip(single, await self._gather([self._has_children(keys[i]) for i in single]), strict=True))
        for parent, indexes in misses.items():
            for index in indexes:
                listing = listings.get(parent)
                is_dir = keys[index] in listing if isinstance(listing, set) else verdicts[index]
                if isinstance(is_dir, BaseException):
                    results[index] = is_dir
                elif is_dir:
                    results[index] = IsADirectoryError(errno.EISDIR, "Is a directory", keys[index])
        return results

    async def _child_prefixes(self, key: str, max_pages: int = 4) -> set[str] | None:
        """Keys of the "subdirectories" directly under ``key`` (``None``: too many to list)."""
        prefix = self._dir_prefix(key)
        found: set[str] = set()
        token: str | None = None
        for _ in range(max_pages):
            kw: dict[str, Any] = {"Prefix": prefix, "Delimiter": "/"}
            if token:
                kw["ContinuationToken"] = token
            page = await self._calls("list_objects_v2", key, **kw)
            for cp in page.get("CommonPrefixes", []) or []:
                name = str(cp["Prefix"])[len(prefix) :].rstrip("/")
                if name and "/" not in name:
                    found.add(f"{key}/{name}" if key else name)
            if not page.get("IsTruncated"):
                return found
            token = page.get("NextContinuationToken")
        return None

    async def _list(self, key: str) -> list[FileInfo]:
        prefix = self._dir_prefix(key)
        files: dict[str, FileInfo] = {}
        dirs: dict[str, FileInfo] = {}
        seen_anything = False
        token: str | None = None
        while True:
            kw: dict[str, Any] = {"Prefix": prefix, "Delimiter": "/"}
            if self._list_page_size:
                kw["MaxKeys"] = self._list_page_size
            if token:
                kw["ContinuationToken"] = token
            page = await self._calls("list_objects_v2", key, **kw)
            for obj in page.get("Contents", []) or []:
                seen_anything = True
                name = str(obj["Key"])[len(prefix) :]
                if not name or "/" in name:  # the directory's own marker (or a malformed key)
                    continue
                child = f"{key}/{name}" if key else name
                files[child] = FileInfo(child, "file", int(obj.get("Size", 0)), None, obj.get("ETag"), _mtime(obj))
            for cp in page.get("CommonPrefixes", []) or []:
                seen_anything = True
                name = str(cp["Prefix"])[len(prefix) :].rstrip("/")
                if not name or "/" in name:
                    continue
                child = f"{key}/{name}" if key else name
                dirs[child] = FileInfo(child, "directory")
            if not page.get("IsTruncated"):
                break
            token = page.get("NextContinuationToken")
        if not seen_anything and key != "":
            raise await self._missing(key, want="directory")
        if files and await self._versioning() is not False:
            # Listings carry no VersionId: on a versioned (or unknown) bucket ask each object.
            heads = await self._gather([self._head(k) for k in files])
            for k, h in zip(list(files), heads, strict=True):
                if isinstance(h, BaseException):
                    raise h
                if h is None:  # deleted meanwhile
                    del files[k]
                else:
                    files[k] = h
        for k in files:
            dirs.pop(k, None)  # object "k" and prefix "k/" both exist: report the file
        return [*files.values(), *dirs.values()]

    async def _mkdir(self, key: str) -> None:
        if key == "":
            raise FileExistsError(errno.EEXIST, "File exists", key)
        parent = parent_of(key)
        here, up = await asyncio.gather(self._stat(key), self._stat(parent))
        if here is not None:
            raise FileExistsError(errno.EEXIST, "File exists", key)
        if up is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", parent)
        if up.kind != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
        try:
            await self._call("put_object", key, Key=self._dir_prefix(key), Body=b"", IfNoneMatch="*")
        except Exception as exc:
            if not _is_precondition(_client_error_parts(exc)):
                raise _translate(exc, key) from exc
            if await self._stat(key) is not None:
                raise FileExistsError(errno.EEXIST, "File exists", key) from None
            # SeaweedFS keeps an emptied implicit directory in its filer: invisible to listings,
            # but it fails If-None-Match on "<dir>/". Nothing is visible there, and a marker is
            # empty, so an unconditional marker write loses nothing.
            await self._calls("put_object", key, Key=self._dir_prefix(key), Body=b"")

    async def _rmdir(self, key: str) -> None:
        if key == "":
            raise OSError(errno.EBUSY, "cannot remove the root", key)
        marker = self._dir_prefix(key)
        out = await self._calls("list_objects_v2", key, Prefix=marker, MaxKeys=2)
        keys = [str(o["Key"]) for o in out.get("Contents", []) or []]
        if not keys and not out.get("CommonPrefixes"):
            if await self._head(key) is not None:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        if any(k != marker for k in keys) or out.get("CommonPrefixes"):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", key)
        await self._calls("delete_object", key, Key=marker)

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
        return CasLease(self, key, timeout=timeout, ttl=self.lease_ttl, clock_skew=self.clock_skew, held=self._held)

    def close(self) -> None:
        self._held.release_all()
        if self._owns_fs and self._private_fs:
            # a private S3FileSystem (skip_instance_cache=True): close its client now. A cached,
            # shared instance stays open for the other users; s3fs closes it at exit.
            s3creator = getattr(self.fs, "_s3creator", None)
            if s3creator is not None and getattr(self.fs, "_s3", None) is not None:
                with contextlib.suppress(Exception):
                    self._run(lambda: s3creator.__aexit__(None, None, None))
                self.fs._s3 = None

    # -- the batch extension ----------------------------------------------------------------

    def stat_many(self, keys: Sequence[str]) -> builtins.list[FileInfo | BaseException | None]:
        return self._run(lambda: self._gather([self._stat(k) for k in keys]))

    def read_many(self, keys: Sequence[str]) -> builtins.list[tuple[bytes, FileInfo] | BaseException]:
        return self._run(lambda: self._read_many(keys))

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
        return data, _etag_of(info.version or "")

    def lease_put(self, key: str, body: bytes, *, if_etag: str | None) -> str:
        info = self.write(WriteItem(key, body, if_absent=if_etag is None, if_version=if_etag))
        return _etag_of(info.version or "")

    def lease_delete(self, key: str, *, if_etag: str) -> None:
        self.delete(DeleteItem(key, if_version=if_etag))


#: The S3 commit lock is the compare-and-swap lease of :mod:`backends.lease`.
S3Lease = CasLease

__all__ = ["LeaseLost", "S3Backend", "S3Lease"]
