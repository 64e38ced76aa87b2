"""Patch text -> plain records, reproducing Codex's parser exactly (see docs in the spec).

Codex (openai/codex, ``codex-rs/apply-patch``) trims the whole text with Rust's ``str::trim``,
splits it with ``str::lines``, checks the ``*** Begin Patch`` / ``*** End Patch`` boundaries (with
the heredoc leniency), re-joins the lines with ``\\n`` and feeds them through its line-by-line
state machine; the last line goes through ``finish``. This module does the same, in Python, with
Rust's whitespace set (never ``str.strip()`` or ``str.splitlines()``, which disagree with Rust).

**Ours**: consecutive ``@@`` lines are successive anchors of one chunk (Codex rejects the second
one with ``Unexpected line found in update hunk: '@@ ...'``).
"""

from __future__ import annotations

from backends.values import field, value
from editors.apply_patch.errors import PatchParseError

# Rust's char::is_whitespace: the Unicode White_Space property. Python's str.strip() also strips
# U+001C..U+001F (and not all of these), so the set is spelled out.
RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

BEGIN_PATCH_MARKER = "*** Begin Patch"
END_PATCH_MARKER = "*** End Patch"
ADD_FILE_MARKER = "*** Add File: "
DELETE_FILE_MARKER = "*** Delete File: "
UPDATE_FILE_MARKER = "*** Update File: "
MOVE_TO_MARKER = "*** Move to: "
EOF_MARKER = "*** End of File"
CHANGE_CONTEXT_MARKER = "@@ "
EMPTY_CHANGE_CONTEXT_MARKER = "@@"
ENVIRONMENT_ID_MARKER = "*** Environment ID:"
HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')

FIRST_LINE_ERROR = "The first line of the patch must be '*** Begin Patch'"
LAST_LINE_ERROR = "The last line of the patch must be '*** End Patch'"
NO_LINES_ERROR = "Update hunk does not contain any lines"


def rust_trim(text: str) -> str:
    """Rust's ``str::trim``."""
    return text.strip(RUST_WHITESPACE)


def rust_trim_end(text: str) -> str:
    """Rust's ``str::trim_end``."""
    return text.rstrip(RUST_WHITESPACE)


