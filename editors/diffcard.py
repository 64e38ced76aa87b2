"""Diff cards: what a tool call did to each file, as data for a presentation surface.

The model reads the tool's text; beside it, every call returns (``ToolResult.data``) a card per
file written (``path``, ``action``: add / modify / delete / move with ``from``, the new
``version``, a unified ``diff`` and its ``hunks``) and the ``locations`` the call touched (views
included). The diff is built from where the edit landed (the patch matcher's hunks, the one
region a ``str_replace`` / ``insert`` changed), never by diffing whole files: the cost is one
count of line breaks over the file plus the lines shown. It is bounded: past
:data:`MAX_FILE_DIFF_BYTES` / :data:`MAX_FILE_DIFF_LINES` per file or :data:`MAX_CALL_DIFF_BYTES`
per call the diff is cut at a line, with ``truncated`` and a ``note`` saying so.

Hunks are ``(old_start, old_len, new_start, new_len)`` in 0-based lines (:data:`LineHunk`); the
card shows them as the unified diff's ``@@`` headers do (1-based, with context).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from backends.values import value

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any, Literal

    Action = Literal["add", "modify", "delete", "move"]

LineHunk = tuple[int, int, int, int]  # as editors.apply_patch.matcher.LineHunk (no import: a leaf module)
#: ``(line, offset)``: a line (0-based) known to start at that byte offset of a file's bytes.
Mark = tuple[int, int]
#: Marks in ``before`` and in ``after``, each sorted by line (as editors.apply_patch.matcher.Marks).
Marks = tuple[tuple[Mark, ...], tuple[Mark, ...]]

CONTEXT = 3
MAX_FILE_DIFF_LINES = 400
MAX_FILE_DIFF_BYTES = 32_000
MAX_CALL_DIFF_BYTES = 128_000
MAX_HUNKS = 100  # hunk headers listed per file
MAX_LOCATIONS = 200  # per call
NO_NEWLINE = "\\ No newline at end of file\n"
_BLOCK = 1 << 20
_SMALL = 1 << 8
_COMPARE = 1 << 16  # bytes compared at once when looking for the first difference
_BACK = 64  # lines walked back from a mark rather than counted from an earlier place


# -- lines of a file, by number, in one forward pass ----------------------------------------------


class Lines:
    """The lines of ``data`` (with their endings), read forward by line number.

    LF files (and the editor's view of any file) are walked on the bytes: skipping ahead counts
    line breaks a block at a time, so reading a few lines near the end of a large file costs one
    C-level count. ``cr_breaks``: a lone CR ends a line too (the patch matcher's model), used when
    the file has a CR. ``marks``: lines known to start at byte offsets (:data:`Mark`, sorted by
    line), where a seek near one starts instead of counting from the top: a diff of 1,000 hunks
    marked where each starts reads its lines without counting the file's line breaks again.
    """

    def __init__(self, data: bytes | None, *, cr_breaks: bool = False, marks: Sequence[Mark] = ()) -> None:
        self._data = data or b""
        self._marks = marks
        self._after = 0  # the first mark past the line last sought (readers go forward)
        self._split: list[str] | None = None
        if cr_breaks and b"\r" in self._data:
            import re  # (rare: a file with CRs)

            parts = re.split(r"(\r\n|\r|\n)", self._data.decode("utf-8", errors="replace"))
            self._split = [text + ending for text, ending in zip(parts[0::2], [*parts[1::2], ""], strict=True)]
            if self._split and self._split[-1] == "":
                self._split.pop()
        self._line = 0
        self._pos = 0

    def fork(self) -> Lines:
        """Another reader of the same lines, with its own position (nothing is split or counted again)."""
        other = Lines(None)
        other._data, other._split = self._data, self._split
        other._marks = self._marks
        return other

    def __len__(self) -> int:
        if self._split is not None:
            return len(self._split)
        data = self._data
        return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)

    def _seek(self, line: int) -> None:
        if line < self._line:
            self._line, self._pos = 0, 0
        if self._marks:
            self._near_mark(line)
        data, pos, need = self._data, self._pos, line - self._line
        block = _SMALL  # galloping: blocks double while skipped whole, shrink near the line
        while need > 0 and pos < len(data):
            end = min(pos + block, len(data))
            breaks = data.count(b"\n", pos, end)
            if breaks < need:
                need, pos, block = need - breaks, end, min(2 * block, _BLOCK)
            elif block > _SMALL:
                block //= 8
            else:
                break
        while need > 0 and pos < len(data):  # the last few lines (at most one small block's worth)
            pos = data.index(b"\n", pos) + 1
            need -= 1
        self._line, self._pos = line - need, pos

    def _near_mark(self, line: int) -> None:
        """Move to the place nearest ``line`` from which to count: the last mark at or before it
        if that is ahead of where this reader is, or the first mark after it if that is closer
        (a few lines back from it, each found with one ``rfind``)."""
        marks, after = self._marks, self._after
        if after and marks[after - 1][0] > line:  # (a seek back: rare, the diff reads forward)
            after = 0
        while after < len(marks) and marks[after][0] <= line:
            after += 1
        self._after = after
        start = self._line
        if after:
            start = max(start, marks[after - 1][0])
        if after < len(marks):
            next_line, next_pos = marks[after]
            if next_line - line <= min(_BACK, line - start):
                self._line, self._pos = next_line, next_pos
                while self._line > line:
                    self._line, self._pos = self._line - 1, self._data.rfind(b"\n", 0, self._pos - 1) + 1
                return
        if start > self._line:
            self._line, self._pos = marks[after - 1]

    def get(self, start: int, stop: int) -> list[str]:
        """Lines ``[start, stop)`` (fewer past the end), decoded, each with its line ending."""
        if self._split is not None:
            return self._split[start:stop]
        self._seek(start)
        begin = self._pos
        self._seek(max(start, stop))
        parts = self._data[begin : self._pos].decode("utf-8", errors="replace").split("\n")
        return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


# -- hunks ----------------------------------------------------------------------------------------


def _common_prefix(a: bytes, b: bytes, limit: int, *, backward: bool = False, known: int = 0) -> int:
    """How many bytes ``a`` and ``b`` share at their start (``backward``: at their end), at most
    ``limit``; the first ``known`` are known to be the same (not compared)."""

    def same(lo: int, hi: int) -> bool:
        if backward:
            return a[len(a) - hi : len(a) - lo] == b[len(b) - hi : len(b) - lo]
        return a[lo:hi] == b[lo:hi]

    lo = min(known, limit)
    while lo < limit:
        hi = min(lo + _COMPARE, limit)
        if same(lo, hi):
            lo = hi
            continue
        while hi - lo > 1:  # the first difference is in [lo, hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if same(lo, mid) else (lo, mid)
        return lo
    return limit


def _lines_in(data: bytes, start: int, end: int) -> int:
    unterminated = end == len(data) and end > start and not data.endswith(b"\n")
    return data.count(b"\n", start, end) + (1 if unterminated else 0)


def region_hunk(before: bytes, after: bytes, same: tuple[int, int] = (0, 0)) -> list[LineHunk]:
    """The one hunk of whole lines holding every byte that differs (an edit that changed one region).

    ``same``: how many bytes at the start and at the end are known to be equal in both (an editor
    that spliced ``after`` from ``before`` knows it); they are not compared again.
    """
    return _region(before, after, same)[0]


def region_edit(
    path: str, display: str, before: bytes, after: bytes, same: tuple[int, int] = (0, 0), mark: Mark = (0, 0)
) -> FileEdit:
    """A :class:`FileEdit` of one changed region (see :func:`region_hunk`), marked where its hunk
    starts, so that its diff is read from there instead of counting lines from the top again.
    ``mark``: a line known to start at a byte offset within ``same``'s prefix (lines are counted from there)."""
    hunks, found = _region(before, after, same, mark)
    marks: Marks = ((found,), (found,)) if found is not None else ((), ())
    return FileEdit(path, display, before, after, tuple(hunks), marks=marks)


def _region(
    before: bytes, after: bytes, same: tuple[int, int], mark: Mark = (0, 0)
) -> tuple[list[LineHunk], Mark | None]:
    """:func:`region_hunk`'s hunk, and its first line's ``(line, offset)`` (the same in both)."""
    shortest = min(len(before), len(after))
    prefix = _common_prefix(before, after, shortest, known=same[0])
    if prefix == len(before) == len(after):
        return [], None
    suffix = _common_prefix(before, after, shortest - prefix, backward=True, known=same[1])
    start = before.rfind(b"\n", 0, prefix) + 1
    old_end, new_end = len(before) - suffix, len(after) - suffix

    def at_break(data: bytes, end: int) -> bool:
        return end == start or data[end - 1 : end] == b"\n"

    if not (at_break(before, old_end) and at_break(after, new_end)):  # widen both to the line's end
        nl = before.find(b"\n", old_end)
        grow = (len(before) if nl < 0 else nl + 1) - old_end
        old_end, new_end = old_end + grow, new_end + grow
    mark_line, mark_at = mark if mark[1] <= start else (0, 0)
    line = mark_line + before.count(b"\n", mark_at, start)
    return [(line, _lines_in(before, start, old_end), line, _lines_in(after, start, new_end))], (line, start)


def _groups(hunks: Sequence[LineHunk], context: int) -> list[list[LineHunk]]:
    """Hunks whose context would touch or overlap, together (as ``diff -u`` shows them)."""
    out: list[list[LineHunk]] = []
    for hunk in hunks:
        if out and hunk[0] - (out[-1][-1][0] + out[-1][-1][1]) <= 2 * context:
            out[-1].append(hunk)
        else:
            out.append([hunk])
    return out


def _header(group: Sequence[LineHunk], old: Lines, context: int) -> LineHunk:
    """The group's span with context, 0-based: ``(old_start, old_len, new_start, new_len)``."""
    first, last = group[0], group[-1]
    lead = min(context, first[0])
    trail = len(old.get(last[0] + last[1], last[0] + last[1] + context))  # (not len(old): a count of all)
    old_start, new_start = first[0] - lead, first[2] - lead
    return old_start, last[0] + last[1] + trail - old_start, new_start, last[2] + last[3] + trail - new_start


def _range(start: int, length: int) -> str:
    """A ``@@`` range as ``diff -u`` writes it."""
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


def _shown(start: int, length: int) -> int:
    return start if length == 0 else start + 1


# -- one file ---------------------------------------------------------------------------------------


@value(frozen=True)
class FileEdit:
    """What one call did to one file: ``before`` / ``after`` bytes (``None``: absent) and where it
    changed (``hunks``). ``path``: the model-facing key; ``display``: as the call wrote it (diff
    headers); ``source``/``source_display``: where a moved file came from. ``cr_breaks``: the
    hunks count a lone CR as a line break (the patch matcher's lines)."""

    path: str
    display: str
    before: bytes | None
    after: bytes | None
    hunks: tuple[LineHunk, ...]
    source: str | None = None
    source_display: str | None = None
    cr_breaks: bool = False
    #: lines known to start at byte offsets in ``before`` and in ``after`` (where the hunks start)
    marks: Marks = ((), ())

    @property
    def action(self) -> Action:
        if self.source is not None:
            return "move"
        if self.before is None:
            return "add"
        return "delete" if self.after is None else "modify"

    def _side(self, data: bytes | None, marks: Sequence[Mark]) -> Lines:
        return Lines(data, cr_breaks=self.cr_breaks, marks=marks)

    def headers(self) -> list[LineHunk]:
        """The unified diff's hunk spans (0-based, context included)."""
        old = self._side(self.before, self.marks[0])
        return [_header(group, old, CONTEXT) for group in _groups(self.hunks, CONTEXT)]

    def diff_lines(self) -> Iterator[str]:
        """The unified diff, line by line (``a/`` and ``b/`` prefixes, no timestamps), read lazily."""
        if not self.hunks:
            return
        old, new = self._side(self.before, self.marks[0]), self._side(self.after, self.marks[1])
        old_name = "/dev/null" if self.before is None else f"a/{self.source_display or self.display}"
        new_name = "/dev/null" if self.after is None else f"b/{self.display}"
        yield f"--- {old_name}\n"
        yield f"+++ {new_name}\n"
        ahead = old.fork()  # reads the context after each group, ahead of ``old`` (both go forward)
        for group in _groups(self.hunks, CONTEXT):
            old_start, old_len, new_start, new_len = _header(group, ahead, CONTEXT)
            yield f"@@ -{_range(old_start, old_len)} +{_range(new_start, new_len)} @@\n"
            at = old_start
            for o_start, o_len, n_start, n_len in group:
                yield from _marked(" ", old.get(at, o_start))
                yield from _marked("-", old.get(o_start, o_start + o_len))
                yield from _marked("+", new.get(n_start, n_start + n_len))
                at = o_start + o_len
            yield from _marked(" ", old.get(at, old_start + old_len))

    def diff(self) -> str:
        """The whole unified diff (for a terminal: ``vfs apply --diff``)."""
        return "".join(self.diff_lines())


def _marked(mark: str, lines: list[str]) -> Iterator[str]:
    for line in lines:
        yield mark + line if line.endswith("\n") else mark + line + "\n" + NO_NEWLINE


def whole_file(path: str, display: str, before: bytes | None, after: bytes | None, **kw: Any) -> FileEdit:
    """An edit shown as every old line replaced by every new one (an add, a delete, a rewrite)."""
    old_n, new_n = len(Lines(before, cr_breaks=True)), len(Lines(after, cr_breaks=True))
    hunks = ((0, old_n, 0, new_n),) if before != after else ()
    return FileEdit(path, display, before, after, hunks, cr_breaks=True, **kw)


# -- the card -------------------------------------------------------------------------------------


def _cut(lines: Iterator[str], max_lines: int, max_bytes: int) -> tuple[str, bool]:
    out: list[str] = []
    size = 0
    for line in lines:
        size += len(line.encode("utf-8", errors="surrogatepass"))
        if len(out) >= max_lines or size > max_bytes:
            return "".join(out), True
        out.append(line)
    return "".join(out), False


def file_card(edit: FileEdit, version: str | None, budget: int) -> dict[str, Any]:
    """One file's card; its diff takes at most ``budget`` bytes (and the per-file bounds)."""
    headers = edit.headers()
    diff, truncated = _cut(edit.diff_lines(), MAX_FILE_DIFF_LINES, min(MAX_FILE_DIFF_BYTES, budget))
    card: dict[str, Any] = {
        "path": edit.path,
        "action": edit.action,
        "from": edit.source,
        "version": version,
        "diff": diff,
        "hunks": [
            {"old_start": _shown(o, ol), "old_len": ol, "new_start": _shown(n, nl), "new_len": nl}
            for o, ol, n, nl in headers[:MAX_HUNKS]
        ],
        "hunks_total": len(headers),
        "truncated": truncated or len(headers) > MAX_HUNKS,
    }
    if card["truncated"]:
        card["note"] = (
            f"diff cut to {len(diff.encode('utf-8', errors='surrogatepass')):,} bytes and "
            f"{min(len(headers), MAX_HUNKS)} of {len(headers)} hunk headers; the file holds the whole change"
        )
    return card


def location(path: str, start: int | None, end: int | None) -> dict[str, Any]:
    """A place a call touched: lines ``start..end`` (1-based, inclusive) of ``path`` after the call;
    ``None``: the whole entry (a directory listed, a file deleted)."""
    return {"path": path, "start": start, "end": end}


def _edit_locations(edit: FileEdit) -> list[dict[str, Any]]:
    if edit.after is None:
        return [location(edit.path, None, None)]
    # the changed lines themselves (a deletion: the line now where they were)
    return [location(edit.path, n + 1, n + max(nl, 1)) for _, _, n, nl in edit.hunks]


def call_data(
    tool: str,
    command: str,
    edits: Sequence[FileEdit] = (),
    *,
    versions: Mapping[str, str | None] | None = None,
    txid: str | None = None,
    locations: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The structured data of one call: its cards, the locations it touched, bounded as a whole."""
    budget = MAX_CALL_DIFF_BYTES
    files: list[dict[str, Any]] = []
    touched = list(locations)
    for edit in edits:
        card = file_card(edit, (versions or {}).get(edit.path), budget)
        budget = max(0, budget - len(card["diff"].encode("utf-8", errors="surrogatepass")))
        files.append(card)
        touched.extend(_edit_locations(edit))
    data: dict[str, Any] = {
        "tool": tool,
        "command": command,
        "txid": txid,
        "files": files,
        "locations": touched[:MAX_LOCATIONS],
        "locations_total": len(touched),
        "truncated": any(card["truncated"] for card in files) or len(touched) > MAX_LOCATIONS,
    }
    return data


# -- schema ---------------------------------------------------------------------------------------


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


def data_schema() -> dict[str, Any]:
    """The JSON schema of :func:`call_data`'s value (part of the MCP ``outputSchema``)."""
    count = {"type": "integer", "minimum": 0}
    hunk = {
        "type": "object",
        "properties": {key: count for key in ("old_start", "old_len", "new_start", "new_len")},
        "required": ["old_start", "old_len", "new_start", "new_len"],
        "additionalProperties": False,
    }
    card = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "action": {"enum": ["add", "modify", "delete", "move"]},
            "from": _nullable("string"),
            "version": _nullable("string"),
            "diff": {"type": "string", "description": "unified diff, cut at a line when too long (truncated)"},
            "hunks": {"type": "array", "items": hunk},
            "hunks_total": count,
            "truncated": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["path", "action", "from", "version", "diff", "hunks", "hunks_total", "truncated"],
        "additionalProperties": False,
    }
    place = {
        "type": "object",
        "description": "lines start..end (1-based, inclusive) after the call; null: the whole entry",
        "properties": {"path": {"type": "string"}, "start": _nullable("integer"), "end": _nullable("integer")},
        "required": ["path", "start", "end"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "tool": {"type": "string"},
            "command": {"type": "string"},
            "txid": _nullable("string"),
            "files": {"type": "array", "items": card},
            "locations": {"type": "array", "items": place},
            "locations_total": count,
            "truncated": {"type": "boolean"},
        },
        "required": ["tool", "command", "txid", "files", "locations", "locations_total", "truncated"],
        "additionalProperties": False,
    }
