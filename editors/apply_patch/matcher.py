"""Locating chunks in a file (Codex's ``seek_sequence``) and rewriting its lines.

Matching follows Codex exactly: chunks are searched forward from where the previous one ended,
the ``@@`` anchor first; four passes (exact, right-trimmed, trimmed, trimmed with typographic
punctuation folded to ASCII), each over every candidate position before the next; ``*** End of
File`` tries only the last window; a pattern ending with an empty line is retried without it.

The search goes forward (a C-level scan from where the previous chunk ended, plus a set of a
pass's keys once it has missed), so a patch with many chunks on a large file costs about one pass
over the file per leniency level, not one per chunk.

Fast path (:func:`apply_chunks_bytes`, what the applier calls): when the file has LF endings
only and every chunk is found by its exact lines, the chunks are located with ``bytes.find`` on the
file's bytes and the result is assembled from zero-copy slices: no decoded text and no line
objects (several times faster on large files, and the peak is the input plus the output).
Anything else falls back to the line model below, which then decides everything afresh, so the
results and errors are the general path's own.

Line-ending model (Codex's preserve mode, ours always): ``\\r\\n``, lone ``\\r`` and ``\\n`` each end
a line; each line keeps its own ending; inserted lines take the file's first-seen ending (LF if
none); the result always ends with a line break. **Ours**: a UTF-8 BOM is not part of the first
line (ignored for matching, kept in the output).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from backends.values import value
from editors.apply_patch.errors import ApplyPatchError
from editors.apply_patch.parser import Chunk, rust_trim, rust_trim_end

BOM = "\ufeff"
_EOL = r"(\r\n|\r|\n)"  # a line break, for re.split (mixed line endings only)

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys([0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212], "-"),
        **dict.fromkeys([0x2018, 0x2019, 0x201A, 0x201B], "'"),
        **dict.fromkeys([0x201C, 0x201D, 0x201E, 0x201F], '"'),
        **dict.fromkeys(
            [0x00A0, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x202F, 0x205F, 0x3000],
            " ",
        ),
    }
)


def normalise_punctuation(line: str) -> str:
    """Codex's last-pass key: trimmed, typographic dashes/quotes/spaces folded to ASCII."""
    return rust_trim(line).translate(_PUNCTUATION)


def _identity(line: str) -> str:
    return line


# The four passes, strictest first.
PASSES: tuple[Callable[[str], str], ...] = (_identity, rust_trim_end, rust_trim, normalise_punctuation)

Replacement = tuple[int, int, list[str]]
# Where an edit landed, in lines (0-based): (old_start, old_len, new_start, new_len). Kept for the
# diff card (:class:`LineHunks`): no second diff of the file.
LineHunk = tuple[int, int, int, int]
#: Where lines start, ``(line, offset)`` sorted by line, in the old bytes and in the new (as
#: editors.diffcard.Marks): a diff card reads the lines around each hunk from there.
Marks = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]


class LineHunks:
    """Where an update's edits landed (:data:`LineHunk` each), worked out on first use (:meth:`get`).

    The fast path knows its edits as byte offsets; their line numbers take a count of the line
    breaks up to each edit, one pass over the whole file (~3.5 ms on a 5 MB file, half as long as
    all the matching), which only a diff card or a location needs: ``vfs apply`` without ``--diff`` never
    asks for it. That pass also gives where each hunk starts in both files (:meth:`marks`). The
    general path has the hunks anyway and gives them as they are (no marks).
    """

    __slots__ = ("_hunks", "_make", "_marks")

    def __init__(
        self, hunks: Sequence[LineHunk] = (), make: Callable[[], tuple[list[LineHunk], Marks]] | None = None
    ) -> None:
        self._hunks: tuple[LineHunk, ...] | None = tuple(hunks) if make is None else None
        self._marks: Marks = ((), ())
        self._make = make

    def get(self) -> tuple[LineHunk, ...]:
        if self._hunks is None:
            assert self._make is not None
            hunks, self._marks = self._make()
            self._hunks, self._make = tuple(hunks), None
        return self._hunks

    def marks(self) -> Marks:
        self.get()
        return self._marks

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LineHunks) and self.get() == other.get()

    def __hash__(self) -> int:  # by value, as the tuple it stands for (a frozen Step stays hashable)
        return hash(self.get())

    def __repr__(self) -> str:
        return f"LineHunks({self.get()!r})"


