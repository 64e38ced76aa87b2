"""Where each chunk of an update goes: Codex's forward search, plus our recoveries (**Ours**).

Codex searches each chunk forward from the previous one and fails ("Failed to find expected
lines") or, on a whitespace-tolerant pass, writes the ``+`` lines as sent. On top of that search,
and only where Codex fails or would write a wrong edit:

* a chunk found only on a tolerant pass has its ``+`` lines re-indented by the one indentation
  map that explains its matched lines (:mod:`.indentation`), or is refused naming the indentation;
* a chunk whose change is already in the file (a repeat, a retry whose first try landed) is
  reported as :class:`PatchAlreadyApplied`, never applied twice: its old lines are missing and its
  new lines are there, or it only inserts lines and the lines it would insert are already at
  that place;
* copied line-number prefixes (``"    12  "``) are stripped when every old line has one, the
  numbers are consecutive and name the lines where the stripped chunk matches;
* a context line ``...`` stands for 1-50 file lines when the lines around it match exactly at
  one place only;
* a chunk not found forward of the previous one is searched in the whole file: applied when it
  matches once and overlaps no other chunk;
* an ``@@`` line that is not in the file is ignored when the chunk's lines match exactly once.

Each recovery refuses, naming the cause, when its reading is not the only one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from backends.values import replace, value
from editors.apply_patch.errors import (
    AGENT_PREFIX,
    PatchAlreadyApplied,
    PatchContextNotFound,
    PatchIndentationMismatch,
    PatchLinesNotFound,
    PatchParseError,
)
from editors.apply_patch.indentation import IndentMap, derive_map, first_mismatch, leading
from editors.apply_patch.matcher import PASSES, LineIndex, Replacement, locate
from editors.apply_patch.parser import Chunk

# What a `view` (or `cat -n`) puts before each line: right-aligned number, two spaces or a tab.
LINE_NUMBER = re.compile(r" *(\d+)(?:  |\t)")
ELISIONS = frozenset({"...", "# ...", "// ..."})
MAX_GAP = 50  # how many file lines one `...` may stand for
MAX_CANDIDATES = 1000  # places tried for the lines before a `...` (a bound on the work)


@value(frozen=True)
class Match:
    """A chunk located: its (possibly rewritten) chunk, position, matched lines and pass."""

    chunk: Chunk
    found: int
    pattern: list[str]
    new_lines: list[str]
    level: int


def _lines_not_found(chunk: Chunk, path: str, cause: str = "") -> PatchLinesNotFound:
    cli = f"Failed to find expected lines in {path}:\n" + "\n".join(chunk.old_lines)
    agent = AGENT_PREFIX + cli + (f"\n{cause}" if cause else "")
    return PatchLinesNotFound(cli, path=path, agent_message=agent)


def _span(start: int, end: int) -> str:
    return f"line {start + 1}" if end - start <= 1 else f"lines {start + 1}-{end}"


class Placer:
    """Places the chunks of one file in turn; ``replacements`` and ``notes`` are the result."""

    def __init__(self, lines: Sequence[str], path: str, index: LineIndex, *, repeats: bool = True) -> None:
        self.lines = lines
        self.repeats = repeats  # whether chunks already in the file are looked for (a retried patch)
        self.path = path
        self.index = index
        self.cursor = 0  # Codex's line_index: where the search of the next chunk starts
        self.replacements: list[Replacement] = []
        self._origins: list[tuple[int, Chunk]] = []  # per replacement: its chunk's number, the chunk
        # additions whose lines already end the file: (replacement index, chunk number, start, end)
        self._at_the_end: list[tuple[int, int, int, int]] = []
        self.regions: list[tuple[int, int, int]] = []  # (start, end, chunk number) matched
        self.present: list[tuple[int, int]] = []  # chunks already in the file (0-based, end excl.)
        self.absent: list[int] = []  # numbers of chunks that would apply
        self.notes: list[str] = []

    # -- one chunk ---------------------------------------------------------------------------------

    def place(self, number: int, chunk: Chunk, total: int) -> None:
        self._anchors(chunk)
        if not chunk.old_lines:
            self._addition(number, chunk)
            return
        match = self._match(chunk, self.cursor)
        if match is not None and self._insertion_present(match):
            return
        if match is None:
            match = self._recover(number, chunk, total)
            if match is None:
                return  # already present (recorded)
        if chunk.unprefixed:
            if self.index.find(match.pattern, match.found + 1, match.level) is not None:
                raise self._unprefixed_error(chunk)
            self.notes.append(self._unprefixed_note(chunk))
        self._emit(number, match)

    def _unprefixed_note(self, chunk: Chunk) -> str:
        numbers = [str(error.line_number) for _, error in chunk.unprefixed]
        which = f"Line {numbers[0]}" if len(numbers) == 1 else f"Lines {', '.join(numbers)}"
        return (
            f"{which} of the patch had no leading space (nor '+' or '-'); read as context, the chunk matched "
            f"{self.path} at one place."
        )

    def _unprefixed_error(self, chunk: Chunk) -> PatchParseError:
        """Codex's parse error for a line without its prefix, with the cause named."""
        error = chunk.unprefixed[0][1]
        cause = (
            f"Line {error.line_number} of the patch is a context line without its leading space (it starts "
            f"with none of ' ', '+', '-'); read as context, the chunk does not match {self.path} at one place."
        )
        return PatchParseError(error.reason, error.line_number, cause)

    def _replace(self, replacement: Replacement, number: int, chunk: Chunk) -> None:
        self.replacements.append(replacement)
        self._origins.append((number, chunk))

    def in_file_order(self) -> list[Replacement]:
        """The replacements sorted by start; at one start, insertions (in chunk order, as Codex's
        stable sort leaves them) before a replacement of the lines there: a chunk taken out of
        order may insert where another's removed lines begin. Two chunks' changes that overlap (an
        out-of-order ``@@`` line among the lines another chunk removes) are refused."""
        ordered = sorted(
            zip(self.replacements, self._origins, strict=True),
            key=lambda pair: (pair[0][0], pair[0][1] != 0),
        )
        end, owner = 0, 0
        for (start, old_len, _), (number, chunk) in ordered:
            if start < end:
                raise self._overlap(chunk, number, owner)
            if start + old_len >= end:
                end, owner = start + old_len, number
        return [replacement for replacement, _ in ordered]

    def _overlap(self, chunk: Chunk, number: int, other: int) -> PatchLinesNotFound | PatchContextNotFound:
        cause = f"Chunk {number} of {self.path} changes lines that chunk {other} changes."
        if chunk.old_lines or not chunk.contexts:
            return _lines_not_found(chunk, self.path, cause)
        cli = f"Failed to find context '{chunk.contexts[-1]}' in {self.path}"
        cause = f"The @@ line '{chunk.contexts[-1]}' of chunk {number} is among the lines chunk {other} removes."
        return PatchContextNotFound(cli, path=self.path, agent_message=f"{AGENT_PREFIX}{cli}\n{cause}")

    def _settle_the_end(self) -> None:
        """An addition whose lines already end the file is present there, unless another chunk
        changes those lines (then it is written, as Codex writes it). Codex appends such additions
        one after the other, so the last one's lines end the file and each earlier one's end
        where the next one's begin; and lines another chunk was found present in are not present
        again for this one: two additions of one line are not both present in one line."""
        changed = [(start, start + old_len) for start, old_len, _ in self.replacements if old_len]
        dropped = set()
        limit = len(self.lines)  # where the lines of the next addition (going back) must end
        for index, number, start, end in sorted(self._at_the_end, key=lambda entry: -entry[1]):
            start, end = limit - (end - start), limit
            new = self._origins[index][1].new_lines
            if not self._holds(start, new, 0):
                break
            claimed = [*changed, *self.present]  # (lines another chunk changes, or found present)
            if not any(first < end and start < last for first, last in claimed):
                self.present.append((start, end))
                self.absent.remove(number)
                dropped.add(index)
                limit = start
        if dropped:
            kept = [k for k in range(len(self.replacements)) if k not in dropped]
            self.replacements = [self.replacements[k] for k in kept]
            self._origins = [self._origins[k] for k in kept]

    def finish(self) -> None:
        """Raise :class:`PatchAlreadyApplied` when some chunk was already in the file."""
        self._settle_the_end()
        if not self.present:
            return
        present = sorted(self.present)  # (an addition at the end is recorded in chunk order)
        where = ", ".join(_span(start, end) for start, end in present)
        if not self.absent:
            message = f"this change is already present at {where} of {self.path}; nothing was changed"
        else:
            missing = ", ".join(map(str, self.absent))
            message = (
                f"part of this change is already present at {where} of {self.path}, and chunk(s) {missing} "
                "are not; nothing was changed (send only the missing part)"
            )
        ranges = [(start + 1, end) for start, end in present]
        raise PatchAlreadyApplied(message, path=self.path, parts=[(self.path, ranges, not self.absent)])

    def _anchors(self, chunk: Chunk) -> None:
        start = self.cursor
        for context in chunk.contexts:
            found = locate(self.lines, [context], start, False, self.index)
            if found is None:
                found = self._earlier_anchor(context, start)
            if found is None:
                self._bad_anchor(chunk, context)
                return
            start = found[0] + 1
        self.cursor = start

    def _earlier_anchor(self, context: str, start: int) -> tuple[int, int] | None:
        """An anchor before the previous chunk (chunks out of file order): taken when it is unique."""
        if not self.regions:
            return None
        found = locate(self.lines, [context], 0, False, self.index)
        if found is None or found[0] >= start:
            return None
        if self.index.find([context], found[0] + 1, found[1]) is not None:
            cli = f"Failed to find context '{context}' in {self.path}"
            cause = (
                f"The chunks of {self.path} are not in file order, and the @@ line '{context}' occurs more than once."
            )
            raise PatchContextNotFound(cli, path=self.path, agent_message=f"{AGENT_PREFIX}{cli}\n{cause}")
        self.notes.append(f"A chunk of {self.path} is before the previous one in the file; applied in file order.")
        return found

    def _bad_anchor(self, chunk: Chunk, context: str) -> None:
        """An ``@@`` line not in the file: ignored when the chunk's own lines say where it goes."""
        if (
            chunk.old_lines
            and self._exact_count(chunk.old_lines, self.cursor) == 1
            and self._exact_count(chunk.old_lines, 0) == 1
        ):
            self.notes.append(f"The @@ line '{context}' is not in {self.path}; the chunk's lines matched once, there.")
            return
        cli = f"Failed to find context '{context}' in {self.path}"
        cause = "The @@ line (hunk header) must be a line of the file, or a bare @@."
        raise PatchContextNotFound(cli, path=self.path, agent_message=f"{AGENT_PREFIX}{cli}\n{cause}")

    def _exact_count(self, pattern: Sequence[str], start: int) -> int:
        """How many exact matches of ``pattern`` start at or after ``start`` (0, 1 or 2: "many")."""
        first = self.index.find(pattern, start, 0)
        if first is None:
            return 0
        return 1 if self.index.find(pattern, first + 1, 0) is None else 2

    def _match(self, chunk: Chunk, start: int) -> Match | None:
        pattern, new_slice = chunk.old_lines, chunk.new_lines
        found = locate(self.lines, pattern, start, chunk.is_end_of_file, self.index)
        if found is None and pattern and pattern[-1] == "":
            # The trailing empty line often stands for the file's final newline: retry without it.
            pattern = pattern[:-1]
            if new_slice and new_slice[-1] == "":
                new_slice = new_slice[:-1]
            found = locate(self.lines, pattern, start, chunk.is_end_of_file, self.index)
        if found is None:
            return None
        return Match(chunk, found[0], list(pattern), list(new_slice), found[1])

    def _emit(self, number: int, match: Match) -> None:
        new_slice = match.new_lines if match.level == 0 else self._reindent(match)
        found, pattern = match.found, match.pattern
        for start, end, other in self.regions:
            if found < end and start < found + len(pattern):
                raise _lines_not_found(match.chunk, self.path, f"Chunk {number} overlaps chunk {other}.")
        # Context lines are left out of the replacements, so they keep their exact bytes.
        old_start = new_start = 0
        for old_context, new_context in match.chunk.context_line_indices:
            if old_context >= len(pattern) or new_context >= len(new_slice):
                break  # a trailing empty context line dropped by the retry
            if old_start != old_context or new_start != new_context:
                replacement = (found + old_start, old_context - old_start, new_slice[new_start:new_context])
                self._replace(replacement, number, match.chunk)
            old_start, new_start = old_context + 1, new_context + 1
        if old_start != len(pattern) or new_start != len(new_slice):
            self._replace((found + old_start, len(pattern) - old_start, new_slice[new_start:]), number, match.chunk)
        self.regions.append((found, found + len(pattern), number))
        self.absent.append(number)
        self.cursor = max(self.cursor, found + len(pattern))

    # -- additions and repeats -----------------------------------------------------------------------

    def _addition(self, number: int, chunk: Chunk) -> None:
        # Codex appends a pure addition at the end of the file. **Ours**: with an anchor (and no
        # "*** End of File"), right after the anchor, where the model asked for it.
        anchored = bool(chunk.contexts) and not chunk.is_end_of_file
        new = list(chunk.new_lines)
        at = self.cursor if anchored else len(self.lines) - len(new)
        there = self._holds(at, new, 0)
        if anchored and there:
            self._record_present(at, at + len(new))
            return
        insertion = self.cursor if anchored else len(self.lines)
        if there:
            # Present at the end unless a chunk, before or after this one, changes those lines:
            # decided once every chunk is placed (finish). The cursor stays: the end says nothing
            # of where the next chunks are.
            self._at_the_end.append((len(self.replacements), number, at, at + len(new)))
        self._replace((insertion, 0, new), number, chunk)
        self.absent.append(number)

    def _holds(self, at: int, new: Sequence[str], level: int) -> bool:
        """Whether the file has ``new`` at ``at`` (at this pass), with some non-blank line."""
        if not self.repeats or at < 0 or at + len(new) > len(self.lines) or not any(line.strip() for line in new):
            return False
        key = PASSES[level]
        return all(key(self.lines[at + k]) == key(line) for k, line in enumerate(new))

    def _insertion_present(self, match: Match) -> bool:
        """A chunk that only inserts, whose inserted lines already sit where it would put them."""
        chunk = match.chunk
        if len(chunk.context_line_indices) != len(chunk.old_lines) or len(match.new_lines) <= len(match.pattern):
            return False
        context_new = {new for _, new in chunk.context_line_indices}
        if not any(line.strip() for k, line in enumerate(match.new_lines) if k not in context_new):
            return False  # blank lines only: their presence proves nothing
        before = chunk.context_line_indices[0][1]  # `+` lines before the first context line
        at = match.found - before
        if not self._holds(at, match.new_lines, match.level):
            return False
        self._record_present(at, at + len(match.new_lines))
        return True

    def _record_present(self, start: int, end: int) -> None:
        self.present.append((start, end))
        self.cursor = max(self.cursor, end)

    def _present(self, chunk: Chunk) -> bool:
        """A chunk whose old lines are missing and whose new lines are there (forward)."""
        if not self.repeats or chunk.new_lines == chunk.old_lines:
            return False
        new = replace(chunk, old_lines=chunk.new_lines, new_lines=chunk.new_lines)
        match = self._match(new, self.cursor)
        if match is None or not any(line.strip() for line in match.pattern):
            return False
        self._record_present(match.found, match.found + len(match.pattern))
        return True

    # -- recoveries ----------------------------------------------------------------------------------

    def _recover(self, number: int, chunk: Chunk, total: int) -> Match | None:
        if self._present(chunk):
            return None
        match = self._line_numbers(chunk) or self._elision(chunk) or self._out_of_order(number, chunk)
        match = match or self._missing_marker(number, chunk)
        if match is None and chunk.unprefixed:
            raise self._unprefixed_error(chunk)
        if match is None:
            raise _lines_not_found(chunk, self.path)
        return match

    def _missing_marker(self, number: int, chunk: Chunk) -> Match | None:
        """Two chunks run together (their ``@@`` line missing): the one split of the chunk, at a
        context line, whose two parts each match exactly once, in order. The first part is placed
        here; the second is returned."""
        splits = []
        for old_at, new_at in chunk.context_line_indices:
            if old_at == 0:
                continue
            first = _part(chunk, 0, old_at, 0, new_at)
            second = _part(chunk, old_at, len(chunk.old_lines), new_at, len(chunk.new_lines))
            if self._exact_count(first.old_lines, self.cursor) != 1 or self._exact_count(second.old_lines, 0) != 1:
                continue
            a = self.index.find(first.old_lines, self.cursor, 0)
            b = self.index.find(second.old_lines, 0, 0)
            if a is not None and b is not None and a + len(first.old_lines) < b:
                splits.append((first, a, second, b))
            if len(splits) > 1:
                return None
        if not splits:
            return None
        first, a, second, b = splits[0]
        self.notes.append(f"A chunk of {self.path} was two chunks without the @@ line between them; applied as two.")
        self._emit(number, Match(first, a, first.old_lines, first.new_lines, 0))
        return Match(second, b, second.old_lines, second.new_lines, 0)

    def _line_numbers(self, chunk: Chunk) -> Match | None:
        prefixes = [LINE_NUMBER.match(line) for line in chunk.old_lines]
        if not all(prefixes):
            return None
        numbers = [int(m.group(1)) for m in prefixes if m]
        width = {len(m.group(0)) for m in prefixes if m}
        cause = "The context and removed lines carry line-number prefixes copied from the view output"
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            raise _lines_not_found(chunk, self.path, cause + ", and their numbers are not consecutive.")
        context_new = {n for _, n in chunk.context_line_indices}
        old = [line[len(m.group(0)) :] for line, m in zip(chunk.old_lines, prefixes, strict=True) if m]
        new = []
        for k, line in enumerate(chunk.new_lines):
            m = LINE_NUMBER.match(line)
            new.append(line[len(m.group(0)) :] if m and (k in context_new or len(m.group(0)) in width) else line)
        stripped = replace(chunk, old_lines=old, new_lines=new)
        match = self._match(stripped, self.cursor)
        if match is None:
            raise _lines_not_found(chunk, self.path, cause + "; without them the lines are not in the file either.")
        if match.found + 1 != numbers[0]:
            raise _lines_not_found(
                chunk, self.path, cause + f"; the lines are at line {match.found + 1}, not {numbers[0]}."
            )
        self.notes.append(f"Stripped line-number prefixes copied from the view output in {self.path}.")
        return match

    def _elision(self, chunk: Chunk) -> Match | None:
        marks = [k for k, line in enumerate(chunk.old_lines) if line.strip() in ELISIONS]
        if not marks:
            return None
        cause = "A '...' line stands for elided lines"
        context = dict(chunk.context_line_indices)
        if len(marks) > 1 or marks[0] not in context or marks[0] in (0, len(chunk.old_lines) - 1):
            raise _lines_not_found(chunk, self.path, cause + ": only one, as a context line between context lines.")
        cut = marks[0]
        before, after = chunk.old_lines[:cut], chunk.old_lines[cut + 1 :]
        places = self._elision_places(before, after)
        if not places:
            raise _lines_not_found(
                chunk, self.path, cause + f"; the lines around it (within {MAX_GAP} lines) match nowhere."
            )
        if len({_edit_key(chunk, cut, place) for place in places}) > 1:
            raise _lines_not_found(
                chunk,
                self.path,
                cause + f"; the lines around it (within {MAX_GAP} lines) match at more than one place.",
            )
        at, gap = places[0]  # any of them: the changed lines land at the same place
        kept = list(self.lines[at + cut : at + cut + gap])
        expanded = _expand(chunk, cut, kept)
        self.notes.append(f"The '...' line in {self.path} stood for {_span(at + cut, at + cut + gap)}, kept.")
        return Match(expanded, at, expanded.old_lines, expanded.new_lines, 0)

    def _elision_places(self, before: list[str], after: list[str]) -> list[tuple[int, int]]:
        places: list[tuple[int, int]] = []
        start = self.cursor
        for _ in range(MAX_CANDIDATES):
            at = self.index.find(before, start, 0)
            if at is None:
                break
            for gap in range(1, MAX_GAP + 1):
                tail = at + len(before) + gap
                if self.lines[tail : tail + len(after)] == after:
                    places.append((at, gap))
            if len(places) > MAX_CANDIDATES:
                break
            start = at + 1
        return places

    def _out_of_order(self, number: int, chunk: Chunk) -> Match | None:
        if number == 1 or not self.regions:
            return None
        match = self._match(chunk, 0)
        if match is None:
            return None
        cause = f"The chunks of {self.path} are not in file order"
        if self.index.find(match.pattern, match.found + 1, match.level) is not None:
            raise _lines_not_found(chunk, self.path, cause + f", and chunk {number}'s lines occur more than once.")
        self.notes.append(
            f"Chunk {number} of {self.path} is before the previous one in the file; applied in file order."
        )
        return match

    # -- indentation ---------------------------------------------------------------------------------

    def _reindent(self, match: Match) -> list[str]:
        """The chunk's new lines with the one indentation map of its matched lines."""
        context = dict(match.chunk.context_line_indices)
        if len(context) == len(match.new_lines):
            return match.new_lines  # no `+` line: nothing is written, so no indentation to decide
        pairs = []
        for k, model in enumerate(match.pattern):
            file = self.lines[match.found + k]
            # A context line sent without its leading space reads as " " + text: it explains itself.
            pairs.append((file, file) if k in context and " " + model == file else (model, file))
        removed = [pair for k, pair in enumerate(pairs) if k not in context]
        # The `+` lines replace the removed ones: when those kept their indentation, so do they
        # (only context lines differ, and context lines are never written).
        indent_map = derive_map(removed) if derive_map(removed) == IndentMap() and removed else derive_map(pairs)
        if indent_map is None:
            raise self._indentation_refusal(match, pairs)
        if indent_map.identity:
            return match.new_lines
        if not match.chunk.is_end_of_file and self.index.find(match.pattern, match.found + 1, match.level) is not None:
            raise PatchIndentationMismatch(
                f"The lines of the chunk match {self.path} only with other indentation, at line {match.found + 1} "
                "and again further on; add context lines. Nothing was changed.",
                path=self.path,
            )
        context_new = set(context.values())
        out = []
        for k, line in enumerate(match.new_lines):
            mapped = line if k in context_new else indent_map.reindent(line)
            if mapped is None:
                raise PatchIndentationMismatch(
                    f"The chunk matches {self.path} at line {match.found + 1} only with other indentation, and the "
                    f"added line '{line}' is indented less than every matched line: where it goes is unclear. "
                    "Nothing was changed.",
                    path=self.path,
                )
            out.append(mapped)
        self.notes.append(f"Re-indented the added lines to {self.path}'s indentation (line {match.found + 1}).")
        return out

    def _indentation_refusal(self, match: Match, pairs: list[tuple[str, str]]) -> PatchIndentationMismatch:
        k = first_mismatch(pairs) or 0
        model, file = pairs[k]
        line = match.found + k + 1
        if "\t" in leading(file) and "\t" not in leading(model):
            cause = f"the file indents with tabs where the patch uses spaces (line {line})"
        else:
            cause = (
                f"the patch's indentation differs from the file's (line {line}: {leading(file)!r} in the file, "
                f"{leading(model)!r} in the patch) and no single re-indentation explains every line"
            )
        return PatchIndentationMismatch(
            f"The chunk matches {self.path} only if whitespace is ignored: {cause}. Nothing was changed.",
            path=self.path,
        )