def rust_lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split on ``\\n``, drop the ``\\r`` of each ``\\r\\n``, no final empty piece.

    A ``\\r`` at the very end of the text (not followed by ``\\n``) stays, as in current Rust.
    """
    if not text:
        return []
    pieces = text.split("\n")
    ends_with_newline = pieces[-1] == ""
    if ends_with_newline:
        pieces.pop()
    if "\r" not in text:  # the common case: nothing to drop
        return pieces
    last = len(pieces) - 1
    return [
        piece[:-1] if piece.endswith("\r") and (index < last or ends_with_newline) else piece
        for index, piece in enumerate(pieces)
    ]


@value
class Chunk:
    """One ``@@`` section of an update: find ``old_lines`` (after the anchors), put ``new_lines``.

    ``change_context`` is Codex's single anchor; ``extra_contexts`` holds further anchors given on
    consecutive ``@@`` lines (**Ours**), each searched after the previous one.
    Context lines are in both ``old_lines`` and ``new_lines``.
    """

    change_context: str | None = None
    old_lines: list[str] = field(default_factory=list)
    new_lines: list[str] = field(default_factory=list)
    is_end_of_file: bool = False
    extra_contexts: list[str] = field(default_factory=list)
    # (index in old_lines, index in new_lines) of each line parsed as context (` ` or empty):
    # context lines are never rewritten, so their exact bytes and line endings survive.
    context_line_indices: list[tuple[int, int]] = field(default_factory=list)
    # **Ours** (``context_without_space``): (index in old_lines, Codex's parse error) of each line
    # that starts with none of ' ', '+', '-' and was read as a context line.
    unprefixed: list[tuple[int, PatchParseError]] = field(default_factory=list)

    @property
    def contexts(self) -> list[str]:
        """Every anchor, in the order they are searched."""
        if self.change_context is None:
            return list(self.extra_contexts)
        return [self.change_context, *self.extra_contexts]

    def add_context(self, context: str) -> None:
        if self.change_context is None:
            self.change_context = context
        else:
            self.extra_contexts.append(context)

    def push_context_line(self, line: str) -> None:
        self.context_line_indices.append((len(self.old_lines), len(self.new_lines)))
        self.old_lines.append(line)
        self.new_lines.append(line)

    def is_empty(self) -> bool:
        return not self.old_lines and not self.new_lines


@value
class AddFile:
    path: str
    contents: str = ""


@value
class DeleteFile:
    path: str


@value
class UpdateFile:
    path: str
    move_path: str | None = None
    chunks: list[Chunk] = field(default_factory=list)


Hunk = AddFile | DeleteFile | UpdateFile


@value
class Patch:
    """A parsed patch: its hunks in order, the optional environment id, the normalised text."""

    hunks: list[Hunk]
    environment_id: str | None = None
    text: str = ""
    notes: list[str] = field(default_factory=list)  # **Ours**: what a leniency of the parser did


def _check_boundaries(lines: list[str]) -> None:
    first = rust_trim(lines[0]) if lines else None
    last = rust_trim(lines[-1]) if lines else None
    if first == BEGIN_PATCH_MARKER and last == END_PATCH_MARKER:
        return
    if first is not None and first != BEGIN_PATCH_MARKER:
        raise PatchParseError(FIRST_LINE_ERROR)
    raise PatchParseError(LAST_LINE_ERROR)


def patch_lines(text: str) -> list[str]:
    """The normalised lines of a patch (trimmed, split, heredoc wrapper removed), boundaries checked."""
    return _normalised(text)[0]


def _normalised(text: str) -> tuple[list[str], str]:
    """:func:`patch_lines`, and the lines joined with ``\\n`` (:attr:`Patch.text`)."""
    trimmed = rust_trim(text)
    lines = rust_lines(trimmed)
    try:
        _check_boundaries(lines)
    except PatchParseError:
        if len(lines) >= 4 and lines[0] in HEREDOC_OPENERS and lines[-1].endswith("EOF"):
            inner = lines[1:-1]
            _check_boundaries(inner)
            return inner, "\n".join(inner)
        raise
    # Without CR, the trimmed text is its lines joined already (it ends with no line break).
    return lines, trimmed if "\r" not in trimmed else "\n".join(lines)


_NOT_STARTED, _STARTED, _ADD, _DELETE, _UPDATE, _ENDED = range(6)


def _invalid_header(trimmed: str, line_number: int) -> PatchParseError:
    return PatchParseError(
        f"'{trimmed}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        line_number,
    )


def _unexpected_update_line(line: str, line_number: int) -> PatchParseError:
    return PatchParseError(
        f"Unexpected line found in update hunk: '{line}'. Every line should start with "
        "' ' (context line), '+' (added line), or '-' (removed line)",
        line_number,
    )


class _Parser:
    """Codex's line state machine (``StreamingPatchParser``), fed one normalised line at a time."""

    def __init__(self, context_without_space: bool = False) -> None:
        self.context_without_space = context_without_space
        self.mode = _NOT_STARTED
        self.hunks: list[Hunk] = []
        self.add_parts: list[str] = []
        self.environment_id: str | None = None
        self.line_number = 0
        self.hunk_line_number = 0

    # -- helpers ---------------------------------------------------------------------------------

    def _close_add(self) -> None:
        if self.mode == _ADD and self.hunks and isinstance(self.hunks[-1], AddFile):
            self.hunks[-1].contents = "".join(self.add_parts)
        self.add_parts = []

    def _ensure_update_not_empty(self, line: str) -> None:
        last = self.hunks[-1] if self.hunks else None
        if not isinstance(last, UpdateFile):
            return
        if not last.chunks and self.mode == _UPDATE:
            raise PatchParseError(f"Update file hunk for path '{last.path}' is empty", self.hunk_line_number)
        if last.chunks and last.chunks[-1].is_empty():
            if line == END_PATCH_MARKER:
                raise PatchParseError(NO_LINES_ERROR, self.line_number)
            raise _unexpected_update_line(line, self.line_number)

    def _header(self, trimmed: str) -> bool:
        if self.mode == _STARTED and trimmed.startswith(ENVIRONMENT_ID_MARKER):
            if self.environment_id is not None:
                raise PatchParseError("apply_patch environment_id cannot be specified more than once")
            environment_id = rust_trim(trimmed[len(ENVIRONMENT_ID_MARKER) :])
            if not environment_id:
                raise PatchParseError("apply_patch environment_id cannot be empty")
            self.environment_id = environment_id
            return True
        hunk: Hunk
        if trimmed == END_PATCH_MARKER:
            self._ensure_update_not_empty(trimmed)
            self._close_add()
            self.mode = _ENDED
            return True
        if trimmed.startswith(ADD_FILE_MARKER):
            self._ensure_update_not_empty(trimmed)
            self._close_add()
            hunk, mode = AddFile(trimmed[len(ADD_FILE_MARKER) :]), _ADD
        elif trimmed.startswith(DELETE_FILE_MARKER):
            self._ensure_update_not_empty(trimmed)
            self._close_add()
            hunk, mode = DeleteFile(trimmed[len(DELETE_FILE_MARKER) :]), _DELETE
        elif trimmed.startswith(UPDATE_FILE_MARKER):
            self._ensure_update_not_empty(trimmed)
            self._close_add()
            hunk, mode = UpdateFile(trimmed[len(UPDATE_FILE_MARKER) :]), _UPDATE
            self.hunk_line_number = self.line_number
        else:
            return False
        self.hunks.append(hunk)
        self.mode = mode
        return True

    # -- one line --------------------------------------------------------------------------------

    def process(self, line: str) -> None:
        mode = self.mode
        if mode == _UPDATE:
            self._update_line(line)
            return
        trimmed = rust_trim(line)
        if mode == _NOT_STARTED:
            if trimmed == BEGIN_PATCH_MARKER:
                self.mode = _STARTED
                return
            raise PatchParseError(FIRST_LINE_ERROR)
        if mode == _ENDED:
            if trimmed:
                raise PatchParseError(LAST_LINE_ERROR)
            return
        if self._header(trimmed):
            return
        if mode == _ADD and line.startswith("+"):
            self.add_parts.append(line[1:])
            self.add_parts.append("\n")
            return
        raise _invalid_header(trimmed, self.line_number)

    def _update_line(self, line: str) -> None:
        update_line = rust_trim_end(line)
        if update_line.startswith("*** ") and self._header(update_line):  # (every header starts so)
            return
        hunk = self.hunks[-1]
        assert isinstance(hunk, UpdateFile)
        chunks = hunk.chunks
        last = chunks[-1] if chunks else None
        is_marker = update_line == EMPTY_CHANGE_CONTEXT_MARKER or update_line.startswith(CHANGE_CONTEXT_MARKER)
        if last is not None and last.is_end_of_file:
            if not update_line:
                return
            if not is_marker:
                raise PatchParseError(
                    f"Expected update hunk to start with a @@ context marker, got: '{line}'", self.line_number
                )
        if not chunks and hunk.move_path is None and update_line.startswith(MOVE_TO_MARKER):
            hunk.move_path = update_line[len(MOVE_TO_MARKER) :]
            return
        if is_marker:
            context = None if update_line == EMPTY_CHANGE_CONTEXT_MARKER else update_line[len(CHANGE_CONTEXT_MARKER) :]
            if last is not None and last.is_empty():
                # Codex: "Unexpected line found in update hunk: '@@ ...'". Ours: one more anchor.
                if context is not None:
                    last.add_context(context)
                return
            chunks.append(Chunk(change_context=context))
            return
        if update_line == EOF_MARKER:
            if last is not None and last.is_empty():
                raise PatchParseError(NO_LINES_ERROR, self.line_number)
            if last is not None:
                last.is_end_of_file = True
            return
        if not line or line[0] in " +-":
            if last is None:
                last = Chunk()
                chunks.append(last)
            first = line[:1]
            body = line[1:]
            if first == "+":
                last.new_lines.append(body)
            elif first == "-":
                last.old_lines.append(body)
            else:  # context line (an empty line is an empty context line)
                last.push_context_line(body)
            return
        if last is not None and not last.is_empty():
            error = PatchParseError(
                f"Expected update hunk to start with a @@ context marker, got: '{line}'", self.line_number
            )
        else:
            error = _unexpected_update_line(line, self.line_number)
        if not self.context_without_space or line[:1] in ("*", "@", "\t"):
            raise error
        # Ours: a context line without its leading space; the matcher keeps it only if the chunk
        # then matches at one place, and raises Codex's error otherwise.
        if last is None:
            last = Chunk()
            chunks.append(last)
        last.unprefixed.append((len(last.old_lines), error))
        last.push_context_line(line)

    def feed(self, lines: list[str], *, has_cr: bool = True) -> None:
        """Every line but the last through :meth:`process`, the last through :meth:`finish`.

        The state machine drops one more ``\\r`` per line (on top of ``str::lines()``); ``has_cr``
        False says no line has one. Fast paths: the body lines of an update chunk (``' '``, ``'+'``,
        ``'-'`` or empty: the bulk of a large patch) go straight into the current chunk, which is
        what :meth:`_update_line` does with them (they can be neither a header nor a marker), and
        the ``'+'`` lines of an added file into its contents; any other line, or a chunk after
        ``*** End of File``, takes the state machine.
        """
        count = len(lines) - 1
        index = 0
        while index < count:
            line = lines[index]
            if has_cr and line.endswith("\r"):
                line = line[:-1]
            index += 1
            self.line_number = index
            self.process(line)
            if self.mode == _ADD:  # the '+' lines of an added file, as process() takes them
                parts = self.add_parts
                while index < count and lines[index].startswith("+"):
                    line = lines[index]
                    if has_cr and line.endswith("\r"):
                        line = line[:-1]
                    parts.append(line[1:])
                    parts.append("\n")
                    index += 1
                continue
            if self.mode != _UPDATE:
                continue
            hunk = self.hunks[-1]
            assert isinstance(hunk, UpdateFile)
            if not hunk.chunks or hunk.chunks[-1].is_end_of_file:
                continue
            if not has_cr:
                index = _bodies(lines, index, count, hunk.chunks)
                continue
            chunk = hunk.chunks[-1]
            old_lines, new_lines = chunk.old_lines, chunk.new_lines
            add_old, add_new, add_context = old_lines.append, new_lines.append, chunk.context_line_indices.append
            while index < count:
                line = lines[index]
                if line.endswith("\r"):
                    line = line[:-1]
                first = line[:1]
                if first == "+":
                    add_new(line[1:])
                elif first == "-":
                    add_old(line[1:])
                elif first == " " or not line:
                    add_context((len(old_lines), len(new_lines)))
                    body = line[1:]
                    add_old(body)
                    add_new(body)
                else:
                    break
                index += 1
        self.line_number = count + 1
        self.finish(lines[-1])

    def finish(self, line: str) -> None:
        """Codex's ``finish``: the last line, already known to be ``*** End Patch`` once trimmed."""
        trimmed = rust_trim(line)
        if trimmed == END_PATCH_MARKER:
            self._ensure_update_not_empty(trimmed)
            self._close_add()
            self.mode = _ENDED
        else:  # unreachable after the boundary check; kept for fidelity
            self.process(line)
        if self.mode != _ENDED:
            raise PatchParseError(LAST_LINE_ERROR)


