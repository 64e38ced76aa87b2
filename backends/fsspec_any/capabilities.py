"""What a filesystem reached through fsspec can guarantee: local disk, fsspec's in-process memory
store, an object store, or anything else (the weakest case)."""

from __future__ import annotations

from typing import Any

from backends.base import Capabilities
from backends.lease import LOCK_FILE_NOTE

#: Protocols whose objects are replaced atomically by a single upload (readers never see a mix).
OBJECT_STORES = frozenset({"gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2", "wasb", "wasbs", "hf"})


def protocol_of(fs: Any) -> str:
    proto = fs.protocol
    return str(proto if isinstance(proto, str) else proto[0])


_COMMON = (
    "No compare-and-swap: if_version/if_absent are checked right before each write under a lock "
    "of this process; a writer that bypasses vfs can slip in between the check and the write.",
)


def capabilities_for(protocol: str, is_local: bool) -> Capabilities:
    if is_local:
        return _local()
    if protocol == "memory":
        return _memory()
    return _generic(protocol)


def _local() -> Capabilities:
    return Capabilities(
        atomic_replace=True,
        conditional_write=False,
        exclusive_create=True,
        durable=True,
        cross_process_lock=True,
        real_directories=True,
        real_mtime=True,
        modes=False,
        symlinks=False,
        lock_can_expire=True,
        notes=(
            *_COMMON,
            "Local disk through fsspec: temp file + fsync + rename (create: os.link); versions hash "
            "the content; file modes are not managed; resolve() refuses keys whose real path "
            "leaves the root, other symlinks are followed. Prefer the 'local' backend.",
            LOCK_FILE_NOTE,
        ),
    )


def _memory() -> Capabilities:
    return Capabilities(
        atomic_replace=True,
        conditional_write=False,
        exclusive_create=False,
        durable=False,
        cross_process_lock=False,
        real_directories=True,
        real_mtime=False,
        modes=False,
        symlinks=False,
        notes=(
            *_COMMON,
            "fsspec's memory store lives in this process only; versions hash the content (the "
            "store mutates files in place without changing ukey/checksum). The commit lock is "
            "an in-process lock. Prefer the 'memory' backend.",
        ),
    )


def _generic(protocol: str) -> Capabilities:
    object_store = protocol in OBJECT_STORES
    return Capabilities(
        atomic_replace=object_store,
        conditional_write=False,
        exclusive_create=False,
        durable=object_store,
        cross_process_lock=False,
        real_directories=not object_store,
        real_mtime=False,
        modes=False,
        symlinks=False,
        lock_can_expire=True,
        notes=(
            *_COMMON,
            f"Generic fsspec filesystem {protocol!r}: versions use generation/ETag/md5 when info() "
            "has them, else a content hash; creates use pipe_file(mode='create'), exclusive only if "
            "the implementation makes it so.",
            LOCK_FILE_NOTE,
            "The lock object is created with pipe_file(mode='create'): exclusive only if the "
            "implementation makes it so.",
            *(["Directories are key prefixes: an empty directory may not persist."] if object_store else []),
        ),
    )
