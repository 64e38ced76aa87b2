"""Local disk backend: os-level calls only, so it works the same on real disk and under emulations.

One reason to change per module:

- ``containment``: every access stays below the root (directory handles reached with
  ``O_NOFOLLOW``; ``resolve`` stats the components below the root, ``realpath`` once one is a
  symlink);
- ``versions``: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` plus a content hash for
  "racy" files (modified within ``RACY_WINDOW_NS`` of being looked at: git's rule);
- ``publish``: temp file, flush, mode/owner/xattrs carried over, link or rename into place;
- ``setaside``: conditional writes and deletes that never overwrite a writer bypassing vfs;
- ``syncfs``: a large durable batch flushed with one ``syncfs(2)`` per filesystem instead of an
  ``fsync`` per file (Linux >= 5.8, where it reports writeback errors);
- ``lock``: the commit lock (``flock(2)`` plus a per-path thread lock; the lock file says whether
  its last holder left cleanly);
- ``backend``: the :class:`LocalBackend` class, composing them.

Decisions (what a replace does to a file that is more than its bytes):

- **No check-to-rename window** (where the kernel has ``renameat2(RENAME_EXCHANGE)``: Linux on
  ext4, xfs, btrfs, tmpfs...; probed once per filesystem). A conditional write swaps the staged file in
  atomically and checks the file that came out: the inode vfs looked at, still the expected
  version (ctime aside, which the rename moves: any later write moved the mtime, or the version is
  racy and carries a content hash). If not, a second exchange puts it back and the write is
  refused (``PreconditionFailed``); whatever a third party wrote in those microseconds is kept as
  ``.vfs-kept-<32 hex>-<name>``, never dropped. A conditional delete renames the file to a vfs-only
  name, checks it there, and links it back (never over a file that appeared) if it fails.
  Why an exchange rather than "rename aside, check, then link the new file in": with the latter
  the name is absent for a moment, so readers get ENOENT and an appender opening with ``O_CREAT``
  starts a new one-line file (the race campaign hit both). The price of the exchange: when it
  has to swap back, a reader may see the refused bytes for those microseconds; an early check
  right before the swap (the staged file was flushed meanwhile) keeps that rare. What POSIX cannot close: a writer that
  opened the file *before* the swap and writes to it *after* the check; up to the moment the old
  file is dropped that is detected (kept as ``.vfs-kept-*``), after it the bytes go to an
  unlinked inode. Without ``RENAME_EXCHANGE`` (or with ``set_aside=False``) versions are checked
  immediately before the rename: a microsecond window, declared in ``capabilities.notes``.
- **Owner and group** are kept: root gives the temp file the original uid and gid; another user
  only the group, and only when it is one of theirs (what ``chown(2)`` permits). Otherwise the
  replaced file belongs to whoever replaced it (as with any editor that saves by rename).
- **Extended attributes** (ACLs and SELinux labels included) are copied onto the temp file before
  it is published; attributes the filesystem or the caller cannot set are skipped.
- **Hard links**: a file with ``st_nlink > 1`` is refused with ``HardLinked`` (vfs:
  ``FS_HARD_LINKED``): a replace would leave the other names with the old bytes. Deleting one name
  is allowed (the other names keep the file).
- **Permissions**: a rename needs only the folder's permission, so a file the caller could not
  open for writing (mode bits, decided by effective uid and groups; root bypasses them as a plain
  write does) is refused with ``PermissionError`` (vfs: ``FS_PERMISSION_DENIED``).
- **Bounds and litter**: ``read(limit=)`` refuses from the handle's ``fstat`` before reading a
  byte. Temp files are ``.vfs-tmp-<32 hex>`` (:func:`is_temp_name` recognises exactly those) and
  none survives an exception, ``KeyboardInterrupt`` included.
- **Declared or probed, never detected by tool name**: where ``flock`` does not exclude (probed
  once per backend on the root directory, read-only), the lock is per process and
  ``cross_process_lock`` is False; where opening a file moves its ctime, pass
  ``trust_ctime=False``; on an emulated filesystem whose handles are not the kernel's, pass
  ``set_aside=False`` (the test suite's pyfakefs factory passes both). ``dir_fd`` is used where
  ``os.supports_dir_fd`` lists every call a mutation makes.
"""

from backends.base import is_temp_name
from backends.local.backend import BATCH_OPEN_DIRECTORIES, LocalBackend
from backends.local.versions import RACY_WINDOW_NS

__all__ = ["BATCH_OPEN_DIRECTORIES", "RACY_WINDOW_NS", "LocalBackend", "is_temp_name"]