#: Shared ``(old index, new index)`` pairs of context lines, small ones only: a patch of 1,000
#: chunks holds ~6,000 of them, mostly the same few, and each new tuple is an object the cyclic
#: collector counts (a gen-0 pass per 700) and later scans. Keyed ``old << 32 | new``: a chunk's
#: line counts are below 2**32 (each line is an item of a list in memory).
_PAIRS: dict[int, tuple[int, int]] = {}


def _pair(old: int, new: int) -> tuple[int, int]:
    pair = (old, new)
    if old < 256 and new < 256:
        _PAIRS[old << 32 | new] = pair
    return pair


def _bodies(lines: list[str], index: int, count: int, chunks: list[Chunk]) -> int:
    """The body lines from ``lines[index]`` on into the last of ``chunks``, as
    :meth:`_Parser._update_line` takes them (a patch without CR), and each chunk that a ``@@``
    line after a non-empty chunk opens (what it does with such a line); the index of the first
    line left to the state machine.

    (``x.append(y)`` as written, not through a bound ``append`` kept in a local: CPython 3.11
    specialises the call of ``list.append`` written so, ~7 % fewer instructions here.)
    """
    chunk = chunks[-1]
    while True:
        old_lines, new_lines, context = chunk.old_lines, chunk.new_lines, chunk.context_line_indices
        old_count, new_count = len(old_lines), len(new_lines)
        stop = count  # the first line that is not a body line
        for at in range(index, count):
            line = lines[at]
            first = line[0] if line else " "  # (an empty line is an empty context line)
            if first == " ":
                pair = _PAIRS.get(old_count << 32 | new_count)
                if pair is None:
                    pair = _pair(old_count, new_count)
                context.append(pair)
                body = line[1:]
                old_lines.append(body)
                new_lines.append(body)
                old_count += 1
                new_count += 1
            elif first == "+":
                new_lines.append(line[1:])
                new_count += 1
            elif first == "-":
                old_lines.append(line[1:])
                old_count += 1
            else:
                stop = at
                break
        index = stop
        if index >= count or not (old_count or new_count) or not lines[index].startswith("@@"):
            return index
        marker = lines[index].rstrip(RUST_WHITESPACE)  # (rust_trim_end)
        if marker == EMPTY_CHANGE_CONTEXT_MARKER:
            chunk = Chunk(None)
        elif marker.startswith(CHANGE_CONTEXT_MARKER):
            chunk = Chunk(marker[len(CHANGE_CONTEXT_MARKER) :])
        else:
            return index  # not a marker: the state machine says what is wrong with it
        chunks.append(chunk)
        index += 1


