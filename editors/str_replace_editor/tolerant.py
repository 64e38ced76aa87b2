"""Tolerant matching for ``str_replace`` (**Ours**, issue 15): the model's usual slips, applied
only where the intent is unambiguous.

Each rule runs only after ``old_str`` failed to appear verbatim. It either returns a
:class:`Splice` (the edit, with one sentence saying which rule matched), refuses with an error
naming the cause, or returns ``None`` (the rule does not apply; the near-miss diagnosis follows).
None of them ever guesses between two places or two readings: ambiguity is a refusal.

The whitespace and unicode rules compare whole lines: ``old_str`` must cover whole lines of the
file (it may end with a line break). The replacement is rebuilt line by line: each line of
``new_str`` equal to a line of ``old_str`` (aligned by a line diff of the two) is written with the
file's own bytes for that line (its trailing whitespace, tabs, unicode, CR); changed lines are
written as sent, re-indented by the indentation map when the indentation differed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from backends.values import value
from editors.str_replace_editor import diagnose
from editors.str_replace_editor.source import Source
from vfs.errors import AmbiguousEdit, EditNotFound

#: A ``view`` line-number prefix copied into old_str: right-aligned number, two spaces or a tab.
LINE_NUMBER = re.compile(r"^ *(\d+)(?:  |\t)")
#: Lines that stand for "the file's lines here, unchanged" (stripped text).
ELLIPSES = frozenset({"...", "# ...", "// ..."})
MAX_ELIDED = 50


@value(frozen=True)
class Splice:
    """Replace ``content[start:end]`` with ``replacement``; ``note`` says which rule matched."""

    start: int
    end: int
    replacement: str
    note: str


class FileLines:
    """The file split on LF (a CR stays at the end of its line), with each line's offset."""

    def __init__(self, content: str) -> None:
        self.lines = content.split("\n")
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line) + 1

    def region(self, first: int, count: int, trailing_break: bool) -> tuple[int, int]:
        last = first + count - 1
        end = self.starts[last] + len(self.lines[last]) + (1 if trailing_break else 0)
        return self.starts[first], end


def windows(keys: Sequence[str], wanted: Sequence[str], *, need_break: bool = False) -> list[int]:
    """First indexes of the runs of ``keys`` equal to ``wanted`` (``need_break``: not the last line)."""
    n = len(wanted)
    limit = len(keys) - n + (0 if need_break else 1)
    return [i for i in range(max(limit, 0)) if keys[i] == wanted[0] and list(keys[i : i + n]) == list(wanted)]


