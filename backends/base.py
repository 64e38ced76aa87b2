"""The backend seam: a handful of single-path primitives plus a ``Capabilities`` declaration.

Everything derived (transactions, journal, history, policy, text handling) is written once in
``vfs``; a backend only stores bytes under *keys*.

Keys
    A key is a relative POSIX path below the backend's root: ``"src/app.py"``; ``""`` is the root
    itself. Keys are already normalised by ``vfs`` (no ``.``/``..``, no leading or doubled ``/``).

Exceptions
    Backends raise builtin exceptions only (``FileNotFoundError``, ``FileExistsError``,
    ``IsADirectoryError``, ``NotADirectoryError``, ``PermissionError``, ``OSError``) and the ones
    defined here (:class:`PreconditionFailed` and its :class:`Vanished`, :class:`EscapesRoot`,
    :class:`NotRegular`, :class:`BadRoot`, ...). ``vfs.storage`` translates
    them into the vfs error vocabulary in one place.

Requests
    ``write`` and ``delete`` take one request object each (:class:`WriteItem`, :class:`DeleteItem`),
    so a new option is one field here rather than a keyword in every backend and wrapper.

Conditional writes
    A request's ``if_version`` says the stored version must still be this one; a write's
    ``if_absent`` says nothing may exist at the key. The rule and its errors are written once,
    :func:`check_precondition`. A backend with ``Capabilities.conditional_write`` enforces them
    atomically in the store (S3 If-Match / If-None-Match); one without it applies the rule
    immediately before the change, leaving a small race window against writers that bypass vfs,
    which it must declare.

Size limits
    ``read(key, limit=N)`` refuses a file over ``N`` bytes before reading any of it
    (:class:`TooBig`), so a 6 GiB file costs a stat, not 6 GiB of memory.
"""

from __future__ import annotations

import errno
import os
from _thread import allocate_lock as _allocate_lock
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

from backends.values import Protocol, field, runtime_checkable, value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal

    Kind = Literal["file", "directory", "symlink", "other"]
else:
    Kind = str  # (other modules import the name; annotations alone use it)


#: What ``Backend.write`` takes: the bytes, or pieces to be stored back to back (vfs's journal
#: record: a header, then pre-images it already holds, so a big file is not copied into a record;
#: an edit of a large file: views of the spans it kept, between the new bytes). A memoryview
#: piece is a view of immutable bytes (vfs checks that where it takes pieces).
WriteData = bytes | list[bytes] | list[bytes | memoryview]


class _Recent:
    """The digests of the last small ``bytes`` hashed, kept with the objects themselves (a strong
    reference: the object cannot be freed and its id reused, and bytes cannot change). A local
    commit of a file first read by the transaction hashes the same bytes three times otherwise:
    as the read's version (a racy file's), as the history record's pre-image digest, and the
    file's bytes read back by the swap's check (compared here byte for byte instead)."""

    MIN_SIZE = 1024  # smaller ones (records' headers) hash in less time than keeping them takes
    MAX_SIZE = 1 << 20  # larger contents are hashed on other threads (vfs.txlog.hash_beside)
    BUDGET = 4 << 20  # bytes kept alive at most, oldest dropped first

    def __init__(self) -> None:
        self.by_id: dict[int, tuple[bytes, str]] = {}
        self.by_digest: dict[str, bytes] = {}
        self.size = 0
        self._guard = _allocate_lock()  # for threads sharing a workspace; lookups need none

    def keep(self, data: bytes, digest: str) -> None:
        with self._guard:
            self.by_id[id(data)] = (data, digest)  # an entry is one tuple: never half-written
            self.by_digest[digest] = data
            self.size += len(data)
            while self.size > self.BUDGET:
                old, old_digest = self.by_id.pop(next(iter(self.by_id)))
                if self.by_digest.get(old_digest) is old:
                    del self.by_digest[old_digest]
                self.size -= len(old)


_recent = _Recent()
_recent_by_id = _recent.by_id  # (looked up by every hash)


#: BLAKE3's constructor, once :func:`_blake3` imported it (~1 ms of start-up, paid by the first
#: hash, not by commands that hash nothing).
_new_hash: Callable[..., Any] | None = None


