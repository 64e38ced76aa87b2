"""``str_replace`` and ``insert`` on decoded text: pure functions, every byte outside the edit kept.

The text handed in is the file decoded by ``vfs`` (BOM already set aside); line endings are never
normalised, so CRLF, LF, mixed and lone-CR files, tabs and a missing final newline all survive.

**Ours**:
* ``str_replace``: when ``old_str`` does not appear verbatim, the file has CRLF line endings and
  ``old_str`` uses bare LF, the match is retried with each LF of ``old_str`` allowed to be CRLF in the
  file, and ``new_str``'s bare LFs then become CRLF (a unique match is still required).
* ``insert``: in a CRLF file (decided at the insertion point) the inserted line breaks are CRLF.
* A failed match carries a diagnosis of the near miss (see :mod:`diagnose`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from editors.str_replace_editor import diagnose
from editors.str_replace_editor.render import split_lines
from vfs.errors import AmbiguousEdit, EditNotFound, InvalidArgument


class InsertLineError(InvalidArgument):
    """``insert_line`` outside ``[0, L]``."""


@dataclass(frozen=True)
class Match:
    start: int
    end: int


def find_all(content: str, needle: str) -> list[int]:
    """Offsets of the non-overlapping occurrences of ``needle`` (literal), left to right."""
    offsets: list[int] = []
    start = 0
    while True:
        index = content.find(needle, start)
        if index < 0:
            return offsets
        offsets.append(index)
        start = index + len(needle)


def line_at(content: str, offset: int) -> int:
    """The 1-based line (as ``view`` numbers them) holding ``offset``."""
    return content.count("\n", 0, offset) + 1


def uses_crlf(content: str) -> bool:
    return "\r\n" in content


def to_crlf(text: str) -> str:
    """Every bare LF of ``text`` becomes CRLF (existing CRLFs stay as they are)."""
    return re.sub(r"(?<!\r)\n", "\r\n", text)


def crlf_matches(content: str, old: str) -> list[Match]:
    """Matches of ``old`` where each of its bare LFs may be CRLF in ``content`` (only for CRLF files)."""
    if "\n" not in old or "\r" in old or not uses_crlf(content):
        return []
    pattern = re.compile(r"\r?\n".join(re.escape(part) for part in old.split("\n")))
    return [Match(m.start(), m.end()) for m in pattern.finditer(content)]


@dataclass(frozen=True)
class Replaced:
    text: str
    line: int  # 1-based line where the replaced text started
    adapted_line_endings: bool


def replace_unique(content: str, old: str, new: str, *, path: str) -> Replaced:
    """Replace the single occurrence of ``old``; ``EditNotFound`` / ``AmbiguousEdit`` otherwise."""
    offsets = find_all(content, old)
    matches = [Match(offset, offset + len(old)) for offset in offsets]
    adapted = False
    if not matches:
        matches = crlf_matches(content, old)
        adapted = bool(matches)
    if not matches:
        message = f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        hint = diagnose.diagnose(content, old)
        if hint:
            message += " " + hint
        raise EditNotFound(message, path=path)
    if len(matches) > 1:
        lines = ", ".join(str(line_at(content, m.start)) for m in matches)
        raise AmbiguousEdit(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines [{lines}]. "
            "Please ensure it is unique",
            path=path,
        )
    match = matches[0]
    replacement = new
    if adapted and "\r\n" in content[match.start : match.end]:
        replacement = to_crlf(new)
    text = content[: match.start] + replacement + content[match.end :]
    return Replaced(text, line_at(content, match.start), adapted)


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