@value
class SourceText:
    """A text file as lines: ``texts[i]`` + ``endings[i]`` (``""`` only for an unterminated last line)."""

    texts: list[str]
    endings: list[str]
    preferred: str = "\n"
    bom: bool = False

    @classmethod
    def parse(cls, text: str) -> SourceText:
        bom = text.startswith(BOM)
        if bom:
            text = text[1:]
        if not text:
            return cls([], [], "\n", bom)
        if "\r" not in text:  # all LF: the common case, much faster than the regex
            texts = text.split("\n")
            endings = ["\n"] * (len(texts) - 1)
        elif text.count("\r") == text.count("\r\n") == text.count("\n"):  # all CRLF
            texts = text.split("\r\n")
            endings = ["\r\n"] * (len(texts) - 1)
        else:  # mixed, or lone CR
            import re  # (rare: not on the import path of `vfs apply`)

            parts = re.split(_EOL, text)
            texts = parts[0::2]
            endings = parts[1::2]
        if texts[-1] == "":
            texts.pop()  # the text ended with a line break: no unterminated last line
        else:
            endings.append("")
        preferred = endings[0] if endings and endings[0] else "\n"
        return cls(texts, endings, preferred, bom)

    def render(self) -> str:
        endings = self.endings
        if endings and endings[-1] and endings.count(endings[0]) == len(endings):
            # One line ending throughout (the common case): a single join, no interleaving.
            body = endings[0].join(self.texts) + endings[0]
        else:
            parts: list[str] = [""] * (2 * len(self.texts))
            parts[0::2] = self.texts
            parts[1::2] = endings
            body = "".join(parts)
        return BOM + body if self.bom else body

    def replaced(self, replacements: Sequence[Replacement]) -> SourceText:
        """A copy with the replacements (sorted by start, non-overlapping) applied.

        New lines take the preferred ending; any line left without an ending gets one, so the
        result always ends with a line break (Codex's behaviour).
        """
        texts: list[str] = []
        endings: list[str] = []
        cursor = 0
        preferred = self.preferred
        for start, old_len, new_lines in replacements:
            if start < cursor:  # pragma: no cover - compute_replacements never produces overlaps
                raise AssertionError("overlapping replacements")
            texts.extend(self.texts[cursor:start])
            endings.extend(self.endings[cursor:start])
            texts.extend(new_lines)
            endings.extend([preferred] * len(new_lines))
            cursor = start + old_len
        texts.extend(self.texts[cursor:])
        endings.extend(self.endings[cursor:])
        if self.endings and not self.endings[-1]:
            # The unterminated last line may have moved inward: every line ends with a break now.
            endings = [ending or preferred for ending in endings]
        return SourceText(texts, endings, preferred, self.bom)


class LineIndex:
    """Per-pass line keys of a file, built lazily, for a fast forward search.

    Candidates come from a C-level ``list.index`` scan for the pattern's longest key, forward from
    where the previous chunk ended, so a patch whose chunks all match costs one pass over the file
    in all. After a pass has missed once, it also keeps the set of its keys, so that a pattern
    with a line that occurs nowhere in the file is rejected at once instead of by a scan to the
    end (no quadratic cost when many chunks need a lenient pass).
    """

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines if isinstance(lines, list) else list(lines)
        self._keys: dict[int, list[str]] = {}
        self._key_sets: dict[int, frozenset[str]] = {}

    def keys(self, level: int) -> list[str]:
        keys = self._keys.get(level)
        if keys is None:
            keys = self.lines if level == 0 else list(map(PASSES[level], self.lines))
            self._keys[level] = keys
        return keys

    def key_set(self, level: int) -> frozenset[str]:
        key_set = self._key_sets.get(level)
        if key_set is None:
            key_set = frozenset(self.keys(level))
            self._key_sets[level] = key_set
        return key_set

    def find(self, pattern: Sequence[str], start: int, level: int) -> int | None:
        """The first ``i >= start`` where ``pattern`` matches at this leniency level."""
        wanted = list(pattern) if level == 0 else list(map(PASSES[level], pattern))
        keys = self.keys(level)
        width = len(wanted)
        last = len(keys) - width
        if start > last:
            return None
        if width == 1:
            try:
                found = keys.index(wanted[0], start, last + 1)
            except ValueError:
                return None
            return found
        present = self._key_sets.get(level)  # built after this pass's first miss
        if present is not None and not all(key in present for key in wanted):
            return None
        # Scan for the longest key of the pattern (likely the rarest), then verify the window.
        offset = max(range(width), key=lambda k: len(wanted[k]))
        anchor = wanted[offset]
        position = start + offset
        stop = last + offset + 1
        while True:
            try:
                position = keys.index(anchor, position, stop)
            except ValueError:
                if present is None:
                    self.key_set(level)
                return None
            at = position - offset
            if keys[at : at + width] == wanted:
                return at
            position += 1


