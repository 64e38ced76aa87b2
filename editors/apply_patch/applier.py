"""Parsed patch + a way to read files -> the plan of what to write (a pure function, no I/O of its own).

Codex applies hunks one after the other to the disk; we compute every hunk in memory first, in
the same order and with the same error texts, so that the caller can commit the whole plan as one
transaction (or nothing). Several operations on one path are folded in patch order: each sees the
result of the earlier ones, as in Codex's standalone engine.

The reader is called with resolved paths and returns the file's bytes, or ``None`` when nothing is
there; it raises ``IsADirectoryError`` for a directory and ``NotADirectoryError`` when a parent is
not a directory. Anything else it raises (policy, conflicts, I/O) propagates unchanged.

As in Codex, error texts name the resolved path (Codex: the absolute path; the tool: the
model-facing path) and the success summary names the paths as written in the patch.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from backends.values import field, value
from editors.apply_patch.errors import (
    AlreadyPart,
    ApplyPatchError,
    PatchAlreadyApplied,
    PatchDeleteFailed,
    PatchEmpty,
    PatchFileNotFound,
    PatchReadFailed,
    PatchWriteFailed,
)
from editors.apply_patch.matcher import LineHunk, LineHunks, Pieces, apply_chunks_bytes
from editors.apply_patch.parser import AddFile, DeleteFile, Patch, UpdateFile

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Literal

Reader = Callable[[str], "bytes | None"]
Resolver = Callable[[str], str]
#: A file's new bytes: bytes, or pieces not joined yet (an update's fast path, see ``matcher.Pieces``).
Content = bytes | Pieces

SUCCESS_HEADER = "Success. Updated the following files:"
NO_FILES_MODIFIED = "No files were modified."


@value(frozen=True)
class Step:
    """One operation of the plan, in patch order. Paths are resolved; ``display`` as written.

    ``move``: ``path`` is renamed to ``dest`` and ``dest`` then holds ``data``. :attr:`hunks` (update
    and move): where the chunks landed in the file as it was before this step (the diff card's
    source; ``where`` works them out on first use). ``data`` may be pieces (:data:`Content`):
    ``vfs`` writes them without joining them.
    """

    kind: Literal["add", "update", "delete", "move"]
    path: str
    display: str
    data: Content | None = None
    dest: str | None = None
    dest_display: str | None = None
    where: LineHunks = field(default_factory=LineHunks)

    @property
    def hunks(self) -> tuple[LineHunk, ...]:
        return self.where.get()


@value(frozen=True)
class FileChange:
    """The net effect of the patch on one file: ``before`` / ``after`` bytes (``None``: absent).

    ``content`` is the new bytes as the plan holds them (maybe pieces); :attr:`after` joins them
    on first use, so a caller that only commits the plan never holds two copies of a large file.
    """

    path: str
    display: str
    before: bytes | None
    content: Content | None

    @property
    def after(self) -> bytes | None:
        if isinstance(self.content, list):
            object.__setattr__(self, "content", b"".join(self.content))  # once: the pieces go
        assert not isinstance(self.content, list)
        return self.content

    @property
    def action(self) -> Literal["add", "update", "delete"]:
        if self.before is None:
            return "add"
        return "delete" if self.after is None else "update"


@value(frozen=True)
class PatchPlan:
    steps: tuple[Step, ...]
    changes: tuple[FileChange, ...]
    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    # **Ours**: what a recovery did (a re-indentation, stripped line numbers, ...), for the model.
    notes: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """Codex's stdout on success, byte for byte (ends with a line break)."""
        return format_summary(self.added, self.modified, self.deleted)


def format_summary(added: tuple[str, ...], modified: tuple[str, ...], deleted: tuple[str, ...]) -> str:
    lines = [SUCCESS_HEADER]
    lines.extend(f"A {path}" for path in added)
    lines.extend(f"M {path}" for path in modified)
    lines.extend(f"D {path}" for path in deleted)
    return "\n".join(lines) + "\n"


