"""Version tokens: the exact ETag of a fresh response, plus the ``VersionId`` on a versioned bucket
(so a rewrite with identical bytes still changes the version there). Tokens are opaque to
everyone else; only this module builds and splits them."""

from __future__ import annotations

from typing import Any

from backends.base import FileInfo

_VID_SEP = "|vid="


def token(etag: str, version_id: str | None) -> str:
    return f"{etag}{_VID_SEP}{version_id}" if version_id else etag


def etag_of(version: str) -> str:
    """The ETag inside a token (what ``If-Match`` compares)."""
    return version.split(_VID_SEP, 1)[0]


def version_id(meta: dict[str, Any]) -> str | None:
    vid = meta.get("VersionId")
    # moto answers CompleteMultipartUpload with VersionId "null" on an unversioned bucket; a
    # suspended bucket uses "null" too. Neither distinguishes versions: drop it.
    return None if not vid or vid == "null" else str(vid)


def mtime(meta: dict[str, Any]) -> float | None:
    lm = meta.get("LastModified")
    return float(lm.timestamp()) if lm is not None and hasattr(lm, "timestamp") else None


def file_info(key: str, meta: dict[str, Any], size: int | None = None) -> FileInfo:
    """The info of the object a HEAD/GET/PUT response (``meta``) describes."""
    size = int(meta.get("ContentLength", 0)) if size is None else size
    return FileInfo(key, "file", size, None, token(meta["ETag"], version_id(meta)), mtime(meta))
