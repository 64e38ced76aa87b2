"""The S3 client: one botocore session per process, request tuning, the HTTP pool, and the bridge
from the backend's synchronous calls to s3fs's event loop.

:class:`S3Requests` is the request path every part of the backend shares: ``_call`` sends one
request (tests and benchmarks wrap it on an instance to count or disturb requests, so every
request of every part goes through it), ``_calls`` translates its errors, ``_gather`` runs many
concurrently, ``_run`` waits for a coroutine from synchronous code.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from backends.base import FileInfo
from backends.lease import HeldLocks, LeaseLost
from backends.s3 import errors, fence, lean, versions

T = TypeVar("T")

MiB = 2**20

#: Bodies below this size are sent without ``Expect: 100-continue``.
SMALL_BODY = 1 * MiB

_SESSION: Any = None
_SESSION_GUARD = threading.Lock()


def _shared_session() -> Any:
    global _SESSION
    with _SESSION_GUARD:
        if _SESSION is None:
            from aiobotocore.session import AioSession

            _SESSION = AioSession()
        return _SESSION


def _drop_expect_for_small_bodies(request: Any = None, **_: Any) -> None:
    """botocore asks every PUT body (PutObject's, UploadPart's) for ``Expect: 100-continue``; for
    a small body that only costs a round trip (the client waits for the interim 100 before
    sending it): a journal's part of a few hundred KB took two round trips instead of one."""
    if request is None or "Expect" not in request.headers:
        return
    from botocore.utils import determine_content_length

    size = determine_content_length(request.body)
    if size is not None and size < SMALL_BODY:
        del request.headers["Expect"]


#: The check a change must pass right before its bytes leave the process: set by ``_call`` for
#: the request it makes (a context variable: concurrent requests of a batch each carry their own).
_SEND_CHECK: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("vfs_send_check", default=None)


def _check_before_send(**_: Any) -> None:
    """botocore's last hook before a request is sent, after signing and after every wait for a
    connection, and again before each of its retries: the lease is checked here, so a holder
    paused anywhere before this instant stops instead of sending a change."""
    check = _SEND_CHECK.get()
    if check is None:
        return
    try:
        check()
    except LeaseLost as exc:
        raise fence.NotSent(exc) from None


def _memoize_user_agent(client: Any) -> None:
    """botocore builds the User-Agent header from scratch twice per request (~10 % of a small
    PUT's client CPU); it depends only on the client and the request's feature ids, so each
    string is built once per set of feature ids. Left as is where botocore's internals differ."""
    creator = getattr(client, "_user_agent_creator", None)
    try:
        from botocore.context import get_context
    except ImportError:  # pragma: no cover - an older botocore
        return
    if creator is None or not hasattr(creator, "_client_features"):
        return
    build = creator.to_string
    built: dict[frozenset[str], str] = {}

    def to_string() -> str:
        context = get_context()
        features = frozenset(creator._client_features or ())
        if context is not None:
            features |= frozenset(context.features)
        text = built.get(features)
        if text is None:
            text = built[features] = build()
        return text

    creator.to_string = to_string