def parse_patch(text: str, *, context_without_space: bool = False) -> Patch:
    """Parse a patch the way Codex does (lenient mode). Raises :class:`PatchParseError`.

    ``context_without_space`` (**Ours**, the tool's choice): an update line that starts with none
    of ' ', '+', '-' (nor '*', '@', a tab) is kept as a context line, marked in ``Chunk.unprefixed``
    with Codex's error, instead of failing here.
    """
    try:
        lines, normalised = _normalised(text)
    except PatchParseError as exc:
        if exc.reason != LAST_LINE_ERROR:
            raise
        return _without_end_marker(text, exc, context_without_space)
    parser = _Parser(context_without_space)
    parser.feed(lines, has_cr="\r" in text)
    return Patch(hunks=parser.hunks, environment_id=parser.environment_id, text=normalised)


def _without_end_marker(text: str, error: PatchParseError, context_without_space: bool) -> Patch:
    """**Ours**: a patch without ``*** End Patch`` that ends right after a complete hunk.

    Complete means: the text ends with a line break, and the last hunk is a deletion or an update
    whose last chunk ends with a context line (a model's chunk does; a reply cut off in the middle
    of its ``+`` / ``-`` lines does not, and is refused rather than half applied).
    """
    trimmed = rust_trim(text)
    if not text.rstrip(" \t").endswith("\n") or not trimmed.startswith(BEGIN_PATCH_MARKER):
        raise error
    lines = [*rust_lines(trimmed), END_PATCH_MARKER]
    parser = _Parser(context_without_space)
    try:
        parser.feed(lines, has_cr="\r" in text)
    except PatchParseError:
        raise error from None
    last = parser.hunks[-1] if parser.hunks else None
    if isinstance(last, UpdateFile) and last.chunks:
        chunk = last.chunks[-1]
        complete = chunk.context_line_indices[-1:] == [(len(chunk.old_lines) - 1, len(chunk.new_lines) - 1)]
    else:
        complete = isinstance(last, DeleteFile)
    if not complete:
        raise PatchParseError(
            f"{LAST_LINE_ERROR} (the patch ends without it, and its last hunk may be cut short: send the whole patch)"
        )
    note = "The patch had no '*** End Patch' line; it ended after a complete hunk and was applied as if it had one."
    return Patch(parser.hunks, parser.environment_id, "\n".join(lines), [note])