def _blake3() -> Callable[..., Any]:
    global _new_hash
    from blake3 import blake3

    _new_hash = blake3
    return blake3


def load_hash() -> None:
    """Import the content hash now, if it is not yet: a commit asks this before its first change,
    so that a hash that cannot be had (the ``blake3`` package missing from a broken install) stops
    it while nothing has changed, not after a file is in place. Raises ``ImportError``."""
    if _new_hash is None:
        _blake3()


def content_digest(data: WriteData) -> str:
    """The content hash vfs and the backends share (BLAKE3, 128 bits, hex); of pieces, the hash
    of what they hold back to back (hashed where they are, not joined first).

    BLAKE3 rather than hashlib's hashes: ~5x BLAKE2b's speed on a large file here (SIMD), ~3x on
    a small one, and it lets go of the GIL while it hashes, as the commit's threads need
    (:func:`vfs.txlog.hash_beside`). Records written before it carry BLAKE2b digests: their
    reader (:mod:`vfs.txlog`) knows them by their format.

    A caller that already hashed a content passes the result to ``Backend.write(digest=...)``,
    so a backend whose versions include a content hash does not hash the same bytes again.
    """
    new = _new_hash or _blake3()
    if type(data) is bytes:
        known = _recent_by_id.get(id(data))
        if known is not None and known[0] is data:
            return known[1]
        digest: str = new(data).hexdigest(16)
        if _Recent.MIN_SIZE <= len(data) < _Recent.MAX_SIZE:
            _recent.keep(data, digest)
        return digest
    if not isinstance(data, list):
        return new(data).hexdigest(16)  # type: ignore[no-any-return]
    hasher = new()
    for piece in data:
        hasher.update(piece)
    return hasher.hexdigest(16)  # type: ignore[no-any-return]


def has_digest(data: bytes, digest: str) -> bool:
    """Whether ``content_digest(data) == digest``; where the bytes of that digest were hashed
    lately, compared with them byte by byte instead (equal bytes: equal digests; unequal, hashed
    after all, as two contents may share a digest)."""
    known = _recent.by_digest.get(digest)
    if known is not None and known == data:
        return True
    return content_digest(data) == digest


def joined(data: WriteData) -> bytes:
    """``data`` as one bytes object (a backend that cannot write pieces one after the other)."""
    return b"".join(data) if isinstance(data, list) else data


def data_size(data: WriteData) -> int:
    """How many bytes ``data`` holds (pieces: their sum; a memoryview counts its bytes)."""
    if not isinstance(data, list):
        return len(data)
    return sum(piece.nbytes if isinstance(piece, memoryview) else len(piece) for piece in data)


def holds_at_least(data: WriteData, size: int) -> bool:
    """Whether ``data`` holds ``size`` bytes or more: :func:`data_size` that stops counting there
    (an edit of a large file comes as thousands of pieces)."""
    if not isinstance(data, list):
        return len(data) >= size
    total = 0
    for piece in data:
        total += piece.nbytes if isinstance(piece, memoryview) else len(piece)
        if total >= size:
            return True
    return False


#: Backends that stage a write in a temp file next to its target name it with :func:`temp_name`,
#: so vfs can hide such files from listings and sweep leftovers after a crash.
TEMP_MARKER = ".vfs-tmp-"
_HEX_DIGITS = frozenset("0123456789abcdef")


def is_lower_hex(text: str, length: int) -> bool:
    """Whether ``text`` is exactly ``length`` lower-case hex digits (the names and digests vfs
    writes; checked without :mod:`re`, whose compiling costs every start-up: issue 20)."""
    return len(text) == length and _HEX_DIGITS.issuperset(text)


