"""Azure SDK failures as the builtin exceptions of the backend seam (one place)."""

from __future__ import annotations

import errno

from backends.base import PreconditionFailed, Vanished

#: Service error codes of a failed condition: 412 (If-Match) and 409 (If-None-Match: * met a blob).
_CONFLICT_CODES = {"ConditionNotMet", "BlobAlreadyExists", "TargetConditionNotMet"}


def status_of(exc: BaseException) -> int:
    return int(getattr(exc, "status_code", 0) or 0)


def code_of(exc: BaseException) -> str:
    """The service's error code; the SDK gives some as a ``StorageErrorCode`` member, whose
    ``str`` is its Python name, not the code."""
    code = getattr(exc, "error_code", "") or ""
    return str(getattr(code, "value", code))


def is_not_found(exc: BaseException) -> bool:
    return status_of(exc) == 404 or code_of(exc) in ("BlobNotFound", "ResourceNotFound")


def is_conflict(exc: BaseException) -> bool:
    """A store-side condition failed (not "container missing" or a lease conflict, also 409)."""
    return status_of(exc) == 412 or code_of(exc) in _CONFLICT_CODES


def conflict(key: str, *, if_absent: bool) -> PreconditionFailed:
    if if_absent:
        return PreconditionFailed(errno.EEXIST, "already exists", key)
    return PreconditionFailed(errno.ESTALE, "changed since it was read", key)


def vanished(key: str) -> Vanished:
    return Vanished(errno.ENOENT, "no longer exists", key)


def translate(exc: BaseException, key: str) -> BaseException:
    """A builtin exception for an azure-core failure (HttpResponseError or a transport error)."""
    if isinstance(exc, OSError) or not type(exc).__module__.startswith("azure"):
        return exc
    status, code = status_of(exc), code_of(exc)
    if is_conflict(exc):
        return conflict(key, if_absent=code == "BlobAlreadyExists")
    if code == "ContainerNotFound":
        return FileNotFoundError(errno.ENOENT, "No such container", key)
    if is_not_found(exc):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)
    if status in (401, 403) or code.startswith("Authentication") or code.startswith("AuthorizationFailure"):
        return PermissionError(errno.EACCES, f"Azure denied access ({code or status})", key)
    if code in ("RequestBodyTooLarge", "BlockCountExceedsLimit"):
        return OSError(errno.EFBIG, "blob too large for Azure", key)
    if not status:  # ServiceRequestError / ServiceResponseError: no HTTP answer at all
        return OSError(errno.EIO, f"Azure request failed: {type(exc).__name__}: {exc}", key)
    return OSError(errno.EIO, f"Azure error {status} {code}: {exc}", key)
