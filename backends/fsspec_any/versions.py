"""Version tokens, the best the filesystem offers: its strong identifiers from ``info()`` when it
has any (``i:``), else a content hash (``h:``)."""

from __future__ import annotations

from typing import Any

from backends.base import Kind, content_digest

#: ``info()`` fields that identify one stored revision of an object, in token order.
STRONG_FIELDS = ("generation", "etag", "ETag", "e_tag", "VersionId", "version_id", "md5Hash", "crc32c")


def strong_token(info: dict[str, Any]) -> str | None:
    """A token from the strong identifiers in ``info``; None when it has none."""
    parts = [f"{k}={info[k]}" for k in STRONG_FIELDS if info.get(k) not in (None, "")]
    return "i:" + "|".join(parts) if parts else None


def hash_token(data: bytes, digest: str | None = None) -> str:
    """A token from the content (``digest``: the caller's ``content_digest(data)``, if it has it)."""
    return "h:" + (digest if digest is not None else content_digest(data))


def kind_of(info: dict[str, Any]) -> Kind:
    kind = info.get("type")
    if kind == "file":
        return "file"
    if kind == "directory":
        return "directory"
    return "other"
