"""Local disk backend: os-level calls only, so it works the same on real disk and under emulations.

One reason to change per module:

- ``containment``: every access stays below the root (directory handles reached with
  ``O_NOFOLLOW``, ``realpath`` for ``resolve``);
- ``versions``: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` plus a content hash for
  "racy" files (modified within ``RACY_WINDOW_NS`` of being looked at: git's rule);
- ``publish``: temp file, flush, mode/owner/xattrs carried over, link or rename into place, and
  the set-aside protocol for conditional writes and deletes;
- ``lock``: the commit lock (``flock(2)`` plus a per-path thread lock);
- ``backend``: the :class:`LocalBackend` class, composing them.

Decisions (what a replace does to a file that is more than its bytes):

- **No check-to-rename window.** A conditional write or delete renames the target aside to a
  vfs-only name (``.vfs-aside-<32 hex>``), checks that the set-aside file is the inode it looked
  at and still the expected version, and only then links the new file in *without replacing*
  (``link(2)``): a writer that bypasses vfs and replaces or creates the file meanwhile wins, and
  vfs refuses with ``PreconditionFailed``; nothing is ever overwritten. A file that fails the check
  goes back with ``link(2)`` + ``unlink`` (never over something that appeared meanwhile; if
  something did, the set-aside file keeps its name and the error says so). What POSIX cannot
  close: a writer that opened the file *before* the set-aside and writes to it *after* the check.
  Up to the moment the set-aside file is removed that is detected (the file is kept under its
  set-aside name, nothing lost); after it, the bytes go to an unlinked inode.
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
- **Declared, not detected by tool name**: where ``flock`` does not exclude (probed once per
  backend), the lock is per process and ``cross_process_lock`` is False; where opening a file moves
  its ctime, pass ``trust_ctime=False``.
"""

from backends.local.backend import BATCH_OPEN_DIRECTORIES, LocalBackend
from backends.local.publish import is_aside_name, is_temp_name
from backends.local.versions import RACY_WINDOW_NS

__all__ = ["BATCH_OPEN_DIRECTORIES", "RACY_WINDOW_NS", "LocalBackend", "is_aside_name", "is_temp_name"]