def _default_resolve(path: str) -> str:
    return posixpath.normpath(path)


class _Files:
    """The files as the patch has left them so far: an overlay over the reader."""

    def __init__(self, read: Reader) -> None:
        self._read = read
        self.overlay: dict[str, Content | None] = {}
        self.before: dict[str, bytes | None] = {}
        self.display: dict[str, str] = {}
        self.order: list[str] = []
        # Indexes of the files the overlay holds (data not None), so that _implied() costs the
        # depth of a path instead of a scan of the overlay (quadratic in a patch of many files):
        # how many such keys have each "/"-terminated prefix, and each key without trailing "/".
        self._dir_prefixes: dict[str, int] = {}
        self._file_keys: dict[str, int] = {}

    def _note(self, key: str, display: str) -> None:
        if key not in self.display:
            self.display[key] = display
            self.order.append(key)

    def _index(self, key: str, delta: int) -> None:
        prefixes = self._dir_prefixes
        at = key.find("/")
        while at >= 0:
            prefix = key[: at + 1]
            prefixes[prefix] = prefixes.get(prefix, 0) + delta
            at = key.find("/", at + 1)
        stripped = key.rstrip("/")
        self._file_keys[stripped] = self._file_keys.get(stripped, 0) + delta

    def _implied(self, key: str) -> Literal["directory", "blocked"] | None:
        """What the patch's own files say about ``key``: a directory above them, or under a file."""
        # A file `other` with other.startswith(key.rstrip("/") + "/"): key is its directory.
        directory = self._dir_prefixes.get(key.rstrip("/") + "/", 0) > 0
        # A file `other` with key.startswith(other.rstrip("/") + "/"): key is under a file.
        blocked = False
        file_keys = self._file_keys
        at = key.find("/")
        while at >= 0 and not blocked:
            blocked = file_keys.get(key[:at], 0) > 0
            at = key.find("/", at + 1)
        if not (directory and blocked):
            return "directory" if directory else "blocked" if blocked else None
        return self._implied_in_order(key)  # both: the file the patch wrote first decides

    def _implied_in_order(self, key: str) -> Literal["directory", "blocked"] | None:
        prefix = key.rstrip("/") + "/"
        for other, data in self.overlay.items():
            if data is None:
                continue
            if other.startswith(prefix):
                return "directory"
            if key.startswith(other.rstrip("/") + "/"):
                return "blocked"
        return None

    def get(self, key: str, display: str) -> bytes | None:
        """Current bytes at ``key``; ``IsADirectoryError`` / ``NotADirectoryError`` as the reader."""
        if key in self.overlay:
            data = self.overlay[key]
            if isinstance(data, list):  # a later hunk reads what an update made: joined once
                data = self.overlay[key] = b"".join(data)
            return data
        implied = self._implied(key)
        if implied == "directory":
            raise IsADirectoryError(key)
        if implied == "blocked":
            raise NotADirectoryError(key)
        if key in self.before:  # read already (a later check of the same path): never read twice
            return self.before[key]
        data = self._read(key)
        self._note(key, display)
        self.before.setdefault(key, data)
        return data

    def set(self, key: str, display: str, data: Content | None) -> None:
        self._note(key, display)
        if key not in self.before:  # only reachable when the caller skipped get(): keep it honest
            self.get(key, display)
        was_file = self.overlay.get(key) is not None
        if was_file != (data is not None):
            self._index(key, 1 if data is not None else -1)
        self.overlay[key] = data


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Rust's Utf8Error texts (Python and Rust agree on where the invalid sequence is).
        if exc.reason == "unexpected end of data":
            detail = f"incomplete utf-8 byte sequence from index {exc.start}"
        else:
            detail = f"invalid utf-8 sequence of {exc.end - exc.start} bytes from index {exc.start}"
        raise PatchReadFailed(f"Failed to read file to update {path}: {detail}", path=path) from None