def temp_name() -> str:
    """A fresh temp file name: the marker and 128 random bits, so that a user's file is never
    taken for one (a name that merely contains the marker is not one of ours)."""
    return f"{TEMP_MARKER}{os.urandom(16).hex()}"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is exactly a :func:`temp_name`."""
    return name.startswith(TEMP_MARKER) and is_lower_hex(name[len(TEMP_MARKER) :], 32)


class PreconditionFailed(OSError):
    """A conditional write or delete found a different version: ``errno`` is ``EEXIST`` when
    ``if_absent`` met an existing object, ``ESTALE`` otherwise (see also :class:`Vanished`)."""


class Vanished(PreconditionFailed, FileNotFoundError):
    """``if_version`` met nothing at all: the file was deleted since that version was seen."""


class BeingWritten(PreconditionFailed):
    """The file still holds the version, but another process has it open for writing: replacing
    it now would orphan what that process writes next, so the write or delete is refused."""


class TooBig(OSError):
    """``read`` met a file larger than its ``limit``; ``size`` is what the stat said."""

    def __init__(self, key: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes, over the limit of {limit}", key)
        self.size = size
        self.limit = limit


class HardLinked(OSError):
    """The file has other names (hard links): replacing it would split them (see
    ``Capabilities.hard_links``)."""


class EscapesRoot(PermissionError):
    """The key resolves (through a symlink) to a location outside the backend's root."""


class NotRegular(OSError):
    """The key names something that is neither a regular file nor a directory (FIFO, device...)."""


class BadRoot(OSError):
    """The root cannot hold a workspace (from :meth:`Backend.check_root`). ``sentence`` says why,
    with ``{root}`` where the root as the caller gave it goes: "The workspace root {root} does not
    exist." (vfs fills it in and raises its one ``FS_BAD_ROOT`` error)."""

    def __init__(self, sentence: str) -> None:
        super().__init__(errno.ENOENT, sentence)
        self.sentence = sentence

    def said_of(self, root: str) -> str:
        return self.sentence.replace("{root}", root)


#: The sentences of the two problems every backend with real directories shares.
ROOT_MISSING = "The workspace root {root} does not exist."
ROOT_NOT_A_DIRECTORY = "The workspace root {root} is not a directory."


@value(frozen=True)
class Capabilities:
    """What a backend can guarantee. vfs and the docs read these; nothing else is assumed."""

    #: Replacing one file is atomic: a reader sees the old or the new bytes, never a mix.
    atomic_replace: bool
    #: The store itself enforces ``if_version``/``if_absent`` (compare-and-swap).
    conditional_write: bool
    #: A create can never overwrite an object that appeared concurrently.
    exclusive_create: bool
    #: Data is on stable storage when ``write`` returns (fsync or a store acknowledgement).
    durable: bool
    #: The commit lock excludes other processes (not only other threads of this process).
    cross_process_lock: bool
    #: Directories are real objects (local disk) rather than key prefixes (object stores).
    real_directories: bool
    #: Modification times are meaningful and fine grained.
    real_mtime: bool
    #: File modes (permission bits) are stored and restored.
    modes: bool
    #: Symlinks exist and are checked so that no access leaves the root.
    symlinks: bool
    #: The commit lock can be lost while held (a lease with an expiry: object stores). vfs then
    #: keeps post-images in the journal so that a takeover's recovery rolls the commit forward
    #: and a paused holder's late writes only repeat what is already there.
    lock_can_expire: bool = False
    #: The commit lock tells a fresh acquisition (the lock was free, not taken over) from one
    #: that follows a holder who left work unfinished: its manager has ``fresh`` after
    #: ``__enter__`` and ``mark_dirty()`` before ``__exit__``. A fresh lock means no holder left an
    #: unresolved journal (a clean holder resolves its own, a dirty one marks the lock), so the
    #: commit need not list the journals first (one request less on S3). False: always list.
    lock_knows_resolved: bool = False
    #: The backend has ``write_ahead(item) -> bool`` and ``drop_ahead(key)``: a write's bytes can
    #: be sent before the write itself, unseen until that write completes them (S3: the parts of a
    #: multipart upload behind a small fenced completion), so a commit overlaps them with its checks.
    sends_ahead: bool = False
    #: A replaced file keeps its owner and group (where the caller may set them).
    keeps_owner: bool = False
    #: A replaced file keeps its extended attributes.
    keeps_xattrs: bool = False
    #: A write with ``keep_replaced`` may move the file it replaces to that key (a rename: no
    #: byte copied) instead of freeing it; see :class:`WriteItem`.
    keeps_replaced: bool = False
    #: What a write does to a file with several names: "n/a" (no hard links in this store),
    #: "refused" (``HardLinked``, nothing changed), "in-place" (every name sees the new bytes).
    hard_links: str = "n/a"
    #: Free-form caveats for the docs ("race window between check and write", ...).
    notes: tuple[str, ...] = field(default_factory=tuple)