def _window_matches(lines: Sequence[str], pattern: Sequence[str], at: int, level: int) -> bool:
    key_of = PASSES[level]
    return all(key_of(lines[at + k]) == key_of(line) for k, line in enumerate(pattern))


def locate(
    lines: Sequence[str],
    pattern: Sequence[str],
    start: int,
    eof: bool,
    index: LineIndex | None = None,
) -> tuple[int, int] | None:
    """Codex's ``seek_sequence`` with the pass that matched: ``(position, level)`` or None."""
    if not pattern:
        return start, 0
    if len(pattern) > len(lines):
        return None
    last = len(lines) - len(pattern)
    if eof:
        # Only the last window is tried (if it is not before `start`).
        at = max(last, start)
        if at > last:
            return None
        for level in range(len(PASSES)):
            if _window_matches(lines, pattern, at, level):
                return at, level
        return None
    if start > last:
        return None
    if index is None:
        index = LineIndex(lines)
    for level in range(len(PASSES)):
        found = index.find(pattern, start, level)
        if found is not None:
            return found, level
    return None


def seek_sequence(
    lines: Sequence[str],
    pattern: Sequence[str],
    start: int,
    eof: bool,
    index: LineIndex | None = None,
) -> int | None:
    """Codex's ``seek_sequence``: first position ``>= start`` where ``pattern`` matches, or None."""
    found = locate(lines, pattern, start, eof, index)
    return None if found is None else found[0]


def compute_replacements(
    lines: Sequence[str],
    chunks: Sequence[Chunk],
    path: str,
    index: LineIndex | None = None,
    notes: list[str] | None = None,
) -> list[Replacement]:
    """Where each chunk goes, as ``(start, old_len, new_lines)`` sorted by start.

    **Ours**: every ``@@`` anchor of a chunk is searched in turn; a pure addition with an anchor
    (and no ``*** End of File``) is inserted right after its last anchor. The recoveries of
    :mod:`editors.apply_patch.placement` (indentation maps, repeats, copied line numbers, ``...``,
    chunk order, bad ``@@`` lines) apply where Codex would fail or write a wrong edit; what they
    did is appended to ``notes``.
    """
    from editors.apply_patch.placement import Placer  # (the layer above the search primitives)

    index = index if index is not None else LineIndex(lines)

    def place_all(placer: Placer) -> None:
        for number, chunk in enumerate(chunks, 1):
            placer.place(number, chunk, len(chunks))

    placer = Placer(lines, path, index)
    try:
        place_all(placer)
    except ApplyPatchError:
        if not placer.present:
            raise
        # A chunk was taken for one already in the file (a retry), and a later chunk is then not
        # where a retry would have it: not a repeat of this patch. Placed again as Codex places
        # them, the present lines written again as it writes them.
        placer = Placer(lines, path, index, repeats=False)
        place_all(placer)
    placer.finish()
    if notes is not None:
        notes.extend(placer.notes)
    return placer.in_file_order()


