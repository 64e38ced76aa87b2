"""The edit-replay corpus: edit attempts on real code, each with one documented mistake.

Nothing here is stored in the repository: the files are read at run time from the running
interpreter's standard library and installed packages (``sysconfig`` paths), and every attempt is
derived from them by a ``random.Random(seed)``. The same interpreter, the same installed packages
and the same seed give the same attempts, byte for byte (the JSON output lists every source file).

An attempt holds:

- the files as they are on disk when the call arrives (``FileCase.original``), and the exact bytes
  the intended change should produce (``FileCase.expected``);
- the change as the model sends it, with the class's mistake: ``str_replace`` calls for the editor
  family, an ``apply_patch`` input for the patch family (``None`` where the class does not apply to
  that family: the patch-format mistakes have no editor form).

Model view versus disk: for the environment classes (tabs, CRLF, trailing whitespace, unicode
punctuation, BOM, stale context) the file on disk differs from what the model typed; the intended
change keeps every untouched byte of the file and writes the new lines in the file's own style
(tabs where the file indents with tabs, CRLF in a CRLF file).
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import random
import re
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: Every mistake class, in the order of the table, with a one-line description.
CLASSES: dict[str, str] = {
    "control": "no mistake",
    "tabs_as_spaces": "the file indents with tabs, the model sends spaces",
    "crlf_as_lf": "a CRLF file, old_str / context sent with LF",
    "trailing_ws_dropped": "trailing whitespace of a context line dropped",
    "unicode_normalized": "curly quotes, unicode dashes or non-breaking spaces sent as ASCII",
    "line_number_prefix": "line-number prefixes copied from the view output",
    "indentation_lost": "indentation lost or shifted by one level",
    "elision": "`...` standing for unchanged lines",
    "stale_context": "the file changed elsewhere since the view",
    "sent_twice": "the same change sent twice",
    "context_no_space": "patch context lines missing their leading space",
    "bad_header": "a wrong or missing @@ header",
    "missing_end_patch": "no *** End Patch line",
    "json_wrapped": "the patch sent as a JSON object",
    "hunks_out_of_order": "two hunks of one file in reverse file order",
    "bom": "a file with a UTF-8 BOM",
}
MISTAKES = [name for name in CLASSES if name != "control"]
#: Classes that only exist in the patch format: the editor family has no attempt for them.
PATCH_ONLY = {"context_no_space", "bad_header", "missing_end_patch", "json_wrapped", "hunks_out_of_order"}

INSERTED = "# NOTE(replay): reviewed"
STALE_LINE = "# edited by another tool since the view"
#: Unicode punctuation a model tends to send as ASCII (Codex's own normalisation set, plus NBSP).
UNICODE_ASCII = {
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\u202f": " ", "\u2009": " ",
}  # fmt: skip
_UNICODE_RE = re.compile("[" + "".join(UNICODE_ASCII) + "]")


@dataclass
class FileCase:
    path: str  # relative, "stdlib/json/decoder.py"; each tool puts it under its own root
    source: str  # the file it was read from
    viewed: bytes  # what the model viewed
    original: bytes  # on disk when the call arrives (differs from viewed only for stale_context)
    expected: bytes  # what the intended change produces


@dataclass
class Attempt:
    id: str
    cls: str
    change: str  # rename | constant | insert | delete | two_files | two_hunks
    files: list[FileCase]
    editor_calls: list[dict[str, object]] | None  # str_replace arguments, "path" relative
    patch: str | None  # the apply_patch input exactly as sent
    repeat: int = 1  # sent_twice: the whole turn is sent twice
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "class": self.cls,
            "change": self.change,
            "files": [f.path for f in self.files],
            "sources": [f.source for f in self.files],
            "note": self.note,
        }


# -- source files ----------------------------------------------------------------------------------


@cache
def source_files() -> tuple[tuple[str, str], ...]:
    """(label, absolute path) of every candidate .py file, sorted: stdlib, then site-packages."""
    out: list[tuple[str, str]] = []
    paths = sysconfig.get_paths()
    roots = [("stdlib", paths["stdlib"]), ("site", paths["purelib"])]
    seen: set[str] = set()
    for label, root in roots:
        if not root or root in seen or not os.path.isdir(root):
            continue
        seen.add(root)
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__",) and not d.startswith("."))
            if label == "stdlib" and os.path.relpath(directory, root).split(os.sep)[0] == "site-packages":
                dirs[:] = []
                continue
            for name in sorted(files):
                if name.endswith(".py"):
                    full = os.path.join(directory, name)
                    out.append((f"{label}/{os.path.relpath(full, root)}", full))
    return tuple(sorted(out))


@dataclass
class Source:
    label: str
    path: str
    lines: list[str]  # without line breaks; the file ends with a newline
    tree: ast.Module
    _nodes: list[ast.AST] | None = None
    _functions: list[ast.FunctionDef | ast.AsyncFunctionDef] | None = None

    @property
    def nodes(self) -> list[ast.AST]:
        if self._nodes is None:
            self._nodes = list(ast.walk(self.tree))
        return self._nodes


_LOADED: dict[str, Source | None] = {}
_UNICODE_BYTES = re.compile("|".join(UNICODE_ASCII).encode())


def load(label: str, path: str, need_unicode: bool = False) -> Source | None:
    """The file as lines and its syntax tree, or ``None`` when it does not suit the corpus."""
    if path in _LOADED:
        src = _LOADED[path]
        return src if src is None or not need_unicode or _UNICODE_RE.search("\n".join(src.lines)) else None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if need_unicode and not _UNICODE_BYTES.search(data):
        return None  # not cached: the cheap test says nothing about other classes
    _LOADED[path] = src = _load(label, path, data)
    return src


def _load(label: str, path: str, data: bytes) -> Source | None:
    if not 2_000 <= len(data) <= 60_000 or b"\r" in data or b"\t" in data or not data.endswith(b"\n"):
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (UnicodeDecodeError, SyntaxError, ValueError):
        return None
    if any(c in text for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        return None
    return Source(label, path, text[:-1].split("\n"), tree)


# -- changes ---------------------------------------------------------------------------------------


@dataclass
class Change:
    start: int  # 0-based line index; lines [start, end) are replaced by ``new``
    end: int
    new: list[str]
    anchor_lines: tuple[int, int] = (0, 0)  # (before, after): context the editor needs at least


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" "))]


def _functions(src: Source) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    if src._functions is None:
        src._functions = [
            node
            for node in src.nodes
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None
        ]
    return src._functions


def change_constant(src: Source, rng: random.Random, lo: int = 0, hi: int | None = None) -> Change | None:
    hi = len(src.lines) if hi is None else hi
    found = []
    for node in src.nodes:
        if (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and node.lineno == node.end_lineno
            and lo <= node.lineno - 1 < hi
        ):
            line = src.lines[node.lineno - 1]
            raw = line.encode()
            text = raw[node.col_offset : node.end_col_offset].decode("utf-8", "replace")
            if text.isdigit() and len(text) < 6:
                found.append((node.lineno - 1, len(raw[: node.col_offset].decode()), text))
    if not found:
        return None
    index, col, text = rng.choice(sorted(found))
    line = src.lines[index]
    new = line[:col] + str(int(text) + rng.choice((1, 2, 10))) + line[col + len(text) :]
    return Change(index, index + 1, [new])


def change_rename(src: Source, rng: random.Random) -> Change | None:
    candidates = []
    for fn in _functions(src):
        assert fn.end_lineno is not None
        if fn.end_lineno - fn.lineno > 60:
            continue
        names = sorted(
            {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and len(n.id) >= 3}
        )
        for name in names:
            pattern = re.compile(rf"\b{re.escape(name)}\b")
            hits = [i for i in range(fn.lineno - 1, fn.end_lineno) if pattern.search(src.lines[i])]
            if len(hits) >= 2 and hits[-1] - hits[0] <= 7:
                candidates.append((hits[0], hits[-1] + 1, name))
    if not candidates:
        return None
    start, end, name = rng.choice(candidates)
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    return Change(start, end, [pattern.sub(f"{name}_renamed", line) for line in src.lines[start:end]])


def _simple_statements(src: Source) -> list[list[ast.stmt]]:
    """Bodies of functions (and their blocks) as lists of single-line statements."""
    out = []
    for fn in _functions(src):
        for node in ast.walk(fn):
            for attr in ("body", "orelse"):
                body = getattr(node, attr, None)
                if isinstance(body, list) and len(body) >= 3 and all(isinstance(s, ast.stmt) for s in body):
                    out.append(body)
    return out


def change_insert(src: Source, rng: random.Random, lo: int = 0, hi: int | None = None) -> Change | None:
    hi = len(src.lines) if hi is None else hi
    spots = []
    for body in _simple_statements(src):
        for stmt in body[:-1]:
            if stmt.lineno == stmt.end_lineno and lo <= stmt.lineno - 1 < hi - 1:
                spots.append(stmt.lineno - 1)
    if not spots:
        return None
    index = rng.choice(sorted(set(spots)))
    line = src.lines[index]
    return Change(index + 1, index + 1, [_indent(line) + INSERTED], anchor_lines=(1, 0))


def change_delete(src: Source, rng: random.Random) -> Change | None:
    spots = []
    for body in _simple_statements(src):
        for first, second in itertools.pairwise(body[1:]):
            if first.lineno == first.end_lineno and second.lineno == second.end_lineno == first.lineno + 1:
                spots.append(first.lineno - 1)
    if not spots:
        return None
    index = rng.choice(sorted(set(spots)))
    return Change(index, index + 2, [], anchor_lines=(1, 1))


def change_near_top(src: Source, rng: random.Random) -> Change | None:
    """A change whose context must include line 1 (for the BOM class)."""
    for index in range(min(5, len(src.lines))):
        line = src.lines[index]
        if line.strip() and not line.startswith((" ", "#!")):
            return Change(index + 1, index + 1, [INSERTED], anchor_lines=(index + 1, 0))
    return None


SINGLE = ("rename", "constant", "insert", "delete")


def make_change(kind: str, src: Source, rng: random.Random) -> Change | None:
    if kind == "rename":
        return change_rename(src, rng)
    if kind == "constant":
        return change_constant(src, rng)
    if kind == "insert":
        return change_insert(src, rng)
    if kind == "delete":
        return change_delete(src, rng)
    raise ValueError(kind)


# -- the file as the model sees it and as it is on disk --------------------------------------------


def tabify(line: str) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return "\t" * (spaces // 4) + " " * (spaces % 4) + line[spaces:]


@dataclass
class Doc:
    """One file: ``view`` is what the model typed from, ``disk`` the same lines as stored."""

    src: Source
    view: list[str]
    disk: list[str]
    newline: str = "\n"
    bom: bool = False
    tabs: bool = False

    def style(self, line: str) -> str:
        return tabify(line) if self.tabs else line

    def encode(self, lines: list[str]) -> bytes:
        text = self.newline.join(lines) + self.newline
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode("utf-8")

    def applied(self, change: Change) -> list[str]:
        return self.disk[: change.start] + [self.style(x) for x in change.new] + self.disk[change.end :]


def _norm(line: str) -> str:
    return line.strip()


def _count(lines: list[str], block: list[str], key: Callable[[str], str] | None = None) -> int:
    """How many times ``block`` appears as consecutive lines of ``lines`` (compared through ``key``)."""
    n = len(block)
    if n == 0:
        return 0
    if key is not None:
        lines, block = [key(x) for x in lines], [key(x) for x in block]
    first = block[0]
    return sum(1 for i, line in enumerate(lines) if line == first and lines[i : i + n] == block)


def _unique(doc: Doc, a: int, b: int) -> bool:
    block = doc.view[a:b]
    if not any(x.strip() for x in block):
        return False
    return _count(doc.view, block) == 1 and _count(doc.disk, doc.disk[a:b]) == 1 and _count(doc.view, block, _norm) == 1


def editor_span(doc: Doc, change: Change, before: int = 1, after: int = 1) -> tuple[int, int] | None:
    """Lines [a, b) the model puts in old_str: the change plus a little context, unique in the file."""
    need_before, need_after = change.anchor_lines
    # as the files are written (Doc.encode): every line ends with its newline, the last one too,
    # so a span that is the file's last line still counts an old_str ending in a newline
    view_text, disk_text = "\n".join(doc.view) + "\n", doc.newline.join(doc.disk) + doc.newline
    for extra in range(6):
        a = max(0, change.start - max(before, need_before) - extra)
        b = min(len(doc.view), change.end + max(after, need_after) + extra)
        if (
            b > a
            and _unique(doc, a, b)
            # a literal tool matches substrings, not whole lines: old_str must occur once as text too
            and view_text.count("\n".join(doc.view[a:b])) == 1
            and disk_text.count(doc.newline.join(doc.disk[a:b])) == 1
        ):
            return a, b
    return None


def patch_span(doc: Doc, change: Change, context: int = 3) -> tuple[int, int] | None:
    for extra in range(4):
        a = max(0, change.start - context - extra)
        b = min(len(doc.view), change.end + context + extra)
        if _unique(doc, a, b):
            return a, b
    return None


@dataclass
class Hunk:
    doc: Doc
    change: Change
    span: tuple[int, int]  # patch lines
    header: str  # "@@" or "@@ <line>"

    def lines(self) -> list[tuple[str, str]]:
        a, b = self.span
        c = self.change
        out = [(" ", x) for x in self.doc.view[a : c.start]]
        out += [("-", x) for x in self.doc.view[c.start : c.end]]
        out += [("+", x) for x in c.new]
        out += [(" ", x) for x in self.doc.view[c.end : b]]
        return out


def header_for(doc: Doc, a: int) -> str:
    """``@@ def name(...):`` for the enclosing function when that line is unique, else ``@@``."""
    for fn in _functions(doc.src):
        assert fn.end_lineno is not None
        first = fn.lineno - 1
        if first < a < fn.end_lineno:
            line = doc.view[first]
            if line.lstrip().startswith(("def ", "async def ")) and _count(doc.view, [line], _norm) == 1:
                return "@@ " + line
    return "@@"


def render_hunk_lines(lines: list[tuple[str, str]]) -> list[str]:
    return [tag + text if (tag != " " or text) else "" for tag, text in lines]


def render_patch(files: list[tuple[str, list[tuple[str | None, list[tuple[str, str]]]]]], end: bool = True) -> str:
    out = ["*** Begin Patch"]
    for path, chunks in files:
        out.append(f"*** Update File: {path}")
        for header, lines in chunks:
            if header is not None:
                out.append(header)
            out += render_hunk_lines(lines)
    if end:
        out.append("*** End Patch")
    return "\n".join(out) + "\n"


# -- building attempts -----------------------------------------------------------------------------


class Skip(Exception):
    """This source file cannot host this attempt: the generator draws another."""


@dataclass
class Builder:
    rng: random.Random
    files: tuple[tuple[str, str], ...]
    need_unicode: bool = False

    def source(self) -> Source:
        for _ in range(500 if self.need_unicode else 50):
            label, path = self.rng.choice(self.files)
            src = load(label, path, self.need_unicode)
            if src is not None:
                return src
        raise Skip("no usable source file")


def _doc(src: Source, cls: str, rng: random.Random) -> Doc:
    doc = Doc(src, list(src.lines), list(src.lines))
    if cls == "tabs_as_spaces":
        doc.tabs = True
        doc.disk = [tabify(x) for x in src.lines]
    elif cls == "crlf_as_lf":
        doc.newline = "\r\n"
    elif cls == "bom":
        doc.bom = True
    return doc


def _file_case(doc: Doc, change: Change, path: str, stale: bool, rng: random.Random) -> FileCase:
    viewed = doc.encode(doc.disk)
    after = doc.applied(change)
    if not stale:
        return FileCase(path, doc.src.path, viewed, viewed, doc.encode(after))
    # Someone else inserts a line far from the change, after the model's view.
    where = 0 if change.start > 40 else len(doc.disk)
    if change.start <= 40 and len(doc.disk) - change.end < 40:
        raise Skip("no line far enough from the change")
    disk = [*doc.disk[:where], STALE_LINE, *doc.disk[where:]]
    expected_lines = [STALE_LINE, *after] if where == 0 else [*after, STALE_LINE]
    return FileCase(path, doc.src.path, viewed, doc.encode(disk), doc.encode(expected_lines))


def _editor_call(path: str, doc: Doc, change: Change, span: tuple[int, int]) -> dict[str, object]:
    a, b = span
    old = doc.view[a:b]
    new = doc.view[a : change.start] + change.new + doc.view[change.end : b]
    return {"command": "str_replace", "path": path, "old_str": "\n".join(old), "new_str": "\n".join(new)}


def _prefix(n: int) -> str:
    return f"{n:>6}  "


def build_attempt(builder: Builder, cls: str, index: int) -> Attempt:
    rng = builder.rng
    kinds = {
        "hunks_out_of_order": ["two_hunks"],
        "bom": ["near_top"],
        "unicode_normalized": ["unicode"],
        "elision": ["constant", "rename", "insert"],
        "bad_header": [*SINGLE, "two_hunks"],
    }.get(cls, [*SINGLE, "two_files"])
    kind = rng.choice(kinds)
    n_files = 2 if kind == "two_files" else 1
    docs: list[Doc] = []
    changes: list[list[Change]] = []
    for i in range(n_files):
        src = builder.source()
        if any(d.src.path == src.path for d in docs):
            raise Skip("same file twice")
        doc = _doc(src, cls, rng)
        if kind in SINGLE:
            c = make_change(kind, src, rng)
            cs = [c] if c else []
        elif kind == "two_files":
            c = make_change("constant" if i == 0 else "insert", src, rng)
            cs = [c] if c else []
        elif kind == "near_top":
            c = change_near_top(src, rng)
            cs = [c] if c else []
        elif kind == "unicode":
            cs = _unicode_change(doc, rng)
        elif kind == "two_hunks":
            first = change_constant(src, rng) or change_insert(src, rng)
            if first is None:
                raise Skip("no change")
            second = change_insert(src, rng, lo=first.end + 12) or change_constant(src, rng, lo=first.end + 12)
            cs = [first, second] if second else []
        else:
            raise ValueError(kind)
        if not cs:
            raise Skip(f"no {kind} change in this file")
        docs.append(doc)
        changes.append(cs)

    rel = [d.src.label for d in docs]
    if cls == "trailing_ws_dropped":
        _add_trailing_whitespace(docs, changes, rng)
    after = 5 if cls == "elision" else 1
    # Spans (unique in the file) for the editor and the patch.
    edit_spans: list[list[tuple[int, int]]] = []
    patch_hunks: list[list[Hunk]] = []
    for doc, cs in zip(docs, changes, strict=True):
        es, hs = [], []
        for c in cs:
            span = editor_span(doc, c, after=after)
            pspan = patch_span(doc, c, context=3 if cls != "elision" else 5)
            if span is None or pspan is None:
                raise Skip("no unique span")
            if cls == "bom" and (span[0] != 0 or pspan[0] != 0):
                raise Skip("the span does not reach line 1")
            if cls == "elision" and (span[1] - c.end < 5 or pspan[1] - c.end < 5):
                raise Skip("not enough lines after the change to elide")
            es.append(span)
            hs.append(Hunk(doc, c, pspan, header_for(doc, pspan[0])))
        if len(hs) == 2 and hs[0].span[1] > hs[1].span[0]:
            raise Skip("hunks overlap")
        edit_spans.append(es)
        patch_hunks.append(hs)
    if cls in ("trailing_ws_dropped", "unicode_normalized"):
        for doc, es, hs in zip(docs, edit_spans, patch_hunks, strict=True):
            marked = [i for i in range(len(doc.view)) if doc.view[i] != doc.disk[i]]
            for (a, b), h in zip(es, hs, strict=True):
                if not any(a <= i < b and h.span[0] <= i < h.span[1] for i in marked):
                    raise Skip("the marked line is outside the span")

    stale = cls == "stale_context"
    cases = []
    for doc, cs, path in zip(docs, changes, rel, strict=True):
        if len(cs) == 1:
            cases.append(_file_case(doc, cs[0], path, stale, rng))
        else:  # two hunks: apply the later one first so indices hold
            merged = list(doc.disk)
            for c in sorted(cs, key=lambda c: -c.start):
                merged[c.start : c.end] = [doc.style(x) for x in c.new]
            viewed = doc.encode(doc.disk)
            cases.append(FileCase(path, doc.src.path, viewed, viewed, doc.encode(merged)))

    # The editor calls, with the class's mistake.
    editor_calls: list[dict[str, object]] | None = None
    if cls not in PATCH_ONLY:
        editor_calls = []
        for doc, cs, es, path in zip(docs, changes, edit_spans, rel, strict=True):
            for c, span in zip(cs, es, strict=True):
                editor_calls.append(_mistaken_call(cls, doc, c, span, path, rng))

    # The patch, with the class's mistake.
    files: list[tuple[str, list[tuple[str | None, list[tuple[str, str]]]]]] = []
    for hs, path in zip(patch_hunks, rel, strict=True):
        chunks: list[tuple[str | None, list[tuple[str, str]]]] = [(h.header, h.lines()) for h in hs]
        files.append((path, chunks))
    patch, note = _mistaken_patch(cls, files, patch_hunks, rng)
    return Attempt(
        f"{cls}-{index:03d}", cls, "near_top" if kind == "near_top" else kind, cases, editor_calls, patch,
        repeat=2 if cls == "sent_twice" else 1, note=note,
    )  # fmt: skip


def _unicode_change(doc: Doc, rng: random.Random) -> list[Change]:
    """Insert a line next to a real line holding unicode punctuation; the model sends it as ASCII."""
    spots = [i for i, line in enumerate(doc.src.lines) if _UNICODE_RE.search(line) and line.strip()]
    if not spots:
        raise Skip("no unicode punctuation")
    index = rng.choice(spots)
    doc.view = list(doc.src.lines)
    doc.view[index] = _UNICODE_RE.sub(lambda m: UNICODE_ASCII[m.group()], doc.view[index])
    line = doc.src.lines[index]
    insert_at = index + 1 if rng.random() < 0.5 else index
    return [Change(insert_at, insert_at, [_indent(line) + INSERTED], anchor_lines=(1, 1))]


def _add_trailing_whitespace(docs: list[Doc], changes: list[list[Change]], rng: random.Random) -> None:
    """One unchanged non-blank line next to the change gets trailing whitespace on disk only."""
    for doc, cs in zip(docs, changes, strict=True):
        c = cs[0]
        for i in (c.start - 1, c.end, c.start - 2, c.end + 1):
            if 0 <= i < len(doc.disk) and doc.disk[i].strip() and not (c.start <= i < c.end):
                doc.disk[i] = doc.disk[i] + rng.choice(("  ", " ", "\t", "    "))
                break
        else:
            raise Skip("no line for trailing whitespace")


def _shift(lines: list[str], how: str, common: int) -> list[str]:
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif how == "lost":
            out.append(line[common:])
        elif how == "dedent":
            out.append(line[4:] if line.startswith("    ") else line.lstrip(" "))
        else:
            out.append("    " + line)
    return out


def _common_indent(lines: list[str]) -> int:
    return min((len(x) - len(x.lstrip(" ")) for x in lines if x.strip()), default=0)


def _mistaken_call(
    cls: str, doc: Doc, c: Change, span: tuple[int, int], path: str, rng: random.Random
) -> dict[str, object]:
    call = _editor_call(path, doc, c, span)
    old, new = str(call["old_str"]).split("\n"), str(call["new_str"]).split("\n")
    a, b = span
    if cls == "line_number_prefix":
        call["old_str"] = "\n".join(_prefix(a + 1 + i) + line for i, line in enumerate(old))
    elif cls == "indentation_lost":
        common = _common_indent(old)
        how = rng.choice(("lost", "dedent", "indent")) if common >= 4 else "indent"
        call["old_str"] = "\n".join(_shift(old, how, common))
        call["new_str"] = "\n".join(_shift(new, how, common))
    elif cls == "elision":
        # old_str: ... the change, 1 line after, "...", the 5th line after; new_str the same.
        tail = b - c.end
        ell = _indent(doc.view[c.end + 1]) + "..."
        old = [*doc.view[a : c.end + 1], ell, *doc.view[b - (tail - 4) : b]]
        new = doc.view[a : c.start] + c.new + doc.view[c.end : c.end + 1] + [ell] + doc.view[b - (tail - 4) : b]
        call["old_str"], call["new_str"] = "\n".join(old), "\n".join(new)
    return call


def _mistaken_patch(
    cls: str,
    files: list[tuple[str, list[tuple[str | None, list[tuple[str, str]]]]]],
    hunks: list[list[Hunk]],
    rng: random.Random,
) -> tuple[str, str]:
    note = ""
    if cls == "line_number_prefix":
        new_files = []
        for (path, chunks), hs in zip(files, hunks, strict=True):
            new_chunks = []
            for (header, lines), h in zip(chunks, hs, strict=True):
                n = h.span[0] + 1
                out = []
                for tag, text in lines:
                    if tag == "+":
                        out.append((tag, text))
                    else:
                        out.append((tag, _prefix(n) + text))
                        n += 1
                new_chunks.append((header, out))
            new_files.append((path, new_chunks))
        files = new_files
    elif cls == "indentation_lost":
        new_files = []
        for path, chunks in files:
            new_chunks = []
            for header, lines in chunks:
                common = _common_indent([t for _, t in lines])
                how = rng.choice(("lost", "dedent", "indent")) if common >= 4 else "indent"
                note = how
                texts = _shift([t for _, t in lines], how, common)
                new_chunks.append((header, [(tag, t) for (tag, _), t in zip(lines, texts, strict=True)]))
            new_files.append((path, new_chunks))
        files = new_files
    elif cls == "elision":
        new_files = []
        for path, chunks in files:
            new_chunks = []
            for header, lines in chunks:
                last_change = max(i for i, (tag, _) in enumerate(lines) if tag != " ")
                tail = lines[last_change + 1 :]
                ell = (" ", _indent(tail[1][1]) + "...")
                new_chunks.append((header, [*lines[: last_change + 2], ell, *tail[-1:]]))
            new_files.append((path, new_chunks))
        files = new_files
    elif cls == "context_no_space":
        files = [
            (path, [(header, [("" if tag == " " else tag, t) for tag, t in lines]) for header, lines in chunks])
            for path, chunks in files
        ]
    elif cls == "bad_header":
        path, chunks = files[0]
        doc = hunks[0][0].doc
        if len(chunks) == 2:
            note = "missing"
            chunks = [chunks[0], (None, chunks[1][1])]
        else:
            note = rng.choice(("unified", "wrong"))
            h = hunks[0][0]
            if note == "unified":
                a, b = h.span
                new_len = (b - a) - (h.change.end - h.change.start) + len(h.change.new)
                header = f"@@ -{a + 1},{b - a} +{a + 1},{new_len} @@"
            else:
                header = "@@ def " + rng.choice(("main", "setup", "run", "handle")) + "_replay_helper(self):"
                if any(header[3:].strip() in x for x in doc.view):
                    raise Skip("the wrong header exists")
            chunks = [(header, chunks[0][1])]
        files = [(path, chunks), *files[1:]]
    elif cls == "hunks_out_of_order":
        path, chunks = files[0]
        files = [(path, list(reversed(chunks)))]
    text = render_patch(files, end=cls != "missing_end_patch")
    if cls == "json_wrapped":
        key = rng.choice(("input", "patch"))
        note = key
        text = json.dumps({key: text})
    return text, note


def generate(seed: int, per_class: int, classes: list[str] | None = None) -> list[Attempt]:
    """``per_class`` attempts for each class, deterministically from ``seed``."""
    files = source_files()
    out: list[Attempt] = []
    for cls in classes or list(CLASSES):
        builder = Builder(random.Random(f"{seed}:{cls}"), files, need_unicode=cls == "unicode_normalized")
        made, tries = 0, 0
        while made < per_class:
            tries += 1
            if tries > per_class * 200:
                raise RuntimeError(f"could not generate {per_class} attempts of class {cls} ({made} made)")
            try:
                attempt = build_attempt(builder, cls, made)
            except Skip:
                continue
            out.append(attempt)
            made += 1
    return out