def _check_writable(files: _Files, key: str, display: str) -> None:
    """Codex's error when a file cannot be written at ``key`` (a directory, or under a file)."""
    try:
        files.get(key, display)
    except (IsADirectoryError, NotADirectoryError):
        raise PatchWriteFailed(f"Failed to write file {key}", path=key) from None


def plan_patch(patch: Patch, read: Reader, *, resolve: Resolver | None = None) -> PatchPlan:
    """Compute every file's new content, in patch order, without writing anything.

    Raises the Codex errors (``PatchEmpty``, ``PatchFileNotFound``, ``PatchContextNotFound``, ...)
    at the first hunk that fails, exactly where Codex would stop.
    """
    if not patch.hunks:
        raise PatchEmpty(NO_FILES_MODIFIED)
    planner = _Planner(patch, _Files(read), resolve or _default_resolve)
    for hunk in patch.hunks:
        if isinstance(hunk, AddFile):
            planner.add(hunk)
        elif isinstance(hunk, DeleteFile):
            planner.delete(hunk)
        elif isinstance(hunk, UpdateFile):
            planner.update(hunk)
        else:  # pragma: no cover - the parser only makes these three
            raise TypeError(f"unknown hunk {hunk!r}")
    return planner.plan()


class _Planner:
    """The plan being built, hunk by hunk: the files as the patch has changed them so far, the
    steps, Codex's summary lists, the notes of recoveries, and which parts are already present."""

    def __init__(self, patch: Patch, files: _Files, resolve: Resolver) -> None:
        self.patch, self.files, self.resolve = patch, files, resolve
        self.steps: list[Step] = []
        self.added: list[str] = []
        self.modified: list[str] = []
        self.deleted: list[str] = []
        self.notes: list[str] = []
        self.parts: list[AlreadyPart] = []  # per file: already present or not (a repeat, a retry)
        self.touched: dict[str, int] = {}  # how many hunks name each path (as source or destination)
        touched = self.touched
        for hunk in patch.hunks:
            for named in (hunk.path, getattr(hunk, "move_path", None)):
                if named:
                    key = resolve(named)
                    touched[key] = touched.get(key, 0) + 1

    def add(self, hunk: AddFile) -> None:
        files, key = self.files, self.resolve(hunk.path)
        _check_writable(files, key, hunk.path)
        data = hunk.contents.encode("utf-8")
        # Against the file before the patch, and only for a path no other hunk touches (an Add
        # File repeated, or followed by a Delete, inside one patch is Codex's business).
        if data and self.touched[key] == 1 and files.get(key, hunk.path) == data:
            self.parts.append((hunk.path, [(1, data.count(b"\n"))], True))
            return
        self.parts.append((hunk.path, [], False))
        files.set(key, hunk.path, data)
        self.steps.append(Step("add", key, hunk.path, data))
        self.added.append(hunk.path)

    def delete(self, hunk: DeleteFile) -> None:
        files, key = self.files, self.resolve(hunk.path)
        try:
            current = files.get(key, hunk.path)
        except (IsADirectoryError, NotADirectoryError):
            current = None
        if current is None:
            raise PatchDeleteFailed(f"Failed to delete file {key}", path=key)
        files.set(key, hunk.path, None)
        self.steps.append(Step("delete", key, hunk.path))
        self.deleted.append(hunk.path)

    def update(self, hunk: UpdateFile) -> None:
        files, key = self.files, self.resolve(hunk.path)
        try:
            data, hunks = _updated(files, key, hunk, self.notes)
        except PatchAlreadyApplied as exc:
            self.parts.extend((hunk.path, ranges, whole) for _, ranges, whole in exc.parts)
            if len(self.patch.hunks) == 1:
                raise
            return
        except ApplyPatchError as exc:
            _mention_present(exc, self.parts)
            raise
        self.parts.append((hunk.path, [], False))
        dest_key = self.resolve(hunk.move_path) if hunk.move_path is not None else None
        if hunk.move_path is None or dest_key == key:
            # **Ours**: a move onto the file itself is an in-place update (Codex deletes it). (No
            # _check_writable(): _updated() has just read the file at ``key`` through the same overlay.)
            files.set(key, hunk.path, data)
            self.steps.append(Step("update", key, hunk.path, data, where=hunks))
            self.modified.append(hunk.move_path if hunk.move_path is not None else hunk.path)
            return
        assert dest_key is not None
        _check_writable(files, dest_key, hunk.move_path)
        files.set(dest_key, hunk.move_path, data)
        files.set(key, hunk.path, None)
        self.steps.append(Step("move", key, hunk.path, data, dest_key, hunk.move_path, hunks))
        self.modified.append(hunk.move_path)

    def plan(self) -> PatchPlan:
        if any(ranges for _, ranges, _ in self.parts):
            raise already_applied(self.parts)
        files = self.files
        changes = tuple(
            FileChange(key, files.display[key], files.before.get(key), files.overlay[key])
            for key in files.order
            if key in files.overlay and not (files.before.get(key) is None and files.overlay[key] is None)
        )
        summary = (tuple(self.added), tuple(self.modified), tuple(self.deleted))
        return PatchPlan(tuple(self.steps), changes, *summary, tuple(self.notes))


