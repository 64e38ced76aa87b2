"""Azure Blob Storage backend: blobs under ``az://container/prefix`` (also ``abfs://``), with real
compare-and-swap. Built directly on azure-storage-blob (``pip install 'vfs[azure]'``); adlfs is
not used: its writes cannot carry If-Match, and its cache would have to be bypassed everywhere.

Versions
    The blob's ETag (quotes stripped), from a fresh HEAD/GET/PUT response or listing; never
    Last-Modified. Azure changes the ETag on every write, identical bytes included (no ABA).

Conditional writes
    ``write(if_version=v)`` sends ``If-Match: "v"``, ``write(if_absent=True)`` sends
    ``If-None-Match: *``; a blob of ``block_threshold`` bytes and more is staged as blocks
    (invisible until committed) and the condition goes on the ``Put Block List`` that commits them.
    ``delete(if_version=v)`` is a ``Delete Blob`` with ``If-Match``. 412 (ConditionNotMet) and 409
    (BlobAlreadyExists) become ``PreconditionFailed``; a missing blob under ``If-Match``
    (404) becomes ``Vanished``. Each write carries a unique id in its metadata, so a conditional
    write that the SDK retried after a lost response (its first attempt landed, the retry fails
    the condition) is recognised as ours by one HEAD on the conflict path.

Directories
    Key prefixes, as on S3: ``mkdir`` writes an empty ``<key>/`` marker blob (If-None-Match: *),
    ``rmdir`` removes it (``ENOTEMPTY`` if anything else is below).

Commit lock
    The shared compare-and-swap lease of :mod:`backends.lease` (``CasLease``) on a lease blob,
    created with If-None-Match: *, renewed / taken over / released with If-Match on its ETag.
    Azure's own blob lease was not used: its duration is 15-60 s or infinite (the tests need a
    1 s lease; an infinite lease of a crashed holder never ends), takeover would need a separate
    break-then-acquire protocol, and one set of expiry and takeover rules for S3 and Azure is
    tested once.

Batches
    ``stat_many``, ``read_many``, ``write_many``, ``delete_many``, ``matches_many`` run their
    items concurrently on a thread pool of ``max_concurrency`` threads (and as many pooled
    HTTP connections); one result per item.

Options (``vfs_``-prefixed keys of ``storage_options``): ``lease_ttl`` (s, 30), ``clock_skew``
(s, 5), ``block_threshold`` (bytes, 64 MiB), ``block_size`` (8 MiB), ``max_concurrency`` (32),
``first_get_size`` (4 MiB: what ``read(limit=)`` may fetch before it refuses a larger blob),
``chunk_get_size`` (8 MiB). Credentials: see :mod:`backends.azure.connect`.
"""

from __future__ import annotations

from backends.azure.backend import AzureBackend
from backends.lease import CasLease, LeaseLost

#: The Azure commit lock is the compare-and-swap lease of :mod:`backends.lease`.
AzureLease = CasLease

__all__ = ["AzureBackend", "AzureLease", "LeaseLost"]