def _tune_client(client: Any) -> bool:
    """Register vfs's hooks on ``client`` (once); whether it takes hooks at all."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is None:
        return False
    if not getattr(client, "_vfs_tuned", False):
        for op in ("PutObject", "UploadPart"):
            events.register_last(f"before-sign.s3.{op}", _drop_expect_for_small_bodies, unique_id=f"vfs-no-expect-{op}")
        events.register_last("before-send.s3", _check_before_send, unique_id="vfs-lease-check")
        fence.install()
        events.register_first("choose-signer.s3", fence.choose_signer, unique_id="vfs-fence")
        _memoize_user_agent(client)
        client._vfs_tuned = True
    return True


def open_filesystem(options: dict[str, Any], max_concurrency: int) -> Any:
    """An ``s3fs.S3FileSystem`` for ``options`` whose HTTP pool admits ``max_concurrency``
    requests at once (unless ``config_kwargs`` sets ``max_pool_connections``: botocore's default
    of 10 would otherwise be the real bound of a batch)."""
    import s3fs

    options = dict(options)
    config = dict(options.get("config_kwargs") or {})
    config.setdefault("max_pool_connections", max_concurrency)
    options["config_kwargs"] = config
    fs = s3fs.S3FileSystem(**options)
    if fs.session is None and not fs.kwargs:
        # One botocore session per process: its loaded service models make each new client
        # cheap (a fresh session costs ~0.3 s before the first request).
        fs.session = _shared_session()
        fs._session_is_owned = False
    return fs


#: Requests that change the store: sent only while every commit lock held here is valid.
_CHANGES = frozenset(
    {"put_object", "delete_object", "copy_object", "create_multipart_upload", "complete_multipart_upload"}
)


class S3Requests:
    """Requests on one bucket, below one prefix (see the module docstring)."""

    _held: HeldLocks  # the commit locks this backend holds (set by the backend)

    def __init__(self, fs: Any, bucket: str, prefix: str, *, max_concurrency: int) -> None:
        if not bucket:
            raise ValueError("an S3 root needs a bucket: s3://bucket[/prefix]")
        self.fs = fs
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._base = f"{self.prefix}/" if self.prefix else ""
        self.max_concurrency = max_concurrency
        self._versioned: bool | None = None  # None: not asked yet / not allowed to ask
        self._versioning_checked = False

    def _obj(self, key: str) -> str:
        """The object name of ``key``."""
        return f"{self._base}{key}"

    def _dir_prefix(self, key: str) -> str:
        """The key prefix of the directory ``key`` (its marker's name, too)."""
        return f"{self._base}{key}/" if key else self._base

    def _run(self, factory: Callable[[], Awaitable[T]]) -> T:
        from fsspec.asyn import sync
        from fsspec.exceptions import FSTimeoutError

        async def runner() -> T:
            return await factory()

        try:
            result: T = sync(self.fs.loop, runner)
        except FSTimeoutError as exc:
            # fsspec turns every TimeoutError raised inside the loop into its own, nameless one;
            # a lost lease (a TimeoutError too) must reach the caller as itself
            if isinstance(exc.__cause__, LeaseLost):
                raise exc.__cause__ from None
            raise
        return result

    def _under_lease(self, key: str) -> bool:
        """Whether a change of ``key`` goes out under a held lease (checked before it is sent and
        signed to expire with it); the lease's own objects are not."""
        return self._held.guards(key)

    async def _call(self, op: str, key: str, **kwargs: Any) -> dict[str, Any]:
        """One S3 request; raises the *raw* botocore error (callers classify it)."""
        await self.fs.set_session()
        client = await self.fs.get_s3(self.bucket)
        hooked = _tune_client(client)
        method = getattr(client, op)
        check = self._held.require_valid if op in _CHANGES and key not in self._held.lease_keys() else None
        if check is not None:
            check()  # fail before any work; the hook checks again as late as possible
        if hasattr(self.fs, "_get_s3_method_kwargs"):  # honours s3_additional_kwargs / requester pays
            kwargs = self.fs._get_s3_method_kwargs(method, Bucket=self.bucket, **kwargs)
        else:  # pragma: no cover - older s3fs
            kwargs = {"Bucket": self.bucket, **kwargs}
        fenced = hooked and check is not None and self._under_lease(key)
        token = _SEND_CHECK.set(check if hooked else None)
        fence_token = fence.FENCE.set(self._held.valid_until if fenced else None)
        try:
            result: dict[str, Any] = await self._send(client, op, method, kwargs, hooked=hooked, fenced=fenced)
        except fence.NotSent as stopped:
            raise stopped.lost from None
        except Exception as exc:
            if fenced and fence.refused_as_late(exc):
                self._held.require_valid()  # LeaseLost, unless the lease was renewed meanwhile
                raise fence.late(key) from exc
            raise
        finally:
            _SEND_CHECK.reset(token)
            fence.FENCE.reset(fence_token)
        return result

    async def _send(
        self, client: Any, op: str, method: Any, kwargs: dict[str, Any], *, hooked: bool, fenced: bool
    ) -> dict[str, Any]:
        """A small PutObject goes the lean path (``backends.s3.lean``) where it can; what it
        cannot decide, and every other request, goes through botocore."""
        if op == "put_object" and hooked:
            put = await lean.lean_put(client, self.bucket, SMALL_BODY)
            if put is not None and put.takes(kwargs):
                out = await put.put(kwargs, fenced=fenced)
                if out is not lean.UNDECIDED:
                    return out
                try:
                    result: dict[str, Any] = await method(**kwargs)
                except Exception as exc:
                    lean.count_earlier_attempt(exc)
                    raise
                return result
        result = await method(**kwargs)
        return result

    async def _calls(self, op: str, key: str, **kwargs: Any) -> dict[str, Any]:
        """Like :meth:`_call` but with builtin exceptions."""
        try:
            return await self._call(op, key, **kwargs)
        except Exception as exc:
            raise errors.translate(exc, key) from exc

    async def _gather(self, coros: Sequence[Awaitable[T]]) -> list[T | BaseException]:
        """Each result or the exception it raised, ``max_concurrency`` requests in flight."""
        sem = asyncio.Semaphore(self.max_concurrency)

        async def one(c: Awaitable[T]) -> T | BaseException:
            async with sem:
                try:
                    return await c
                except Exception as exc:  # noqa: BLE001 - a per-item result, by design
                    return exc

        return list(await asyncio.gather(*(one(c) for c in coros)))

    async def _versioning(self) -> bool | None:
        """Whether the bucket keeps versions (None: not allowed to ask, so it may)."""
        if not self._versioning_checked:
            try:
                out = await self._call("get_bucket_versioning", "")
                self._versioned = out.get("Status") in ("Enabled", "Suspended")
            except Exception:  # noqa: BLE001 - not allowed to ask: assume it may be versioned
                self._versioned = None
            self._versioning_checked = True
        return self._versioned

    async def _head(self, key: str) -> FileInfo | None:
        """The object at ``key`` (never a directory); None if there is none."""
        try:
            meta = await self._call("head_object", key, Key=self._obj(key))
        except Exception as exc:
            if errors.is_not_found(errors.error_parts(exc)):
                return None
            raise errors.translate(exc, key) from exc
        return versions.file_info(key, meta)

    def _close_client(self) -> None:
        """Close this filesystem's own client now (a private S3FileSystem only: a cached, shared
        instance stays open for its other users, and s3fs closes it at exit)."""
        s3creator = getattr(self.fs, "_s3creator", None)
        if s3creator is not None and getattr(self.fs, "_s3", None) is not None:
            with contextlib.suppress(Exception):
                self._run(lambda: s3creator.__aexit__(None, None, None))
            self.fs._s3 = None
