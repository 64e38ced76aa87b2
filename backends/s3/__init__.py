"""S3 backend: objects under ``s3://bucket/prefix``, with real compare-and-swap.

Built on s3fs's aiobotocore client (``storage_options`` go to :class:`s3fs.S3FileSystem`), but
every call here is a direct S3 request: s3fs's listing cache is never consulted.

Versions
    The exact ETag string from the store (a fresh ``HEAD``/``GET``/``PUT`` response or a fresh
    ``ListObjectsV2`` page, never a cache, never ``LastModified``), plus the ``VersionId`` when
    the bucket is versioned (so a rewrite with identical bytes still changes the version there).
    Tokens are opaque; only ``versions.py`` builds and splits them.

Conditional writes
    ``write(if_version=v)`` sends ``If-Match: <etag of v>``, ``write(if_absent=True)`` sends
    ``If-None-Match: *``; objects of ``multipart_threshold`` bytes and more are uploaded as a multipart
    upload whose ``CompleteMultipartUpload`` carries the same condition (s3fs's ``pipe_file`` drops
    it there, so ``multipart.py`` uploads the parts itself). ``delete(if_version=v)`` is a
    ``DeleteObject`` with ``If-Match``. A 412 or 409 becomes :class:`PreconditionFailed`
    (``errno.ESTALE``, or ``errno.EEXIST`` for a create conflict). Server differences handled:
    AWS/moto answer ``If-Match`` on a missing key with 404, SeaweedFS with 412 (and without the
    ``Condition`` field that s3fs needs to raise ``FileExistsError``); both are read from the raw
    botocore error in ``errors.py``, never from s3fs's translated exception. A conditional request
    that botocore had to *retry* (the first attempt may have landed) and then got 412 is resolved by
    a ``HEAD``: if the object now holds exactly our bytes (plain MD5 ETag) the write is ours. With
    versioning, ``If-Match`` compares the ETag only: a concurrent rewrite with identical bytes is
    not detected by the store (the bytes are the ones expected, so nothing is lost).

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
    (stalled past ``ttl``) raises :class:`LeaseLost` when the lock is released. The release's
    DELETE is sent without waiting for its answer (``lease_delete_soon``): it lands before any
    later request of the backend, before ``close`` and before the interpreter exits. A holder
    leaving an unresolved journal releases it *dirty* instead (the object rewritten, marked
    released), so a lease created where there was none (``fresh``) tells vfs that no journal
    is pending and the commit skips listing them (``Capabilities.lock_knows_resolved``).

Size limits
    ``read(key, limit=N)`` refuses an object over ``N`` bytes by the ``ContentLength`` of the
    ``GetObject`` response head and closes the body unread (:class:`backends.base.TooBig`).

Batch extension (optional, see :class:`BatchBackend`)
    ``stat_many``, ``read_many``, ``write_many``, ``delete_many`` and ``matches_many`` run their
    items concurrently on s3fs's event loop (bounded by ``max_concurrency``) and return one
    result per item: the value, or the exception the single-item call would have raised.

Files (one reason to change each)
    ``errors.py`` what a botocore failure means; ``versions.py`` version tokens; ``client.py``
    session, request tuning, HTTP pool and the sync/async bridge (every request goes through
    ``S3Requests._call``); ``lean.py`` a small PUT signed and sent without botocore's
    per-request machinery (botocore still sends what it cannot decide); ``directories.py``
    prefix directories and listings; ``multipart.py`` conditional multipart uploads;
    ``backend.py`` the seam put together; the commit lease is :class:`backends.lease.CasLease`.

Options (``vfs_``-prefixed keys in ``storage_options`` are taken out before s3fs sees them)
    ``vfs_lease_ttl`` (s, default 30), ``vfs_clock_skew`` (s, default 5),
    ``vfs_multipart_threshold`` (bytes, default 100 MiB), ``vfs_part_size`` (default 50 MiB),
    ``vfs_max_concurrency`` (default 128: requests of one batch in flight at once; the HTTP
    connection pool is raised to match unless ``config_kwargs`` sets ``max_pool_connections``,
    whose botocore default of 10 would otherwise be the real bound).
"""

from __future__ import annotations

from backends.lease import CasLease, LeaseLost
from backends.s3.backend import S3Backend

#: The S3 commit lock is the compare-and-swap lease of :mod:`backends.lease`.
S3Lease = CasLease

__all__ = ["LeaseLost", "S3Backend", "S3Lease"]