def apply_chunks(
    text: str,
    chunks: Sequence[Chunk],
    path: str,
    notes: list[str] | None = None,
    *,
    hunks: list[LineHunk] | None = None,
) -> str:
    """The new content of a text file after an update's chunks (errors name ``path``).

    ``notes``: if given, gets what a recovery did; ``hunks``: where each edit landed (see :data:`LineHunk`).
    """
    source = SourceText.parse(text)
    replacements = compute_replacements(source.texts, chunks, path, notes=notes)
    if hunks is not None:
        hunks.extend(_line_hunks(replacements, len(source.texts), bool(source.endings) and not source.endings[-1]))
    return source.replaced(replacements).render()


def _line_hunks(replacements: Sequence[Replacement], n_lines: int, unterminated: bool) -> list[LineHunk]:
    """The replacements as line hunks; an unterminated last line that gains its line break is one too."""
    out: list[LineHunk] = []
    delta = 0
    for start, old_len, new_lines in replacements:
        if old_len or new_lines:
            out.append((start, old_len, start + delta, len(new_lines)))
        delta += len(new_lines) - old_len
    if unterminated:
        last = n_lines - 1
        tail = out[-1] if out else None
        if tail is not None and tail[0] <= last < tail[0] + tail[1]:
            return out
        if tail is not None and tail[0] == n_lines:  # an addition at the end: it takes the last line in
            out[-1] = (last, 1, tail[2] - 1, tail[3] + 1)
        else:
            out.append((last, 1, last + delta, 1))
    return out


# -- fast path: exact matches in an LF file, on the bytes themselves ---------------------------------

_BOM_BYTES = BOM.encode("utf-8")


def _find_lines(data: bytes, body: bytes, cursor: int, base: int) -> int:
    """Offset of the first line start >= ``cursor`` where ``body`` (whole lines, each ending with
    ``\n``) occurs in ``data``; -1 if none. ``cursor`` is a line start: ``base`` (the first line)
    or just after a ``\n``. UTF-8 is self-synchronising, so this finds what a search of the decoded
    lines would find."""
    if data.startswith(body, cursor):  # (where a chunk usually is: right after its anchor)
        return cursor
    needle = b"\n" + body  # (a line start after the cursor)
    # bytes.find of a needle of 6 bytes or more in a large file takes the two-way search, whose
    # set-up costs ~10 instructions per needle byte (~3,000 for a chunk's lines) and its scan ~1
    # per file byte: the search is for the needle's first bytes, each hit checked in full; after
    # a few hits that are not the needle (a file of repeated lines), for the whole needle.
    key = needle[:_KEY]
    hit = data.find(key, cursor)
    for _ in range(_TRIES):
        if hit < 0 or data.startswith(needle, hit):
            return hit + 1 if hit >= 0 else -1
        hit = data.find(key, hit + 1)
    found = data.find(needle, hit) if hit >= 0 else -1
    return found + 1 if found >= 0 else -1


_KEY, _TRIES = 24, 8