def _under_a_file(files: _Files, key: str) -> bool:
    """Whether an ancestor of ``key`` is a file (only asked on the error path)."""
    child, parent = key, posixpath.dirname(key.rstrip("/"))
    while parent and parent != child:
        try:
            data = files.get(parent, parent)
        except NotADirectoryError:
            return True
        except (OSError, ValueError):  # a directory (IsADirectoryError), or outside the workspace
            return False
        if data is not None:
            return True
        child, parent = parent, posixpath.dirname(parent)
    return False


def _mention_present(exc: ApplyPatchError, parts: list[AlreadyPart]) -> None:
    """A patch that fails after parts already present: the model's text says which (Codex's stays)."""
    present = [display for display, ranges, _ in parts if ranges]
    if present:
        exc.message += "\n(Already present, so not the cause: the change to " + ", ".join(present) + ".)"


def already_applied(parts: list[AlreadyPart]) -> PatchAlreadyApplied:
    """One error for a patch some of whose parts are already in the files (nothing is written)."""
    lines = []
    for display, ranges, whole in parts:
        where = ", ".join(f"line {a}" if a == b else f"lines {a}-{b}" for a, b in ranges)
        if not ranges:
            lines.append(f"- {display}: not present yet")
        else:
            lines.append(f"- {display}: {'already present' if whole else 'partly present'} at {where}")
    complete = all(ranges and whole for _, ranges, whole in parts)
    head = "this change is already present" if complete else "part of this change is already present"
    message = f"{head}; nothing was changed:\n" + "\n".join(lines)
    if not complete:
        message += "\nSend only the parts that are not present yet."
    return PatchAlreadyApplied(message, parts=parts)


def _updated(files: _Files, key: str, hunk: UpdateFile, notes: list[str]) -> tuple[Content, LineHunks]:
    try:
        current = files.get(key, hunk.path)
    except IsADirectoryError:
        raise PatchReadFailed(f"Failed to read file to update {key}: path `{key}` is not a file", path=key) from None
    except NotADirectoryError:
        raise PatchReadFailed(f"Failed to read file to update {key}: Not a directory (os error 20)", path=key) from None
    if current is None:
        if _under_a_file(files, key):  # some stores say "absent" where a disk says ENOTDIR
            raise PatchReadFailed(f"Failed to read file to update {key}: Not a directory (os error 20)", path=key)
        raise PatchFileNotFound(
            f"Failed to read file to update {key}: No such file or directory (os error 2)", path=key
        )
    if not current.isascii():  # (an ASCII file is valid UTF-8: no need to decode it to know)
        _decode(current, key)  # Codex's error for a file that is not UTF-8; the text is not kept
    return apply_chunks_bytes(current, hunk.chunks, key, notes)