@value(frozen=True)
class FileInfo:
    """What a backend knows about one key. ``version`` is opaque: compare it, never parse it."""

    key: str
    kind: Kind
    size: int = 0
    mode: int | None = None
    version: str | None = None
    mtime: float | None = None

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1]


@runtime_checkable
class Backend(Protocol):
    """The primitives a storage backend provides. See the module docstring for the contract."""

    #: Registry name ("local", "memory", "s3", "fsspec").
    name: ClassVar[str]
    capabilities: Capabilities

    def describe(self) -> str:
        """A human-readable root, e.g. ``/home/me/project`` or ``s3://bucket/prefix``."""
        ...

    def check_root(self) -> None:
        """``BadRoot`` if the root cannot hold a workspace (a directory that is missing or a file,
        a bucket or container that does not exist); called once, when a workspace is opened, before
        anything else is looked for. Cheap: at most one request. Other failures (credentials,
        network) raise as from any primitive."""
        ...

    def stat(self, key: str) -> FileInfo | None:
        """Info for ``key`` without following a final symlink; ``None`` when nothing is there."""
        ...

    def read(self, key: str, *, limit: int | None = None) -> tuple[bytes, FileInfo]:
        """The bytes of a regular file and the info (version) of exactly those bytes.
        ``TooBig`` (checked with a stat, before reading) when it holds more than ``limit``."""
        ...

    def write(self, item: WriteItem) -> FileInfo:
        """Atomically create or replace a regular file; parent directories must exist.
        See :class:`WriteItem` for the options; ``PreconditionFailed`` (from
        :func:`check_precondition`) when its condition does not hold."""
        ...

    def delete(self, item: DeleteItem) -> None:
        """Remove a regular file (or symlink). ``FileNotFoundError`` if absent."""
        ...

    def list(self, key: str) -> list[FileInfo]:
        """Direct children of a directory, in no particular order."""
        ...

    def mkdir(self, key: str) -> None:
        """Create one directory level (parent must exist). ``FileExistsError`` if present."""
        ...

    def rmdir(self, key: str) -> None:
        """Remove an empty directory."""
        ...

    def matches(self, key: str, version: str | None) -> bool:
        """Whether ``key`` still holds exactly ``version`` (``None`` = still absent)."""
        ...

    def resolve(self, key: str) -> str:
        """The canonical key after following symlinks; ``EscapesRoot`` if it leaves the root."""
        ...

    def lock(self, key: str, *, timeout: float) -> AbstractContextManager[None]:
        """An exclusive commit lock named by ``key``; ``TimeoutError`` if not acquired in time."""
        ...

    def close(self) -> None:
        """Release resources (connections, lock handles)."""
        ...


@value(frozen=True, slots=True)
class WriteItem:
    """One write request.

    ``mode`` None keeps the existing file's mode (or the default for a new file).
    ``if_version`` / ``if_absent``: the condition (see :func:`check_precondition`).
    ``digest`` is ``content_digest(data)`` when the caller has it already (a backend that hashes
    content into versions uses it instead of hashing again), or a callable that returns it: a
    digest still being computed on another thread, asked for (:func:`given_digest`) only once the
    bytes are written, so that hashing a large file overlaps its write and flush. ``durable=False`` allows skipping
    the flush to stable storage (vfs uses it only for records whose loss in a power cut costs
    nothing but an undo step); still atomic. ``versioned=False`` says the caller will not use the
    returned version (vfs's own records), so the backend may return ``version=None``.
    ``keep_replaced``: a key (its folder exists) where a backend with
    ``Capabilities.keeps_replaced`` may move the file this write replaces, once the write has
    landed and its condition held, instead of freeing it: vfs keeps a large pre-image so, without
    writing its bytes again. Best effort and unflushed: the write's outcome never depends on it,
    and the caller finds out whether it happened by looking (a backend without the capability
    ignores it).
    """

    key: str
    data: WriteData
    mode: int | None = None
    if_version: str | None = None
    if_absent: bool = False
    digest: str | Callable[[], str] | None = None
    durable: bool = True
    versioned: bool = True
    keep_replaced: str | None = None