def _joined(lines: Sequence[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


#: ``data[start:end]`` becomes ``new`` (offsets in the file's bytes).
ByteEdit = tuple[int, int, bytes]
#: A file's new bytes as pieces written back to back: views of the spans of the old bytes that
#: stay, and the new bytes between them (see :func:`apply_exact_pieces`).
Pieces = list[bytes | memoryview]
#: Where a chunk's old lines were found (a byte offset), and the chunk.
Placed = tuple[int, Chunk]


class _Fallback(Exception):
    """Something only the general path decides: it then redoes everything."""


def apply_exact_bytes(data: bytes, chunks: Sequence[Chunk], *, hunks: list[LineHunk] | None = None) -> bytes | None:
    """:func:`apply_exact_pieces`, joined."""
    pieces = apply_exact_pieces(data, chunks, hunks=hunks)
    return None if pieces is None else b"".join(pieces)


def apply_exact_pieces(data: bytes, chunks: Sequence[Chunk], *, hunks: list[LineHunk] | None = None) -> Pieces | None:
    """The fast path of :func:`apply_chunks_bytes`: every chunk found by its exact lines in an LF
    file (``data`` must be valid UTF-8).

    Works on the bytes themselves (``bytes.find`` of whole encoded lines) and returns the result
    as pieces: zero-copy views of the spans that stay, and the new bytes. No decoded text, no line
    objects and no second copy of the file: the pieces are hashed and written where they are.
    Returns ``None`` as soon as anything needs the general path (a CR in the file, no final line
    break, a chunk not found exactly, ``*** End of File``): the general path then redoes
    everything, so results and errors are always exactly its own.
    """
    found = _exact(data, chunks)
    if found is None:
        return None
    pieces, where = found
    if hunks is not None:
        hunks.extend(where.get())
    return pieces


def _exact(data: bytes, chunks: Sequence[Chunk]) -> tuple[Pieces, LineHunks] | None:
    """:func:`apply_exact_pieces`, with where the edits landed (counted on first use)."""
    base = len(_BOM_BYTES) if data.startswith(_BOM_BYTES) else 0
    if len(data) == base or b"\r" in data or not data.endswith(b"\n"):
        return None
    try:
        placed, edits = _exact_edits(data, chunks, base)
        pieces = _assembled(data, edits)
    except (_Fallback, UnicodeEncodeError):  # (a patch line with a lone surrogate: the general path decides)
        return None
    return pieces, LineHunks(make=lambda: _byte_hunks(data, _line_edits(placed), base))


def _exact_edits(data: bytes, chunks: Sequence[Chunk], base: int) -> tuple[list[Placed], list[ByteEdit]]:
    """Where each chunk was found, and its edit: its old lines' bytes become its new lines' (the
    context lines inside are the same bytes either way: the file's lines equal the chunk's), in
    file order; ``_Fallback`` where an exact reading is not certain."""
    placed: list[Placed] = []
    edits: list[ByteEdit] = []
    cursor = base  # offset of the line where the search resumes (Codex's line_index)
    appended = False  # whether lines were added at the end of the file
    for chunk in chunks:
        cursor = _after_anchors(data, chunk, cursor, base)
        new = _joined(chunk.new_lines)
        if not chunk.old_lines:  # (Ours: with an anchor, right after it; Codex: at the end)
            at = cursor if _anchored(chunk) and not chunk.is_end_of_file else len(data)
            if new and (data.startswith(new, at) if at < len(data) else data.endswith(new)):
                raise _Fallback  # its lines are there already: maybe a repeat (the general path decides)
            appended = appended or at == len(data)
            edits.append((at, at, new))
            placed.append((at, chunk))
            continue
        if chunk.is_end_of_file:
            raise _Fallback
        body = ("\n".join(chunk.old_lines) + "\n").encode("utf-8")
        at = _find_lines(data, body, cursor, base)
        if at < 0:
            raise _Fallback
        if len(chunk.context_line_indices) == len(chunk.old_lines) and _inserted_there(data, at, chunk, new, base):
            raise _Fallback  # an insertion whose lines are there already: maybe a repeat (general path)
        cursor = at + len(body)
        if appended and cursor == len(data):
            # The general path's edit for `+` lines after this chunk's last context line would
            # come after the lines added at the end before it; this edit's (the whole chunk) before.
            raise _Fallback
        edits.append((at, cursor, new))
        placed.append((at, chunk))
    edits.sort(key=_start)
    return placed, edits


def _inserted_there(data: bytes, at: int, chunk: Chunk, new: bytes, base: int) -> bool:
    """Whether a chunk that only inserts, found at ``at``, has its new lines in the file where they
    would go (the general path's test for a repeat, Placer._insertion_present; this is looser: no
    check for a non-blank line): its ``+`` lines before its first context line go before ``at``."""
    start = at
    for _ in range(chunk.context_line_indices[0][1]):  # (a line back per `+` line before the context)
        if start <= base:
            return True  # (the general path says no, and decides)
        newline = data.rfind(b"\n", base, start - 1)
        start = newline + 1 if newline >= 0 else base
    return data.startswith(new, start)


def _start(edit: ByteEdit) -> int:
    return edit[0]


def _anchored(chunk: Chunk) -> bool:
    """Whether the chunk has an ``@@`` anchor (without building :attr:`Chunk.contexts`)."""
    return chunk.change_context is not None or bool(chunk.extra_contexts)


def _after_anchors(data: bytes, chunk: Chunk, cursor: int, base: int) -> int:
    """Where the chunk's lines are searched from: after its ``@@`` anchors, each found in turn."""
    if _anchored(chunk):
        for context in chunk.contexts:
            body = (context + "\n").encode("utf-8")
            at = _find_lines(data, body, cursor, base)
            if at < 0:
                raise _Fallback
            cursor = at + len(body)
    if chunk.unprefixed:
        raise _Fallback  # a line read as context only if the chunk matches once: the general path checks
    return cursor


def _line_edits(placed: Sequence[Placed]) -> list[ByteEdit]:
    """The chunks' edits one per run of changed lines, as the general path's replacements (the
    context lines left out), in file order: what the diff card's line numbers are counted from."""
    edits: list[ByteEdit] = []
    for at, chunk in placed:
        old_lines, new_lines = chunk.old_lines, chunk.new_lines
        if not old_lines:
            edits.append((at, at, _joined(new_lines)))
            continue
        offsets = [at]  # each line's start, then the end
        for line in old_lines:
            offsets.append(offsets[-1] + len(line.encode("utf-8")) + 1)
        old_start = new_start = 0
        for old_context, new_context in chunk.context_line_indices:
            if old_start != old_context or new_start != new_context:
                edits.append((offsets[old_start], offsets[old_context], _joined(new_lines[new_start:new_context])))
            old_start, new_start = old_context + 1, new_context + 1
        if old_start != len(old_lines) or new_start != len(new_lines):
            edits.append((offsets[old_start], offsets[len(old_lines)], _joined(new_lines[new_start:])))
    edits.sort(key=_start)
    return edits


def _assembled(data: bytes, edits: Sequence[ByteEdit]) -> Pieces:
    """The new bytes as pieces: the spans between the edits (views of ``data``) and the edits' bytes."""
    view = memoryview(data)
    pieces: Pieces = []
    done = 0
    for start, end, new in edits:
        if start < done:
            raise _Fallback  # overlapping edits: the general path reports them
        if start > done:
            pieces.append(view[done:start])
        if new:
            pieces.append(new)
        done = end
    pieces.append(view[done:])
    return pieces


def _byte_hunks(data: bytes, edits: Sequence[ByteEdit], base: int) -> tuple[list[LineHunk], Marks]:
    """The fast path's byte edits (whole LF lines) as line hunks, and where each starts in the old
    bytes and in the new: one count of line breaks in all."""
    out: list[LineHunk] = []
    old_marks: list[tuple[int, int]] = []
    new_marks: list[tuple[int, int]] = []
    line = delta = shift = 0  # shift: how far the new bytes are ahead of the old (bytes)
    at = base
    for start, end, new in edits:
        line += data.count(b"\n", at, start)
        old_len, new_len = data.count(b"\n", start, end), new.count(b"\n")
        if old_len or new_len:
            out.append((line, old_len, line + delta, new_len))
            # (a file's first line starts at 0, before its BOM: the edit of that line starts after it)
            old_marks.append((line, start if line else 0))
            new_marks.append((line + delta, start + shift if line + delta else 0))
        line += old_len
        delta += new_len - old_len
        shift += len(new) - (end - start)
        at = end
    return out, (tuple(old_marks), tuple(new_marks))


def apply_exact(text: str, chunks: Sequence[Chunk]) -> str | None:
    """:func:`apply_exact_bytes` for a text (tests and callers holding a ``str``)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    result = apply_exact_bytes(data, chunks)
    return None if result is None else result.decode("utf-8")


def apply_chunks_bytes(
    data: bytes,
    chunks: Sequence[Chunk],
    path: str,
    notes: list[str] | None = None,
) -> tuple[bytes | Pieces, LineHunks]:
    """:func:`apply_chunks` on the bytes of a file that is valid UTF-8: the fast path first, whose
    result is :data:`Pieces` (not joined: see :func:`apply_exact_pieces`); the general path's is
    bytes. With it, where each edit landed (:class:`LineHunks`).
    """
    fast = _exact(data, chunks)
    if fast is not None:
        return fast
    found: list[LineHunk] = []
    out = apply_chunks(data.decode("utf-8"), chunks, path, notes, hunks=found).encode("utf-8")
    return out, LineHunks(found)