def _edit_key(chunk: Chunk, cut: int, place: tuple[int, int]) -> tuple[int | None, int | None]:
    """Where a reading of a ``...`` puts the changed lines: readings with one key give one result
    (the elided lines and the context around them are kept whatever the gap)."""
    at, gap = place
    new_cut = dict(chunk.context_line_indices)[cut]
    context_old = {old for old, _ in chunk.context_line_indices}
    context_new = {new for _, new in chunk.context_line_indices}
    removed = [k for k in range(len(chunk.old_lines)) if k not in context_old]
    added = [k for k in range(len(chunk.new_lines)) if k not in context_new]
    before = any(k < cut for k in removed) or any(k < new_cut for k in added)
    after = any(k > cut for k in removed) or any(k > new_cut for k in added)
    return (at if before else None, at + cut + gap if after else None)


def _part(chunk: Chunk, old_start: int, old_end: int, new_start: int, new_end: int) -> Chunk:
    """The lines ``old_start:old_end`` / ``new_start:new_end`` of ``chunk``, as a chunk of its own."""
    return Chunk(
        old_lines=chunk.old_lines[old_start:old_end],
        new_lines=chunk.new_lines[new_start:new_end],
        context_line_indices=[
            (old - old_start, new - new_start)
            for old, new in chunk.context_line_indices
            if old_start <= old < old_end and new_start <= new < new_end
        ],
    )


def _expand(chunk: Chunk, cut: int, kept: list[str]) -> Chunk:
    """``chunk`` with its context line ``cut`` (a ``...``) replaced by the file's ``kept`` lines."""
    new_cut = dict(chunk.context_line_indices)[cut]
    grow = len(kept) - 1
    indices: list[tuple[int, int]] = []
    for old, new in chunk.context_line_indices:
        if old < cut:
            indices.append((old, new))
        elif old == cut:
            indices.extend((cut + k, new_cut + k) for k in range(len(kept)))
        else:
            indices.append((old + grow, new + grow))
    return replace(
        chunk,
        old_lines=[*chunk.old_lines[:cut], *kept, *chunk.old_lines[cut + 1 :]],
        new_lines=[*chunk.new_lines[:new_cut], *kept, *chunk.new_lines[new_cut + 1 :]],
        context_line_indices=indices,
    )
