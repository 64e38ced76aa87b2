"""The transaction log: the one owner of the ``.vfs/`` layout and of its record formats.

Layout under the workspace's metadata folder::

    tx/<txid>.journal   written before the first target changes: every target's pre-image
                        (and, where the commit lock can expire, its post-image), created
                        directories, digests of everything
    tx/<txid>.done      the decision, written once with create-if-absent (compare-and-swap):
                        ``committed`` (the commit point, also the ``vfs log`` entry) or
                        ``aborted`` (written before a rollback where another client could
                        otherwise roll the same journal forward)
    tx/<txid>.record    the whole history record of a single-target commit in one file: its
                        decision (``committed``), then its journal (the header says
                        ``committed``); written after the change landed, for a pre-image of at
                        most ``RECORD_INLINE_MAX`` bytes, or one kept as ``.pre`` (another
                        large one: journal + decision, so that reading the log never reads
                        large pre-images)
    tx/<txid>.pre       the pre-image of a ``.record``'s target, larger than
                        ``RECORD_INLINE_MAX``, where the backend kept the replaced file itself
                        (moved here by the write: no byte copied); the record holds its length
                        and digest. Without its record it is a leftover, removed by recovery
    tx/<txid>.gap       a commit landed but its history record could not be written: undo
                        must not reach past it
    checkpoints/<name>  a named point of history: the newest visible commit when it was made

Rules (:meth:`TxLog.scan`): a journal without a decision, or with ``aborted``, is unresolved
(recovery finishes it); a journal whose header says ``committed`` is the history record of a
single-target commit; journal + ``committed`` is history, and so is a ``.record``. A lone
``.done`` is the harmless leftover of interrupted pruning.

Metadata is input, never trust: a record may have been truncated, flipped, edited or planted (a
cloned repository can carry a ``.vfs/``). Every record carries its lengths and digests (BLAKE3;
BLAKE2b in the records of vfs before it, still read: :data:`LEGACY_MAGICS`), checked before any
byte of it is used; every key in it passes the same containment rules as a
model path. A record that fails raises :class:`~vfs.errors.CorruptMetadata`, naming the file.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping

from backends.base import DeleteItem, WriteData, WriteItem, content_digest, holds_at_least, is_lower_hex
from backends.values import field, value
from vfs import recordjson
from vfs.errors import (
    CorruptMetadata,
    Exists,
    IsADirectory,
    NotFound,
    NotRegularFile,
    StaleVersion,
    TooLarge,
    VfsError,
)
from vfs.storage import Storage

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from _thread import LockType
    from typing import Any, Literal

    State = Literal["file", "absent", "directory"]
    Outcome = Literal["committed", "aborted"]
    #: what a transaction was: an ordinary commit, or history at work
    Kind = Literal["commit", "undo", "redo", "rewind"]
else:
    Kind = str  # (other modules import the name; annotations alone use it)
KINDS = ("commit", "undo", "redo", "rewind")

JOURNAL_MAGIC = b"VFSJOURNAL3\n"
DONE_MAGIC = b"VFSDONE3\n"
#: ``RECORD_MAGIC``, ``<decision length>\n``, the decision (as in ``.done``), then the journal.
RECORD_MAGIC = b"VFSRECORD1\n"
#: The largest pre-image a ``.record`` holds: the log reads every record whole.
RECORD_INLINE_MAX = 1 << 16
_ALPHANUMERIC = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
#: a checkpoint's name: ``[A-Za-z0-9][A-Za-z0-9._-]{0,63}``; a session id also allows ':'
_NAME_CHARS = _ALPHANUMERIC | {".", "_", "-"}


def _is_txid(text: str) -> bool:
    """``\\d{20}-[0-9a-f]{8}`` (ASCII digits), as :func:`new_txid` makes them; without :mod:`re`
    (its compiling is start-up: issue 20)."""
    return (
        len(text) == 29
        and text[20] == "-"
        and text[:20].isascii()
        and text[:20].isdigit()
        and is_lower_hex(text[21:], 8)
    )


def _is_name(text: str, allowed: frozenset[str]) -> bool:
    return 0 < len(text) <= 64 and text[0] in _ALPHANUMERIC and allowed.issuperset(text)


_STATES = ("file", "absent", "directory")
_SUFFIXES = frozenset(("journal", "done", "gap", "record", "pre"))
#: A header larger than this is not one of ours (a commit of 100,000 files stays far below).
_MAX_HEADER = 1 << 28


def digest(data: WriteData) -> str:
    """The content hash recorded per target (the same one the backends version content with)."""
    return content_digest(data)


def legacy_digest(data: WriteData) -> str:
    """The digest in a record of a :data:`LEGACY_MAGICS` format: BLAKE2b, 128 bits, hex."""
    from _blake2 import blake2b

    hasher = blake2b(digest_size=16)
    for piece in data if isinstance(data, list) else [data]:
        hasher.update(piece)
    return hasher.hexdigest()


#: Below this many bytes, hashing on another thread costs more than it saves.
HASH_BESIDE_MIN = 1 << 20


def hash_beside(blobs: Mapping[int, WriteData]) -> Callable[[], dict[int, str]]:
    """The digests of ``blobs``, the big ones begun now on another thread; the callable returned
    waits for them (and hashes the small ones in line, on its first call).

    BLAKE3 lets go of the GIL over big inputs, so a commit's pre-images and post-images are
    hashed on two other threads (two cores) while this one writes and flushes the files: the
    digests are needed only once the bytes are down (the written file's version, the history
    record), or for a journal written first, before the first target changes."""
    big = {index: blob for index, blob in blobs.items() if holds_at_least(blob, HASH_BESIDE_MIN)}
    digests: dict[int, str] = {}
    done = _hash_on_a_thread(big, digests) if big else None

    def wait() -> dict[int, str]:
        if done is not None:
            with done:  # released when the other thread is through
                pass
        # The small ones, and any the other thread could not hash: the backend asks for a
        # post-image's digest once the file is in place, so a failure there (the bytes are
        # frozen: only a lack of memory could fail it) is retried here rather than report a
        # write that landed as failed.
        if len(digests) < len(blobs):  # (asked once per file written: a pass each would be quadratic)
            for index, blob in blobs.items():
                if index not in digests:
                    digests[index] = digest(blob)
        return digests

    return wait


def _hash_on_a_thread(blobs: Mapping[int, WriteData], digests: dict[int, str]) -> LockType | None:
    """Start hashing ``blobs`` into ``digests`` on another thread: the lock it releases when
    through (``None`` if no thread could be started: then nothing was hashed)."""
    import _thread  # not threading: its import is start-up every `vfs apply` would pay

    done = _thread.allocate_lock()
    done.acquire()

    def run() -> None:
        try:
            for index, blob in blobs.items():
                digests[index] = digest(blob)
        except BaseException:  # noqa: BLE001 - what is missing is hashed again by the waiter
            pass
        finally:
            done.release()

    try:
        _thread.start_new_thread(run, ())
    except RuntimeError:  # no thread to be had
        return None
    return done


def valid_session_id(session: object) -> bool:
    """Letters, digits, '.', '_', ':' and '-', at most 64, starting with a letter or digit."""
    return isinstance(session, str) and _is_name(session, _NAME_CHARS | {":"})


def new_session_id() -> str:
    return f"s-{os.urandom(4).hex()}"


def new_txid() -> str:
    return f"{time.time_ns():020d}-{os.urandom(4).hex()}"


@value
class TargetRecord:
    """One changed key: what it held before the commit and what the commit puts there."""

    key: str
    before: State
    after: State
    before_version: str | None = None
    before_mode: int | None = None
    after_sha: str | None = None
    after_mode: int | None = None


@value
class Journal:
    txid: str
    label: str
    created: float
    targets: list[TargetRecord]
    created_dirs: list[str] = field(default_factory=list)
    kind: Kind = "commit"
    #: the transactions this one reverts (an undo, a rewind) or re-applies (a redo reverts an undo)
    reverts: list[str] = field(default_factory=list)
    #: target index -> pre-image (targets that were files before)
    pre_images: dict[int, bytes] = field(default_factory=dict)
    #: target index -> its pre-image's digest, where it was hashed beforehand (:func:`hash_beside`)
    pre_digests: dict[int, str] = field(default_factory=dict)
    #: target index -> post-image; kept where the lock can expire, so recovery can roll forward
    post_images: dict[int, bytes] = field(default_factory=dict)
    #: the target whose pre-image is the file ``tx/<txid>.pre`` (a history record's), not in the
    #: body: it is still in ``pre_images`` (read from that file, checked against its digest)
    kept_pre: int | None = None
    #: written after the change landed (single-target commits): a history record, never rolled back
    committed: bool = False
    #: the session (conversation) that made the transaction, if it said
    session: str | None = None
    #: read from a record of a :data:`LEGACY_MAGICS` format: its digests are BLAKE2b's
    legacy: bool = False

    def digest(self, data: WriteData) -> str:
        """``data``'s digest as this journal's digests were made (compared with ``after_sha``)."""
        return legacy_digest(data) if self.legacy else digest(data)

    def encode_parts(self) -> list[bytes]:
        """Magic, ``<header length> <header digest>``, the JSON header, then the images as they
        are (not copied into one buffer)."""
        if self.legacy:  # (its after_sha are another hash's: never written again as ours)
            raise ValueError("a journal read from a legacy record is not written again")
        blobs: list[bytes] = []
        spans: dict[str, dict[str, list[Any]]] = {"pre": {}, "post": {}}
        offset = 0
        for kind, images in (("pre", self.pre_images), ("post", self.post_images)):
            for index in sorted(images):
                blob = images[index]
                sha = (self.pre_digests.get(index) or digest(blob)) if kind == "pre" else self.targets[index].after_sha
                if kind == "pre" and index == self.kept_pre:
                    spans["kept"] = {str(index): [len(blob), sha]}
                    continue
                spans[kind][str(index)] = [offset, len(blob), sha]
                blobs.append(blob)
                offset += len(blob)
        header = recordjson.dumps(
            {
                "txid": self.txid,
                "label": self.label,
                "created": self.created,
                "kind": self.kind,
                "reverts": self.reverts,
                "committed": self.committed,
                "session": self.session,
                "created_dirs": self.created_dirs,
                "targets": [vars(t) for t in self.targets],
                "blobs": spans,
            }
        )
        return [JOURNAL_MAGIC + f"{len(header)} {digest(header)}\n".encode() + header, *blobs]

    def encode(self) -> bytes:
        return b"".join(self.encode_parts())


@value
class DoneRecord:
    """The decision on a transaction; for a committed one, also its log entry."""

    txid: str
    label: str
    created: float
    changes: list[tuple[str, str]]  # (model-facing path, action)
    versions: dict[str, str | None]  # key -> version written (None for a deleted path)
    kind: Kind = "commit"
    reverts: list[str] = field(default_factory=list)
    outcome: Outcome = "committed"
    session: str | None = None

    def encode(self) -> bytes:
        body = recordjson.dumps(vars(self))
        return DONE_MAGIC + digest(body).encode() + b"\n" + body


@value
class Checkpoint:
    """A named point of history: ``txid`` is the newest visible commit then (``None``: none)."""

    name: str
    txid: str | None
    created: float


CHECKPOINT_MAGIC = b"VFSCHECKPOINT2\n"
#: Each record format as vfs wrote it while its content hash was BLAKE2b (the same layout, the
#: same lengths): read, never written, so that history and unfinished commits outlive an upgrade.
LEGACY_MAGICS = {
    JOURNAL_MAGIC: b"VFSJOURNAL2\n",
    DONE_MAGIC: b"VFSDONE2\n",
    CHECKPOINT_MAGIC: b"VFSCHECKPOINT1\n",
}


def valid_checkpoint_name(name: str) -> bool:
    return isinstance(name, str) and _is_name(name, _NAME_CHARS)


@value
class Scan:
    """What ``tx/`` holds, by txid (sorted, oldest first)."""

    journals: list[str] = field(default_factory=list)
    decided: set[str] = field(default_factory=set)
    gaps: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)  # names that are none of ours
    #: bytes each txid's records take (journal, decision, gap marker), as listed
    sizes: dict[str, int] = field(default_factory=dict)
    #: txids whose history is one ``.record`` (also in ``journals`` and ``decided``)
    records: set[str] = field(default_factory=set)
    #: txids with a kept pre-image (``.pre``), with or without their record
    kept: set[str] = field(default_factory=set)

    def lone_kept(self) -> list[str]:
        """Kept pre-images whose record is not there: leftovers of a commit interrupted between
        the move and its record (or of a record that could not be written)."""
        return sorted(self.kept - self.records)

    def unfinished(self) -> bool:
        """Whether a recovery has work here: a journal without its decision, or a lone kept
        pre-image (to remove)."""
        return any(t not in self.decided for t in self.journals) or bool(self.kept - self.records)


class _Reader:
    """Checks one record field by field; any failure is ``CorruptMetadata`` naming the file."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: the record's digests are BLAKE2b's (its format is one of :data:`LEGACY_MAGICS`)
        self.legacy = False
        self.digest: Callable[[WriteData], str] = digest

    def format(self, data: bytes, magic: bytes) -> bool:
        """Whether ``data`` starts with ``magic`` or its legacy twin (same length); the digests
        it is checked with follow."""
        if data.startswith(magic):
            return True
        if not data.startswith(LEGACY_MAGICS[magic]):
            return False
        self.legacy, self.digest = True, legacy_digest
        return True

    def fail(self, why: str) -> CorruptMetadata:
        txid = self.name.rsplit("/", 1)[-1].split(".", 1)[0]
        return CorruptMetadata(
            f"The metadata record {self.name} is corrupt ({why}); nothing was written from it. "
            f"If the files it names are as they should be, set it aside with `vfs recover --discard {txid}`.",
            path=self.name,
        )

    def get(self, raw: Any, name: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
        if not isinstance(raw, dict) or (name not in raw and not optional):
            raise self.fail(f"missing field {name!r}")
        value = raw.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
            raise self.fail(f"field {name!r} has the wrong type")
        return value

    def choice(self, raw: Any, name: str, allowed: Iterable[str]) -> Any:
        value = self.get(raw, name, str)
        if value not in allowed:
            raise self.fail(f"field {name!r} is {value!r}")
        return value

    def sha(self, raw: Any, name: str, optional: bool = False) -> str | None:
        value = self.get(raw, name, str, optional)
        if value is not None and not is_lower_hex(value, 32):
            raise self.fail(f"field {name!r} is not a digest")
        return value  # type: ignore[no-any-return]


class TxLog:
    """Reads and writes the records under ``tx_key`` through ``storage``.

    ``key_ok`` is the containment rule for keys found in records (the same rule a model path
    passes); ``display`` names a key for messages."""

    def __init__(
        self, storage: Storage, tx_key: str, key_ok: Callable[[str], bool], display: Callable[[str], str]
    ) -> None:
        self.storage = storage
        self.tx_key = tx_key
        self.checkpoints_key = f"{tx_key.rsplit('/', 1)[0]}/checkpoints" if "/" in tx_key else "checkpoints"
        self.key_ok = key_ok
        self.display = display
        #: txids seen (listed or written) as a ``.record``: which file to read first
        self._records: set[str] = set()
        #: txids seen (listed or written) with a ``.pre``: removed with their record
        self._kept: set[str] = set()
        #: decisions this log wrote and saw land, until pruning takes them (see :meth:`take_written`)
        self._written: dict[str, DoneRecord] = {}

    # -- names --------------------------------------------------------------------------------

    def journal_key(self, txid: str) -> str:
        return f"{self.tx_key}/{txid}.journal"

    def done_key(self, txid: str) -> str:
        return f"{self.tx_key}/{txid}.done"

    def gap_key(self, txid: str) -> str:
        return f"{self.tx_key}/{txid}.gap"

    def record_key(self, txid: str) -> str:
        return f"{self.tx_key}/{txid}.record"

    def pre_key(self, txid: str) -> str:
        """Where a single-target commit asks the backend to keep the file it replaces."""
        return f"{self.tx_key}/{txid}.pre"

    def scan(self, *, sizes: bool = False) -> Scan:
        """What ``tx/`` holds; the bytes of each txid's records only with ``sizes`` (a plain
        listing of names costs no stat per record on local disk: every commit scans)."""
        scan = Scan()
        try:
            if sizes:
                listed = [(e.name, max(0, e.size or 0)) for e in self.storage.list(self.tx_key)]
            else:
                listed = [(name, 0) for name in self.storage.names(self.tx_key)]
        except NotFound:
            return scan
        for name, size in listed:
            parsed = _record_name(name)
            if parsed is None:
                scan.leftovers.append(name)
                continue
            txid, suffix = parsed
            if sizes:
                scan.sizes[txid] = scan.sizes.get(txid, 0) + size
            if suffix == "journal":
                scan.journals.append(txid)
            elif suffix == "done":
                scan.decided.add(txid)
            elif suffix == "record":
                scan.records.add(txid)
                scan.decided.add(txid)
            elif suffix == "pre":
                scan.kept.add(txid)
            else:
                scan.gaps.append(txid)
        scan.journals = sorted(set(scan.journals) | scan.records)
        scan.gaps.sort()
        self._records = scan.records
        self._kept = set(scan.kept)
        return scan

    # -- writing ------------------------------------------------------------------------------

    def journal_item(self, journal: Journal, *, durable: bool = True) -> WriteItem:
        return WriteItem(self.journal_key(journal.txid), journal.encode_parts(), durable=durable, versioned=False)

    def record_item(self, journal: Journal, done: DoneRecord) -> WriteItem:
        """The one-file history record of a landed single-target commit (unflushed, as the pair
        it stands for: the change itself is the commit point)."""
        assert journal.committed and done.txid == journal.txid and done.outcome == "committed"
        decision = done.encode()
        head = RECORD_MAGIC + f"{len(decision)}\n".encode() + decision
        self._records.add(journal.txid)
        if journal.kept_pre is not None:
            self._kept.add(journal.txid)
        return WriteItem(self.record_key(journal.txid), [head, *journal.encode_parts()], durable=False, versioned=False)

    def done_item(self, record: DoneRecord, *, durable: bool = True) -> WriteItem:
        return WriteItem(self.done_key(record.txid), record.encode(), if_absent=True, durable=durable, versioned=False)

    def decide(self, record: DoneRecord) -> DoneRecord:
        """Write the decision once (create-if-absent): the decision that stands, ours or the one
        another client (a recovery that took the lock over) wrote first."""
        try:
            self.storage.write(self.done_item(record))
        except (Exists, StaleVersion):
            return self.read_done(record.txid)
        self.remember(record)
        return record

    def remember(self, record: DoneRecord) -> None:
        """A decision this log wrote and saw land: pruning need not read it back."""
        self._written[record.txid] = record

    def take_written(self, txids: list[str]) -> dict[str, DoneRecord]:
        """The decisions among ``txids`` (as listed, oldest first) that this log wrote; what it
        remembers of older ones is dropped (their records are gone)."""
        taken = {t: self._written.pop(t) for t in txids if t in self._written}
        newest = txids[-1] if txids else ""
        self._written = {t: r for t, r in self._written.items() if t > newest}
        return taken

    def mark_gap(self, txid: str) -> bool:
        try:
            self.storage.write(WriteItem(self.gap_key(txid), b"", if_absent=True, durable=False, versioned=False))
        except VfsError:
            return False
        return True

    def forget(self, *txids: str) -> None:
        """Remove records: every journal first (in one batch), then the marks of the journals
        that are gone. A lone journal would read as an interrupted commit; a lone mark is
        harmless."""
        first = [self.record_key(t) if t in self._records else self.journal_key(t) for t in txids]
        journals = self.storage.delete_many([DeleteItem(k, durable=False) for k in first])
        gone = [t for t, error in zip(txids, journals, strict=True) if error is None or isinstance(error, NotFound)]
        marks = [self.done_key(t) for t in gone if t not in self._records]
        marks += [self.pre_key(t) for t in gone if t in self._kept]
        self.storage.delete_many([DeleteItem(k, durable=False) for k in marks])
        self._kept.difference_update(gone)
        failed = [e for e in journals if e is not None and not isinstance(e, NotFound)]
        if failed:
            raise failed[0]

    def delete_quiet(self, key: str) -> None:
        try:
            self.storage.delete(DeleteItem(key))
        except NotFound:
            pass

    # -- checkpoints --------------------------------------------------------------------------

    def write_checkpoint(self, checkpoint: Checkpoint) -> None:
        if self.storage.stat(self.checkpoints_key) is None:
            try:
                self.storage.mkdir(self.checkpoints_key)
            except Exists:
                pass  # made meanwhile by another client: just as good
        body = recordjson.dumps(vars(checkpoint))
        data = CHECKPOINT_MAGIC + digest(body).encode() + b"\n" + body
        self.storage.write(WriteItem(f"{self.checkpoints_key}/{checkpoint.name}", data, versioned=False))

    def delete_checkpoint(self, name: str) -> None:
        self.delete_quiet(f"{self.checkpoints_key}/{name}")

    def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first; a damaged one is ``CorruptMetadata``."""
        try:
            entries = self.storage.list(self.checkpoints_key)
        except NotFound:
            return []
        names = sorted(e.name for e in entries if valid_checkpoint_name(e.name))
        found = [self._read_checkpoint(n) for n in names]
        return sorted(found, key=lambda c: (c.created, c.name))

    def _read_checkpoint(self, name: str) -> Checkpoint:
        key = f"{self.checkpoints_key}/{name}"
        data, _ = self.storage.read(key)
        reader = _Reader(self.display(key))
        head = len(CHECKPOINT_MAGIC)
        sha, body = data[head : head + 32], data[head + 33 :]
        if (
            not reader.format(data, CHECKPOINT_MAGIC)
            or data[head + 32 : head + 33] != b"\n"
            or reader.digest(body).encode() != sha
        ):
            raise reader.fail("digest mismatch")
        raw = _json(body, reader)
        txid = reader.get(raw, "txid", str, optional=True)
        if txid is not None and not _is_txid(txid):
            raise reader.fail("field 'txid' is not a txid")
        if reader.get(raw, "name", str) != name:
            raise reader.fail("its name is not its file name")
        return Checkpoint(name, txid, float(reader.get(raw, "created", (int, float))))

    # -- reading ------------------------------------------------------------------------------

    def read_done(self, txid: str) -> DoneRecord:
        return self._decision(txid, *self._read_either(txid, self.done_key(txid)))

    def read_dones(self, txids: list[str]) -> list[DoneRecord]:
        """Many decisions at once (concurrent reads on S3), each from its ``.done`` or ``.record``."""
        keys = [self._keys(t, self.done_key(t))[0] for t in txids]
        results = self.storage.read_many(keys)
        records = []
        for txid, key, result in zip(txids, keys, results, strict=True):
            if isinstance(result, NotFound):
                key, data = self._read_either(txid, self.done_key(txid))
            elif isinstance(result, VfsError):
                raise result
            else:
                data = result[0]
            records.append(self._decision(txid, key, data))
        return records

    def _decision(self, txid: str, key: str, data: bytes) -> DoneRecord:
        """The decision read from ``key``: a ``.done``, or the first part of a ``.record``."""
        if key.endswith(".record"):
            data = self._split_record(txid, data)[0]
        return self._parse_done(txid, data, key)

    def _keys(self, txid: str, own: str) -> tuple[str, str]:
        """Where ``txid``'s record is looked for first and then: its ``.record`` first if this log
        listed or wrote one, else ``own`` (its ``.journal`` or ``.done``)."""
        record = self.record_key(txid)
        return (record, own) if txid in self._records else (own, record)

    def _read_either(self, txid: str, own: str) -> tuple[str, bytes]:
        """The key and bytes of ``txid``'s record: the second place on ``NotFound`` (a record
        another client wrote since this log last listed)."""
        first, second = self._keys(txid, own)
        try:
            return first, self.storage.read(first)[0]
        except NotFound:
            return second, self.storage.read(second)[0]

    def _split_record(self, txid: str, data: bytes) -> tuple[bytes, bytes]:
        """A ``.record``'s decision and journal, its length line checked (each part carries its
        own digests, checked by its parser)."""
        reader = _Reader(self.display(self.record_key(txid)))
        head = len(RECORD_MAGIC)
        line_end = data.find(b"\n", head, head + 24)
        length = data[head:line_end]
        if not data.startswith(RECORD_MAGIC) or line_end < 0 or not length.isdigit():
            raise reader.fail("not a vfs history record")
        start = line_end + 1
        end = start + int(length)
        if end > len(data):
            raise reader.fail("truncated")
        return data[start:end], data[end:]

    def _parse_done(self, txid: str, data: bytes, key: str | None = None) -> DoneRecord:
        reader = _Reader(self.display(key or self.done_key(txid)))
        if not reader.format(data, DONE_MAGIC) or len(data) < len(DONE_MAGIC) + 33:
            raise reader.fail("not a vfs decision record")
        sha, body = data[len(DONE_MAGIC) : len(DONE_MAGIC) + 32], data[len(DONE_MAGIC) + 33 :]
        if data[len(DONE_MAGIC) + 32 : len(DONE_MAGIC) + 33] != b"\n" or reader.digest(body).encode() != sha:
            raise reader.fail("digest mismatch")
        raw = _json(body, reader)
        changes = self._changes(reader, reader.get(raw, "changes", list))
        versions = reader.get(raw, "versions", dict)
        if not all(isinstance(v, str | None) for v in versions.values()):
            raise reader.fail("field 'versions' has the wrong type")
        record = DoneRecord(
            txid=reader.get(raw, "txid", str),
            label=reader.get(raw, "label", str),
            created=float(reader.get(raw, "created", (int, float))),
            changes=changes,
            versions=versions,
            kind=reader.choice(raw, "kind", KINDS),
            reverts=_txids(reader, reader.get(raw, "reverts", list)),
            outcome=reader.choice(raw, "outcome", ("committed", "aborted")),
            session=_session(reader, raw),
        )
        if record.txid != txid:
            raise reader.fail("its txid is not its name")
        return record

    @staticmethod
    def _changes(reader: _Reader, raw: list[Any]) -> list[tuple[str, str]]:
        out = []
        for change in raw:
            if not (isinstance(change, list) and len(change) == 2 and all(isinstance(c, str) for c in change)):
                raise reader.fail("field 'changes' has the wrong type")
            out.append((change[0], change[1]))
        return out

    def read_journal(self, txid: str) -> Journal:
        key, data = self._read_either(txid, self.journal_key(txid))
        reader = _Reader(self.display(key))
        if key.endswith(".record"):
            decision, data = self._split_record(txid, data)
            self._parse_done(txid, decision, key)  # checked too: it is what makes the journal history
        header, body = _split_journal(data, reader)
        raw = _json(header, reader)
        targets = [self._target(reader, t) for t in reader.get(raw, "targets", list)]
        journal = Journal(
            txid=reader.get(raw, "txid", str),
            label=reader.get(raw, "label", str),
            created=float(reader.get(raw, "created", (int, float))),
            targets=targets,
            created_dirs=[self._key(reader, k) for k in reader.get(raw, "created_dirs", list)],
            kind=reader.choice(raw, "kind", KINDS),
            reverts=_txids(reader, reader.get(raw, "reverts", list)),
            committed=reader.get(raw, "committed", bool),
            session=_session(reader, raw),
            legacy=reader.legacy,
        )
        if journal.txid != txid:
            raise reader.fail("its txid is not its name")
        if key.endswith(".record") and not journal.committed:
            raise reader.fail("a history record whose journal is not committed")
        spans = reader.get(raw, "blobs", dict)
        journal.pre_images = _images(reader, reader.get(spans, "pre", dict), body, len(targets))
        journal.post_images = _images(reader, reader.get(spans, "post", dict), body, len(targets))
        in_body = sum(len(blob) for blob in (*journal.pre_images.values(), *journal.post_images.values()))
        kept = reader.get(spans, "kept", dict, optional=True)
        if kept is not None:
            self._read_kept(reader, journal, kept)
        _check_images(reader, journal, in_body, len(body))
        return journal

    def _read_kept(self, reader: _Reader, journal: Journal, kept: dict[str, Any]) -> None:
        """The pre-image a history record keeps in its ``.pre`` file, read and checked against
        the length and digest the record gives (that file is input like any record)."""
        if not journal.committed or len(kept) != 1:
            raise reader.fail("a kept pre-image outside a history record")
        (index_text, span), count = next(iter(kept.items())), len(journal.targets)
        if not (index_text.isdigit() and int(index_text) < count) or int(index_text) in journal.pre_images:
            raise reader.fail("a kept pre-image names no target")
        if not (isinstance(span, list) and len(span) == 2 and isinstance(span[0], int) and span[0] >= 0):
            raise reader.fail("bad kept pre-image span")
        length, sha = span
        key = self.pre_key(journal.txid)
        try:
            blob, _ = self.storage.read(key, limit=length)
        except (NotFound, NotRegularFile, IsADirectory):
            raise reader.fail(f"its pre-image file {self.display(key)} is missing") from None
        except TooLarge:
            raise reader.fail(f"its pre-image file {self.display(key)} is larger than recorded") from None
        if len(blob) != length or not isinstance(sha, str) or reader.digest(blob) != sha:
            raise reader.fail(f"its pre-image file {self.display(key)} does not hold the pre-image (digest mismatch)")
        journal.kept_pre = int(index_text)
        journal.pre_images[journal.kept_pre] = blob

    def _key(self, reader: _Reader, raw: Any) -> str:
        if not isinstance(raw, str) or not self.key_ok(raw):
            raise reader.fail(f"the key {raw!r} is outside the workspace")
        return raw

    def _target(self, reader: _Reader, raw: Any) -> TargetRecord:
        return TargetRecord(
            key=self._key(reader, reader.get(raw, "key", str)),
            before=reader.choice(raw, "before", _STATES),
            after=reader.choice(raw, "after", _STATES),
            before_version=reader.get(raw, "before_version", str, optional=True),
            before_mode=reader.get(raw, "before_mode", int, optional=True),
            after_sha=reader.sha(raw, "after_sha", optional=True),
            after_mode=reader.get(raw, "after_mode", int, optional=True),
        )


@functools.lru_cache(maxsize=4096)
def _record_name(name: str) -> tuple[str, str] | None:
    """``(txid, suffix)`` of a record's file name, ``None`` for any other name. Memoized: every
    commit lists the same names again (a history of 50 records is 100 of them)."""
    txid, dot, suffix = name.partition(".")
    if not (dot and suffix in _SUFFIXES and _is_txid(txid)):
        return None
    return txid, suffix


def _txids(reader: _Reader, raw: list[Any]) -> list[str]:
    if not all(isinstance(t, str) and _is_txid(t) for t in raw):
        raise reader.fail("field 'reverts' holds something that is not a txid")
    return list(raw)


def _session(reader: _Reader, raw: Any) -> str | None:
    """The optional ``session`` field (records written before sessions lack it)."""
    value = reader.get(raw, "session", str, optional=True)
    if value is not None and not valid_session_id(value):
        raise reader.fail("field 'session' is not a session id")
    return value  # type: ignore[no-any-return]


def _json(data: bytes, reader: _Reader) -> Any:
    try:
        return recordjson.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise reader.fail("not valid JSON") from None


def _split_journal(data: bytes, reader: _Reader) -> tuple[bytes, memoryview]:
    if not reader.format(data, JOURNAL_MAGIC):
        raise reader.fail("not a vfs journal")
    line_end = data.find(b"\n", len(JOURNAL_MAGIC), len(JOURNAL_MAGIC) + 64)
    parts = data[len(JOURNAL_MAGIC) : line_end].split(b" ") if line_end > 0 else []
    if len(parts) != 2 or not parts[0].isdigit() or not is_lower_hex(parts[1].decode("ascii", "replace"), 32):
        raise reader.fail("bad header line")
    length = int(parts[0])
    header = data[line_end + 1 : line_end + 1 + length]
    if length > _MAX_HEADER or len(header) != length:
        raise reader.fail("truncated header")
    if reader.digest(header).encode() != parts[1]:
        raise reader.fail("header digest mismatch")
    return header, memoryview(data)[line_end + 1 + length :]


def _images(reader: _Reader, spans: dict[str, Any], body: memoryview, count: int) -> dict[int, bytes]:
    images: dict[int, bytes] = {}
    for index_text, span in spans.items():
        if not (index_text.isdigit() and int(index_text) < count):
            raise reader.fail("an image names no target")
        if not (isinstance(span, list) and len(span) == 3):
            raise reader.fail("bad image span")
        offset, length, sha = span
        if not (isinstance(offset, int) and isinstance(length, int) and offset >= 0 and length >= 0):
            raise reader.fail("bad image span")
        if offset + length > len(body):
            raise reader.fail("truncated")
        blob = bytes(body[offset : offset + length])
        if not isinstance(sha, str) or reader.digest(blob) != sha:
            raise reader.fail(f"digest mismatch in the image of target {index_text}")
        images[int(index_text)] = blob
    return images


def _check_images(reader: _Reader, journal: Journal, in_body: int, body_length: int) -> None:
    """Every image a target needs is there, post-images are what the commit meant to write, and
    the body holds nothing else."""
    for index, target in enumerate(journal.targets):
        if (target.before == "file") != (index in journal.pre_images):
            raise reader.fail(f"target {index} has no pre-image")
        if (target.after == "file") != (target.after_sha is not None):
            raise reader.fail(f"target {index} has no post-image digest")
        post = journal.post_images.get(index)
        if post is not None and journal.digest(post) != target.after_sha:
            raise reader.fail(f"the post-image of target {index} is not what the commit wrote")
    if in_body != body_length:
        raise reader.fail("trailing bytes")
