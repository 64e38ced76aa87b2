"""The catch-all backend: any fsspec filesystem (``gcs://``, ``az://``, ``sftp://``, ``memory://``...).

``from_url`` resolves the URL with ``fsspec.core.url_to_fs(url, **storage_options)``; tests may also
build ``FsspecBackend(fs, root)`` directly. Only fsspec primitives are used (``info``,
``cat_file``, ``pipe_file``/``open``, ``rm_file``, ``ls``, ``mkdir``, ``rmdir``), plus ``os`` calls
for the temp-file-and-rename publish when the filesystem is fsspec's ``LocalFileSystem``.

Versions (the best the filesystem offers)
    A token built from the strong identifiers in ``info()`` when there are any (``generation``,
    ``etag``, ``VersionId``, ``md5Hash``, ``crc32c``: GCS, Azure, HTTP, ...), taken after
    ``invalidate_cache`` and with ``refresh=True``; otherwise a BLAKE3 hash of the content. fsspec's
    memory store mutates files in place without changing ``ukey``/``checksum``/``created``, and the
    local store's mtime is coarse, so both always hash (``stat``/``matches`` then read the file).
    Listings carry a version only when it comes without reading the file (strong identifiers).

Conditional writes: no compare-and-swap
    ``if_version``/``if_absent`` are checked immediately before the write, under a per-path lock of
    this process. A writer that bypasses vfs (another process, another tool) can still change the
    file between that check and the write: ``Capabilities.conditional_write`` is False and the
    notes say so. Creates are exclusive where the filesystem can make them so: on local disk the
    temp file is published with ``os.link`` (fails if the target exists); elsewhere
    ``pipe_file(mode="create")`` is used, which is only as exclusive as that implementation.

Files
    ``capabilities.py`` what each kind of filesystem guarantees; ``versions.py`` version tokens;
    ``local_disk.py`` the ``os`` calls for fsspec's local filesystem; ``backend.py`` the seam.

Commit lock
    A :class:`backends.lease.LockFile`: the best-effort lock file (its limits are
    :data:`backends.lease.LOCK_FILE_NOTE`, repeated in the notes). This backend provides its store
    (``lock_create``: ``open(path, "xb")`` on local disk, ``pipe_file(mode="create")`` elsewhere;
    ``lock_read``/``lock_replace``/``lock_remove``). For ``memory://`` (one process by
    construction) the lock is the in-process lock only, which every lock takes first.
"""

from __future__ import annotations

from backends.fsspec_any.backend import FsspecBackend
from backends.fsspec_any.capabilities import OBJECT_STORES
from backends.fsspec_any.versions import STRONG_FIELDS

__all__ = ["OBJECT_STORES", "STRONG_FIELDS", "FsspecBackend"]