def _lines_of(text: str) -> tuple[list[str], bool]:
    """``text``'s lines, and whether it ends with a line break (then the last, empty one is dropped)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        return lines[:-1], True
    return lines, False


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _where(lines: FileLines, firsts: Sequence[int]) -> str:
    numbers = [str(first + 1) for first in firsts[:10]]
    return f"line {numbers[0]}" if len(numbers) == 1 else f"lines [{', '.join(numbers)}]"


def rebuild(
    window: Sequence[str], old: Sequence[str], new: Sequence[str], change: Callable[[str], str], *, keep_cr: bool
) -> list[str]:
    """``new`` with its lines equal to a line of ``old`` taken from ``window`` (the file's bytes)."""
    crlf = any(line.endswith("\r") for line in window)
    out: list[str] = []
    matcher = SequenceMatcher(None, list(old), list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(window[i1:i2])
        else:
            out.extend(change(line.removesuffix("\r")) + ("\r" if crlf else "") for line in new[j1:j2])
    if out:  # the line break after the region is the file's: the last line ends as the file's did
        out[-1] = out[-1].removesuffix("\r") + ("\r" if keep_cr else "")
    return out


# -- indentation map --------------------------------------------------------------------------------


@value(frozen=True)
class IndentMap:
    """How the model's indentation becomes the file's; ``apply`` is ``None`` for an unmappable one."""

    describe: str
    apply: Callable[[str], str | None]


def _tabs(width: int) -> IndentMap:
    def apply(indent: str) -> str:
        spaces = len(indent.expandtabs(width))
        return "\t" * (spaces // width) + " " * (spaces % width)

    return IndentMap(f"{width} spaces of old_str are one tab of the file", apply)


def _spaces(width: int) -> IndentMap:
    return IndentMap(f"one tab of old_str is {width} spaces of the file", lambda indent: indent.expandtabs(width))


def _swap(model: str, file: str) -> IndentMap:
    def apply(indent: str) -> str | None:
        return file + indent[len(model) :] if indent.startswith(model) else None

    return IndentMap(f"old_str's indentation {model!r} is {file!r} in the file", apply)


def indent_map(pairs: Sequence[tuple[str, str]]) -> IndentMap | None:
    """The one map explaining every (model indentation, file indentation) pair, or ``None``.

    Tabs first (a tab-indented file, the model's spaces: one tab per ``width`` spaces), then a
    prefix swap (the model's common prefix replaced by the file's: lost, dedented or shifted text).
    """
    if not pairs:
        return None
    candidates: list[IndentMap] = []
    if any("\t" in f for _, f in pairs) and not any("\t" in m for m, _ in pairs):
        candidates += [_tabs(width) for width in (4, 8, 2)]
    if any("\t" in m for m, _ in pairs) and not any("\t" in f for _, f in pairs):
        candidates += [_spaces(width) for width in (4, 8, 2)]
    model, file = pairs[0]
    common = 0
    while common < min(len(model), len(file)) and model[-1 - common] == file[-1 - common]:
        common += 1
    candidates.append(_swap(model[: len(model) - common], file[: len(file) - common]))
    for candidate in candidates:
        if all(candidate.apply(m) == f for m, f in pairs):
            return candidate
    return None


# -- the whitespace and unicode passes --------------------------------------------------------------


@value(frozen=True)
class Pass:
    name: str  # what was ignored, for the reply and the refusals
    unicode: bool
    indentation: bool

    def key(self, line: str) -> str:
        text = diagnose.normalise_unicode(line) if self.unicode else line
        text = text.rstrip()
        return text.lstrip(" \t") if self.indentation else text


PASSES = (
    Pass("trailing whitespace", unicode=False, indentation=False),
    Pass("indentation", unicode=False, indentation=True),
    Pass("unicode punctuation", unicode=True, indentation=False),
    Pass("unicode punctuation and indentation", unicode=True, indentation=True),
)


def match_passes(content: str, old: str, new: str, *, path: str) -> Splice | None:
    """The first pass under which ``old`` matches whole lines exactly once, applied."""
    old_lines, trailing = _lines_of(old)
    if not any(line.strip() for line in old_lines):
        return None
    file = FileLines(content)
    for rule in PASSES:
        found = windows([rule.key(line) for line in file.lines], [rule.key(line) for line in old_lines],
                        need_break=trailing)  # fmt: skip
        if len(found) > 1:
            raise AmbiguousEdit(
                f"No replacement was performed: old_str does not appear verbatim in {path}; ignoring "
                f"{rule.name} it matches at {_where(file, found)}. Add surrounding lines to make it unique, "
                "using the file's exact text.",
                path=path,
            )
        if found:
            return _apply_pass(file, found[0], rule, old_lines, trailing, new, path=path)
    return None


def _apply_pass(
    file: FileLines, first: int, rule: Pass, old_lines: list[str], trailing: bool, new: str, *, path: str
) -> Splice | None:
    window = file.lines[first : first + len(old_lines)]
    change: Callable[[str], str] = lambda line: line  # noqa: E731 - the identity, replaced when re-indenting
    ignored = [] if rule.indentation or rule.unicode else ["trailing whitespace"]
    if rule.unicode:
        chars = {char for line in window for char in line if char in diagnose.UNICODE_MAP}
        ignored.append(f"{diagnose.name_unicode(chars) or 'unicode punctuation'} vs ASCII")
    reindented = ""
    if rule.indentation:
        pairs = [(_indent(m), _indent(f)) for m, f in zip(old_lines, window, strict=True) if m.strip() and f.strip()]
        mapping = indent_map(pairs)
        if mapping is None:
            return None  # no consistent re-indentation: the diagnosis names the indentation
        change = _reindent(mapping, first, path)
        if any(m != f for m, f in pairs):
            ignored.append(f"indentation ({mapping.describe})")
            reindented = " new_str was re-indented the same way;"
    new_lines, new_trailing = _lines_of(new)
    keep_cr = window[-1].endswith("\r") and (new_trailing or not trailing)
    out = rebuild(window, old_lines, new_lines, change, keep_cr=keep_cr)
    start, end = file.region(first, len(old_lines), trailing)
    replacement = "\n".join(out) + ("\n" if new_trailing and trailing else "")
    note = f"Matched ignoring {' and '.join(ignored)};{reindented} unchanged lines keep the file's bytes."
    return Splice(start, end, replacement, note)


def _reindent(mapping: IndentMap, first: int, path: str) -> Callable[[str], str]:
    def change(line: str) -> str:
        if not line.strip():
            return line
        indent = _indent(line)
        mapped = mapping.apply(indent)
        if mapped is None:
            raise EditNotFound(
                f"No replacement was performed: old_str matches at line {first + 1} of {path} if indentation is "
                f"ignored ({mapping.describe}), but new_str has a line indented less than that ({indent!r}), "
                "so its place in the file's indentation is unclear. Send old_str and new_str with the file's "
                "exact indentation.",
                path=path,
            )
        return mapped + line[len(indent) :]

    return change


# -- line numbers copied from the view -----------------------------------------------------------


def strip_line_numbers(old: str) -> tuple[str, int] | None:
    """``old`` without ``view`` prefixes, and the first number, when every non-blank line has one
    and the numbers are consecutive; else ``None``."""
    lines = old.split("\n")
    numbers: list[int] = []
    stripped: list[str] = []
    for line in lines:
        found = LINE_NUMBER.match(line)
        if found is None:
            if line.strip():
                return None
            stripped.append(line)
            continue
        numbers.append(int(found.group(1)))
        stripped.append(line[found.end() :])
    if not numbers or numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return None
    if len(numbers) != len([line for line in lines if line.strip()]):
        return None
    return "\n".join(stripped), numbers[0]


def strip_new_line_numbers(new: str) -> str:
    """``new`` without the ``view`` prefixes of the lines that carry one."""
    return "\n".join(LINE_NUMBER.sub("", line, count=1) for line in new.split("\n"))


# -- elision ----------------------------------------------------------------------------------------


def _gaps(file: FileLines, head: list[str], tail: list[str], trailing: bool) -> list[tuple[int, int]]:
    """(first line of ``head``, first line of ``tail``) wherever both match with 1-50 lines between."""
    keys = [line.removesuffix("\r") for line in file.lines]
    tails = set(windows(keys, tail, need_break=trailing))
    return [
        (h, h + len(head) + gap)
        for h in windows(keys, head)
        for gap in range(1, MAX_ELIDED + 1)
        if h + len(head) + gap in tails
    ]


def match_elision(content: str, old: str, new: str, *, path: str) -> Splice | None:
    """An ``...`` line of ``old`` standing for 1-50 unchanged lines of the file, kept as they are."""
    old_lines, trailing = _lines_of(old)
    marks = [i for i, line in enumerate(old_lines) if line.strip() in ELLIPSES]
    if not marks:
        return None
    refuse = f"No replacement was performed: old_str has an elision line (`...`) and does not appear verbatim in {path}"
    if len(marks) > 1:
        raise EditNotFound(f"{refuse}; only one `...` line can stand for the file's lines. Send the lines.", path=path)
    mark = marks[0]
    head, tail = old_lines[:mark], old_lines[mark + 1 :]
    new_lines, new_trailing = _lines_of(new)
    new_marks = [i for i, line in enumerate(new_lines) if line == old_lines[mark]]
    if not any(x.strip() for x in head) or not any(x.strip() for x in tail) or len(new_marks) != 1:
        raise EditNotFound(
            f"{refuse}; it is applied only when lines precede and follow the `...` line and new_str carries "
            "the same `...` line once (the elided lines are then kept). Send the lines instead.",
            path=path,
        )
    file = FileLines(content)
    pairs = _gaps(file, head, tail, trailing)
    if len(pairs) != 1:
        where = "nowhere" if not pairs else f"at {len(pairs)} places"
        raise EditNotFound(
            f"{refuse}; the lines around the `...` match {where} with 1-{MAX_ELIDED} lines between them. "
            "Send the exact lines instead of `...`.",
            path=path,
        )
    h, t = pairs[0]
    gap = file.lines[h + len(head) : t]
    window = file.lines[h : t + len(tail)]
    split = new_marks[0]
    model_old = [*head, *gap, *tail]
    model_new = [*new_lines[:split], *gap, *new_lines[split + 1 :]]
    keep_cr = window[-1].endswith("\r") and (new_trailing or not trailing)
    out = rebuild(window, model_old, model_new, lambda line: line, keep_cr=keep_cr)
    start, end = file.region(h, len(window), trailing)
    replacement = "\n".join(out) + ("\n" if new_trailing and trailing else "")
    note = (
        f"Matched the `...` line of old_str to lines {h + len(head) + 1}-{t} of the file, which were kept as they are."
    )
    return Splice(start, end, replacement, note)


def shifted_copies(content: Source, old: str) -> list[int]:
    """Offsets of the first lines of the places holding ``old``'s lines at one consistent
    indentation shift (the exact place included): two or more mean the model's indentation alone
    picks the place.

    Called on every exact match, so it never splits the file into lines: a place must hold
    ``old``'s most telling line (its longest, indentation and trailing whitespace aside) as a
    substring, so only the lines where ``str.find`` meets that text are compared as
    :class:`Pass` "indentation" compares them (the same result as comparing every line).
    """
    old_lines, trailing = _lines_of(old)
    rule = PASSES[1]
    wanted = [rule.key(line) for line in old_lines]
    anchor = max(range(len(wanted)), key=lambda i: len(wanted[i]))
    if not wanted[anchor]:
        return []
    copies = []
    for line_start in _lines_holding(content, wanted[anchor], rule):
        first = _lines_back(content, line_start, anchor)
        if first is None:
            continue
        window = _lines_from(content, first, len(old_lines), need_break=trailing)
        if window is None or [rule.key(line) for line in window] != wanted:
            continue
        pairs = [(_indent(m), _indent(f)) for m, f in zip(old_lines, window, strict=True) if m.strip() and f.strip()]
        if indent_map(pairs) is not None:
            copies.append(first)
    return copies


def _lines_holding(content: Source, key: str, rule: Pass) -> list[int]:
    """Start offsets of the lines whose ``rule.key`` is ``key`` (non-empty), found by ``str.find``."""
    out: list[int] = []
    at = content.find(key)
    while at >= 0:
        start = content.rfind("\n", 0, at) + 1
        end = content.find("\n", at)
        end = len(content) if end < 0 else end
        if rule.key(content[start:end]) == key:
            out.append(start)
        at = content.find(key, end + 1) if end < len(content) else -1
    return out


def _lines_back(content: Source, start: int, count: int) -> int | None:
    """The start of the line ``count`` lines before the one starting at ``start`` (``None``: before the file)."""
    for _ in range(count):
        if start == 0:
            return None
        start = content.rfind("\n", 0, start - 1) + 1
    return start


def _lines_from(content: Source, start: int, count: int, *, need_break: bool) -> list[str] | None:
    """``count`` lines from offset ``start`` (split on LF); ``None`` past the end of the file (or,
    with ``need_break``, when the last of them has no line break after it)."""
    out: list[str] = []
    for index in range(count):
        end = content.find("\n", start)
        if end < 0:
            if index < count - 1 or need_break or start > len(content):
                return None
            end = len(content)
        out.append(content[start:end])
        start = end + 1
    return out
