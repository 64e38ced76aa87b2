"""``str_replace`` and ``insert`` on a file's text: pure functions, every byte outside the edit kept.

The text handed in is the file decoded by ``vfs`` (BOM already set aside), or an ASCII file's
bytes read in place (:mod:`source`: the same text, offset for offset); line endings are never
normalised, so CRLF, LF, mixed and lone-CR files, tabs and a missing final newline all survive.

**Ours**:
* ``str_replace``: when ``old_str`` does not appear verbatim, the file has CRLF line endings and
  ``old_str`` uses bare LF, the match is retried with each LF of ``old_str`` allowed to be CRLF in the
  file, and ``new_str``'s bare LFs then become CRLF (a unique match is still required).
* ``insert``: in a CRLF file (decided at the insertion point) the inserted line breaks are CRLF.
* When ``old_str`` does not appear verbatim, the tolerant rules of :mod:`tolerant` (trailing
  whitespace, indentation, unicode punctuation, line-number prefixes, elision) apply the edit when
  their reading is unambiguous; the reply then says which one matched.
* An exact, unique match is refused when it starts after a line's indentation and ``new_str``'s
  next lines could not be placed, or when the same lines sit elsewhere at another indentation.
* A failed match carries a diagnosis of the near miss (see :mod:`diagnose`); with none, and
  ``new_str`` (two non-blank lines or more) in the file exactly once as whole lines, it is ``AlreadyApplied`` (the call was
  sent twice): "this change is already present at lines N-M; nothing was changed". So is a
  match of ``old_str`` that lies inside that one occurrence of ``new_str`` at the place
  ``new_str`` holds it (an insertion sent twice: applying it again would repeat the insertion).
"""

from __future__ import annotations

import re

import vfs
from backends.values import value
from editors.str_replace_editor import diagnose, tolerant
from editors.str_replace_editor.render import split_lines
from editors.str_replace_editor.source import Source
from vfs.errors import AlreadyApplied, AmbiguousEdit, EditNotFound, InvalidArgument


class InsertLineError(InvalidArgument):
    """``insert_line`` outside ``[0, L]``."""


@value(frozen=True)
class Match:
    start: int
    end: int