def given_digest(item: WriteItem) -> str | None:
    """The caller's ``content_digest`` of ``item.data``, if it gave one (waited for if it is
    still being computed)."""
    digest = item.digest
    return digest() if callable(digest) else digest


@value(frozen=True, slots=True)
class DeleteItem:
    """One delete request; ``durable=False`` allows skipping the flush (history pruning)."""

    key: str
    if_version: str | None = None
    durable: bool = True


def check_precondition(
    item: WriteItem | DeleteItem, current: FileInfo | None, same_version: Callable[[], bool]
) -> None:
    """The one statement of the conditional-write rule, for backends that check it themselves.

    ``current`` is what is at the key now (``None``: nothing); ``same_version`` answers whether it
    still holds ``item.if_version`` (called only when that matters, so a backend may hash there).
    Raises ``PreconditionFailed`` (``EEXIST``: ``if_absent`` met something; ``ESTALE``: another
    version) or ``Vanished`` (the version was deleted)."""
    if isinstance(item, WriteItem) and item.if_absent and current is not None:
        raise PreconditionFailed(errno.EEXIST, "already exists", item.key)
    if item.if_version is None:
        return
    if current is None:
        raise Vanished(errno.ENOENT, "no longer exists", item.key)
    if current.version != item.if_version and not same_version():
        raise PreconditionFailed(errno.ESTALE, "changed since it was read", item.key)


@runtime_checkable
class BatchBackend(Protocol):
    """Optional: many single-key primitives at once (S3: concurrently; local disk: in a loop
    that opens, checks and flushes each directory once).

    Each method returns a list aligned with its input: for every item the value the single-item
    primitive returns, or the exception instance it would have raised (``None`` for a successful
    delete). One item's failure never stops the others; items are independent and each is exactly
    as atomic and as conditional as its single-item call (a batch is not a transaction). vfs uses
    these when a backend has them, so an N-file commit costs a few round trips, not N.

    Two latitudes: ``read_many`` may report a miss as plain ``FileNotFoundError`` where ``read``
    would explain it (a file where a parent directory should be); and ``write_many`` /
    ``delete_many`` may flush once per batch (local disk: one directory ``fsync`` per directory),
    as long as everything is durable when they return.
    """

    def stat_many(self, keys: Sequence[str]) -> list[FileInfo | BaseException | None]: ...

    def read_many(
        self, keys: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[bytes, FileInfo] | BaseException]: ...

    def write_many(self, items: Sequence[WriteItem]) -> list[FileInfo | BaseException]: ...

    def delete_many(self, items: Sequence[DeleteItem]) -> list[BaseException | None]: ...

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> list[bool | BaseException]: ...


def iter_parents(key: str) -> Iterator[str]:
    """``"a/b/c"`` -> ``"a"``, ``"a/b"`` (the strict ancestors, outermost first; not the root)."""
    parts = key.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])


def miss_verdict(key: str, want: str, is_dir: bool, here: object, ancestors: Sequence[object]) -> OSError:
    """Why ``key`` could not be read as a ``want`` ("file" or "directory") on a store whose
    directories are key prefixes, from what was found: whether objects lie below ``key``
    (``is_dir``), the object at ``key`` itself (``here``, ``None`` if absent) and at each of its
    ancestors (``None`` where absent). A file standing where a parent should be is "not a directory"."""
    if want == "file" and is_dir and here is None:
        return IsADirectoryError(errno.EISDIR, "Is a directory", key)
    if want == "directory" and here is not None:
        return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
    if any(a is not None for a in ancestors):
        return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
    return FileNotFoundError(errno.ENOENT, "No such file or directory", key)


def parent_of(key: str) -> str:
    return key.rsplit("/", 1)[0] if "/" in key else ""


def join_key(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name
