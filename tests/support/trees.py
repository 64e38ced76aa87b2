"""Snapshots of a whole workspace tree, read through the backend (so nothing vfs hides is missed,
temp files included); only the reserved metadata folder is left out."""

from __future__ import annotations

from typing import Any

import vfs
from backends.base import Backend, WriteItem, join_key, parent_of

Tree = dict[str, Any]


def _walk(backend: Backend, key: str, out: Tree, modes: bool, skip: str) -> None:
    for info in sorted(backend.list(key), key=lambda i: i.key):
        if info.key == skip:
            continue
        if info.kind == "directory":
            out[info.key] = (None, info.mode) if modes else None
            _walk(backend, info.key, out, modes, skip)
        elif info.kind == "file":
            data, _ = backend.read(info.key)
            out[info.key] = (data, info.mode) if modes else data
        else:
            out[info.key] = (info.kind, info.mode) if modes else info.kind


def snapshot_tree(ws: vfs.Workspace, *, modes: bool = False) -> Tree:
    """relative path -> bytes (files), None (directories); with ``modes``: (bytes|None, mode)."""
    out: Tree = {}
    _walk(ws.backend, "", out, modes and ws.capabilities.modes, vfs.META_DIR)
    return out


def populate(backend: Backend, files: dict[str, bytes | str | None]) -> None:
    """Write ``files`` straight to the backend (no transaction, no history): None = directory."""
    for rel in sorted(files):
        content = files[rel]
        parts = rel.split("/")
        target_dirs = parts if content is None else parts[:-1]
        for i in range(1, len(target_dirs) + 1):
            d = "/".join(target_dirs[:i])
            if backend.stat(d) is None:
                backend.mkdir(d)
        if content is not None:
            data = content.encode() if isinstance(content, str) else content
            backend.write(WriteItem(rel, data))


def write_external(backend: Backend, rel: str, data: bytes) -> None:
    """A writer that bypasses vfs (another tool, the user's editor)."""
    parent = parent_of(rel)
    if parent and backend.stat(parent) is None:
        populate(backend, {parent: None})
    backend.write(WriteItem(rel, data))


__all__ = ["Tree", "join_key", "populate", "snapshot_tree", "write_external"]