def find_all(content: Source, needle: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of ``needle`` (literal), left to right."""
    offsets: list[int] = []
    start = 0
    while True:
        index = content.find(needle, start)
        if index < 0:
            return offsets
        offsets.append(index)
        start = index + len(needle)


def line_at(content: Source, offset: int) -> int:
    """The 1-based line (as ``view`` numbers them) holding ``offset``."""
    return content.count("\n", 0, offset) + 1


def uses_crlf(content: Source) -> bool:
    return "\r\n" in content


def to_crlf(text: str) -> str:
    """Every bare LF of ``text`` becomes CRLF (existing CRLFs stay as they are)."""
    return re.sub(r"(?<!\r)\n", "\r\n", text)


def crlf_matches(content: Source, old: str) -> list[Match]:
    """Matches of ``old`` where each of its bare LFs may be CRLF in ``content`` (only for CRLF files)."""
    if "\n" not in old or "\r" in old or not uses_crlf(content):
        return []
    pattern = re.compile(r"\r?\n".join(re.escape(part) for part in old.split("\n")))
    return [Match(m.start(), m.end()) for m in pattern.finditer(str(content))]


@value(frozen=True)
class Replaced:
    """An edit's outcome: ``source[start:end]`` becomes ``replacement``. The edited text is not
    built until asked for (:attr:`text`): on a large file the editor splices the file's bytes
    instead (:meth:`encoded`), one copy instead of a text built, then encoded."""

    source: Source
    start: int
    end: int
    replacement: str
    line: int  # 1-based line where the replaced text started
    old_last_line: int  # 1-based last line of the replaced text, in the file before
    new_last_line: int  # 1-based last line of the new text, in ``text``
    adapted_line_endings: bool
    note: str | None = None  # set when a tolerant rule matched: one sentence for the reply
    #: ``line`` is the line of ``start`` (a splice); an insert rewrites the whole text instead
    spliced: bool = True

    @property
    def text(self) -> str:
        return self.source[: self.start] + self.replacement + self.source[self.end :]

    def encoded(self, data: bytes) -> bytes:
        """The edited file's bytes, where ``data`` is the file ``source`` was decoded from (UTF-8,
        its BOM kept). An ASCII text's offsets are its bytes' (after the BOM): the bytes outside the
        edit are spliced from ``data`` as they are, which is what encoding :attr:`text` gives."""
        bom = self._byte_base(data)
        if bom is None:  # not ASCII: offsets differ, encode the text
            return vfs.encode_text(self.text, bom=vfs.has_bom(data))
        view = memoryview(data)
        return b"".join((view[: bom + self.start], self.replacement.encode("utf-8"), view[bom + self.end :]))

    def _byte_base(self, data: bytes) -> int | None:
        """Where ``source`` starts in ``data`` (after its BOM) when a character is a byte (ASCII:
        ``source``'s offsets are byte offsets from there); ``None`` otherwise."""
        bom = len(vfs.encode_text("", bom=True)) if vfs.has_bom(data) else 0
        return bom if len(data) - bom == len(self.source) else None

    def unchanged(self, data: bytes) -> tuple[int, int]:
        """How many bytes at the start and at the end of :meth:`encoded`'s result are ``data``'s
        own (known without comparing: ASCII offsets are byte offsets); ``(0, 0)`` if not known."""
        bom = self._byte_base(data)
        if bom is None:
            return 0, 0
        return bom + self.start, len(self.source) - self.end

    def mark(self, data: bytes) -> tuple[int, int]:
        """``(line, offset)``: the edit's first line (0-based) and where it starts in ``data``, when
        offsets are byte offsets (ASCII, see :meth:`unchanged`); ``(0, 0)`` otherwise."""
        bom = self._byte_base(data)
        if bom is None or not self.spliced:
            return 0, 0
        return self.line - 1, bom + self.source.rfind("\n", 0, self.start) + 1


def _last_line(first: int, text: str) -> int:
    """The line where ``text`` ends when it starts on line ``first`` (a final line break ends a line)."""
    return first + text.removesuffix("\n").count("\n") if text else first


def splice(content: Source, start: int, end: int, replacement: str, *, adapted: bool = False,
           note: str | None = None) -> Replaced:  # fmt: skip
    line = line_at(content, start)
    return Replaced(
        content,
        start,
        end,
        replacement,
        line,
        _last_line(line, content[start:end]),
        _last_line(line, replacement),
        adapted,
        note,
    )


def replace_unique(content: Source, old: str, new: str, *, path: str) -> Replaced:
    """Replace the single occurrence of ``old``; ``EditNotFound`` / ``AmbiguousEdit`` otherwise.

    Order: the exact text; its CRLF form; the tolerant rules (:mod:`tolerant`), each applied only
    when its reading is unambiguous; then a refusal, ``AlreadyApplied`` when ``new`` is in the file
    and ``old`` nowhere (not even as a near miss). An exact, unique match is checked on ``content``
    as it is (an ASCII file's bytes: :mod:`source`); anything else on the decoded text.
    """
    matches = [Match(offset, offset + len(old)) for offset in find_all(content, old)]
    if not matches:
        return _replace_inexact(str(content), old, new, path)
    return _replace_matched(content, old, new, matches, path)


def _replace_matched(
    content: Source, old: str, new: str, matches: list[Match], path: str, *, adapted: bool = False
) -> Replaced:
    """The one match replaced, after the checks that refuse it; ``adapted``: a CRLF match."""
    if len(matches) > 1:
        lines = ", ".join(str(line_at(content, m.start)) for m in matches)
        raise AmbiguousEdit(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines [{lines}]. "
            "Please ensure it is unique",
            path=path,
        )
    match = matches[0]
    _refuse_reapplying(content, old, new, match, path)
    _refuse_lost_indentation(content, old, new, match, path)
    _refuse_other_indentation(content, old, match, path)
    replacement = new
    if adapted and "\r\n" in content[match.start : match.end]:
        replacement = to_crlf(new)
    return splice(content, match.start, match.end, replacement, adapted=adapted)


def _replace_inexact(content: str, old: str, new: str, path: str) -> Replaced:
    """``old`` nowhere verbatim: its CRLF form, the tolerant rules, then the refusal."""
    matches = crlf_matches(content, old)
    if matches:
        return _replace_matched(content, old, new, matches, path, adapted=True)
    tolerated = _tolerant(content, old, new, path)
    if tolerated is not None:
        return splice(content, tolerated.start, tolerated.end, tolerated.replacement, note=tolerated.note)
    message = f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
    hint = diagnose.diagnose(content, old)
    if hint:
        raise EditNotFound(f"{message} {hint}", path=path)
    present = already_present(content, new)
    if present is not None:
        raise AlreadyApplied(already_applied_message(*present), path=path)
    raise EditNotFound(message, path=path)


def _tolerant(content: str, old: str, new: str, path: str) -> tolerant.Splice | None:
    """The tolerant rules in order: line-number prefixes, whitespace and unicode, elision."""
    numbered = tolerant.strip_line_numbers(old)
    if numbered is not None:
        stripped, first = numbered
        found = [Match(at, at + len(stripped)) for at in find_all(content, stripped)] or crlf_matches(content, stripped)
        if len(found) == 1 and line_at(content, found[0].start) == first:
            replacement = tolerant.strip_new_line_numbers(new)
            if "\r\n" in content[found[0].start : found[0].end]:
                replacement = to_crlf(replacement)
            _refuse_lost_indentation(content, stripped, replacement, found[0], path)
            note = "Matched ignoring the line-number prefixes copied from the `view` output."
            return tolerant.Splice(found[0].start, found[0].end, replacement, note)
    return tolerant.match_passes(content, old, new, path=path) or tolerant.match_elision(content, old, new, path=path)


def _refuse_reapplying(content: Source, old: str, new: str, match: Match, path: str) -> None:
    """``new`` contains ``old``, and the match of ``old`` sits inside the one occurrence of ``new``:
    the file already reads as the edit would make it (an insertion sent twice); again would repeat it."""
    inside = new.find(old)
    if inside < 0 or new == old:
        return
    present = already_present(content, new)
    if present is not None and content.startswith(new, match.start - inside):
        raise AlreadyApplied(already_applied_message(*present), path=path)


def _refuse_lost_indentation(content: Source, old: str, new: str, match: Match, path: str) -> None:
    """An ``old_str`` found after a line's indentation, with nothing to show whether ``new_str``'s
    next lines are written relative to it or to column 0: refused rather than guessed."""
    line_start = content.rfind("\n", 0, match.start) + 1
    indent = content[line_start : match.start]
    if not indent or indent.strip(" \t") or "\n" not in new.rstrip("\n"):
        return
    if any(line.strip() for line in old.split("\n")[1:]):
        return  # old_str's own next lines matched at their absolute indentation: new_str's are literal too
    raise EditNotFound(
        f"No replacement was performed: old_str matches at line {line_at(content, match.start)} of {path} after "
        f"the line's indentation {indent!r}, and new_str's next lines would lose that indentation. Include the "
        "line's indentation in old_str and write new_str's lines with the file's indentation.",
        path=path,
    )


def _refuse_other_indentation(content: Source, old: str, match: Match, path: str) -> None:
    """The same lines also sit elsewhere at another indentation: which copy was meant is unclear."""
    lines = old.split("\n")
    if len([line for line in lines if line.strip()]) < 2:
        return
    here = content.rfind("\n", 0, match.start) + 1
    column = match.start - here
    # An exact copy the unique match did not count overlaps it (matches are counted
    # non-overlapping, as the peer counts them): it is the same text, not another indentation.
    others = [
        first
        for first in tolerant.shifted_copies(content, old)
        if first != here and not content.startswith(old, first + column)
    ]
    if others:
        raise AmbiguousEdit(
            f"No replacement was performed: old_str matches at line {line_at(content, match.start)} of {path}, and "
            f"the same lines at another indentation at line {line_at(content, others[0])}. Add surrounding lines "
            "to old_str to say which is meant.",
            path=path,
        )


def already_present(content: Source, new: str) -> tuple[int, int] | None:
    """The lines where ``new`` appears, when it has two non-blank lines or more and appears exactly
    once, as whole lines (from a line's start or indentation to a line's end): a fragment inside a
    longer line (``eta`` in ``beta``) or one generic line (``return None``) proves nothing."""
    if len([line for line in new.split("\n") if line.strip()]) < 2:
        return None
    found = [Match(offset, offset + len(new)) for offset in find_all(content, new)] or crlf_matches(content, new)
    if len(found) != 1 or not _whole_lines(content, found[0]):
        return None
    first = line_at(content, found[0].start)
    return first, _last_line(first, content[found[0].start : found[0].end])


def _whole_lines(content: Source, match: Match) -> bool:
    before = content[content.rfind("\n", 0, match.start) + 1 : match.start]
    line_end = content.find("\n", match.end)
    after = content[match.end : line_end if line_end >= 0 else len(content)]
    ends_line = content[match.end - 1 : match.end] == "\n" or after in ("", "\r")
    return not before.strip(" \t") and ends_line


def already_applied_message(first: int, last: int) -> str:
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"this change is already present at {where}; nothing was changed"


def _separator_at(lines: list[str], insert_line: int) -> str:
    """The line ending in use where ``insert_line`` splices in: the nearest existing line break."""
    last = len(lines) - 1  # the last element has no line break after it
    for index in (insert_line - 1, insert_line, insert_line - 2):
        if 0 <= index < last:
            return "\r\n" if lines[index].endswith("\r") else "\n"
    return "\n"


def insert_text(content: str, insert_line: int, text: str) -> str:
    """Splice ``text``'s lines after line ``insert_line`` (0 = top). No newline is added implicitly."""
    lines = split_lines(content)
    n_lines = len(lines)
    if insert_line < 0 or insert_line > n_lines:
        raise InsertLineError(
            f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the "
            f"file: [0, {n_lines}]"
        )
    if _separator_at(lines, insert_line) == "\n":
        new_lines = text.split("\n")
        return "\n".join(lines[:insert_line] + new_lines + lines[insert_line:])
    # CRLF at the insertion point: each line break the edit introduces is CRLF. The break after
    # lines[insert_line - 1] is the original one (its CR stays with it), except at the very end.
    new_lines = text.replace("\r\n", "\n").split("\n")
    head = list(lines[:insert_line])
    if insert_line == n_lines:
        head[-1] += "\r"
        new_lines = [line + "\r" for line in new_lines[:-1]] + new_lines[-1:]
    else:
        new_lines = [line + "\r" for line in new_lines]
    return "\n".join(head + new_lines + lines[insert_line:])


def inserted(source: Source, insert_line: int, text: str) -> Replaced:
    """``insert_text`` as an edit outcome: the new lines sit after line ``insert_line``."""
    content = str(source)
    result = insert_text(content, insert_line, text)
    first = insert_line + 1
    return Replaced(content, 0, len(content), result, first, insert_line, _last_line(first, text), False, spliced=False)
