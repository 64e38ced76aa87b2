"""Differential testing against Codex's real ``apply_patch`` binary (npm ``@openai/codex``, found by
:func:`benchmarks.peers.codex`; preserve-line-endings mode, which the spec makes ours always).

Two campaigns over paths that stay inside the directory:

- ``differential``: random files (CRLF/LF/lone CR/mixed, BOMs, unicode punctuation, non-text) and a
  random patch (adds, deletes, updates, moves, EOF anchors, damage) over the same vocabulary; most
  of these patches fail on both sides, so it probes the parser and the refusals;
- ``differential-derived``: patches cut from the files they edit (:func:`derived_patch`), as a
  model writes them: context and removed lines taken from the file, now and then with a stray
  space, a lost indent or typographic punctuation, ``@@`` lines naming an earlier line, end-of-file
  markers, pure insertions, moves, adds and deletes; most of them apply, so it probes where each
  side puts a change.

Codex runs in one copy of the tree, ``editors.apply_patch`` in another; outcomes (success or
failure) and the resulting trees are compared byte for byte. Every difference is put in a class:
one of the spec's deliberate differences, or ``unexplained`` (a bug on one side), which fails the
trial.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vfs
from backends.local import LocalBackend
from benchmarks.reliability import Report
from benchmarks.reliability.fuzz import derived_cases, file_bytes, model_lines, patch_text
from editors.apply_patch import apply_patch

SAFE_PATHS = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "new.txt", "d", "a b.txt", "ü.txt"]
UNSAFE = re.compile(r"(File|to):.*(^|[\s/])(\.\.|/)|(File|to): */")
files = st.dictionaries(st.sampled_from(["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"]), file_bytes(), max_size=4)


def codex_binary() -> str | None:
    from benchmarks.peers import codex

    peer = codex()
    return peer.path if peer.available else None


#: Codex run on the case's tree with another patch text: the tree after it (``None`` if it
#: failed) and what it printed on stderr.
Rerun = Callable[[str], "tuple[dict[str, bytes | None] | None, bytes]"]

#: Codex's preserve-line-endings mode, which the spec makes ours always.
CODEX_ENV = {**os.environ, "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1"}


def codex_rerun(binary: str, tree: dict[str, bytes], workdir: str) -> Rerun:
    """Codex run on a fresh copy of ``tree`` in ``workdir`` (made and removed each time)."""

    def rerun(text: str) -> tuple[dict[str, bytes | None] | None, bytes]:
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
        _write_tree(workdir, tree)
        try:
            done = subprocess.run([binary, text], cwd=workdir, env=CODEX_ENV, capture_output=True, timeout=20)
            return (_read_tree(workdir) if done.returncode == 0 else None), done.stderr
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    return rerun


def _write_tree(root: str, tree: dict[str, bytes]) -> None:
    for rel, data in tree.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def _read_tree(root: str) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".vfs"]
        for f in filenames:
            with open(os.path.join(dirpath, f), "rb") as handle:
                out[os.path.relpath(os.path.join(dirpath, f), root)] = handle.read()
    return out


def classify(
    tree: dict[str, bytes],
    text: str,
    codex_ok: bool,
    ours_ok: bool,
    codex_after: Any,
    ours_after: Any,
    codex_err: bytes = b"",
    rerun: Rerun | None = None,
    depth: int = 0,
) -> str:
    """Name the spec's deliberate difference that explains a mismatch, or ``unexplained``. Each
    class is named only where its cause is in the case: in the section of the patch for a file
    that differs (or, where Codex failed, the file its error names); a refusal of ours that
    changed a byte is never explained. ``rerun``: Codex on the same tree and another patch text
    (the tree after it, ``None`` if it failed), to see what Codex did with one section."""
    if not ours_ok and ours_after != tree:
        return "unexplained: ours refused and changed the tree"
    if not codex_ok and not ours_ok:
        return "atomic: both failed, Codex left a partial change, ours nothing"
    sections = _sections(text)
    if codex_ok and ours_ok:
        differing = {path for path in {*codex_after, *ours_after} if codex_after.get(path) != ours_after.get(path)}
        if differing and all(_bom_moved(codex_after.get(path), ours_after.get(path)) for path in differing):
            return "BOM: the trees differ only where the BOM is (ours keeps it first, Codex moves it with its line)"
        blamed = {path for path, (_, to) in sections.items() if path in differing or to in differing}
    else:  # Codex failed: the cause is in the file its error names
        differing = set()
        error = codex_err.decode("utf-8", "replace")
        blamed = {path for path in sections if f"/{path}" in error or f" {path}" in error}
    if ours_ok and any(_bom_line_in(tree.get(path), sections[path][0]) for path in blamed):
        return "BOM: ours reads an updated file's BOM apart from its first line (Codex does not)"
    lines = text.splitlines()
    if any(a.startswith("@@") and b.startswith("@@") for a, b in itertools.pairwise(lines)):
        return "consecutive @@ anchors (ours accepts, Codex rejects)"
    if any(_PURE_ADDITION.search("\n".join(sections[path][0])) for path in blamed):
        return "pure addition after @@ context (ours inserts after the context, Codex appends)"
    if any(to is not None and path.strip() == to.strip() for path, (_, to) in sections.items()):
        return "Move to the file's own path (ours updates in place, Codex deletes)"
    updated = [tree[path] for path in sections if path in tree]
    if not ours_ok and any(b"\x00" in data or not _utf8(data) for data in updated):
        return "non-text file (ours FS_NOT_TEXT)"
    reindented = codex_ok and ours_ok and all(_same_but_indentation(codex_after, ours_after, p) for p in differing)
    return _apply_patch_recovery(tree, text, codex_ok, ours_ok, ours_after, reindented, rerun, depth)


#: A chunk of ``+`` lines alone after an ``@@`` line, ending the section or followed by another
#: chunk (with ``*** End of File`` both sides append).
_PURE_ADDITION = re.compile(r"^@@ .+\n(?:\+[^\n]*\n)*\+[^\n]*(?=\n@@|\n?\Z)", re.MULTILINE)


def _sections(text: str) -> dict[str, tuple[list[str], str | None]]:
    """Each updated path's lines in the patch (its chunks) and the path it moves to."""
    sections: dict[str, tuple[list[str], str | None]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("*** Update File:"):
            current = line.partition(":")[2].strip()
            sections[current] = ([], None)
        elif current is not None and line.startswith("*** Move to:"):
            sections[current] = (sections[current][0], line.partition(":")[2].strip())
        elif line.startswith("*** ") and line != "*** End of File":
            current = None
        elif current is not None:
            sections[current][0].append(line)
    return sections


def _bom_moved(codex: bytes | None, ours: bytes | None) -> bool:
    """Whether ours starts with the BOM and Codex has it once, at the start of some line, the rest equal."""
    bom = b"\xef\xbb\xbf"
    if codex is None or ours is None or not ours.startswith(bom) or codex.count(bom) != 1:
        return False
    return (codex.startswith(bom) or b"\n" + bom in codex) and codex.replace(bom, b"") == ours[len(bom) :]


def _bom_line_in(data: bytes | None, section: list[str]) -> bool:
    """Whether ``data`` starts with a BOM and its first line (where Codex sees the BOM) is among the
    patch's lines for it (as Codex's loosest pass compares lines: trimmed, typographic punctuation
    as ASCII), or the file is the BOM alone (Codex reads it as a line)."""
    if data is None or not data.startswith(b"\xef\xbb\xbf") or not _utf8(data):
        return False
    lines = model_lines(data)
    if not lines:
        return True
    from editors.apply_patch.matcher import normalise_punctuation as loose  # (Codex's loosest pass)

    first = loose(lines[0])
    return any(
        (line[:1] in (" ", "-") and loose(line[1:]) == first) or (line.startswith("@@") and loose(line[2:]) == first)
        for line in section
    )


def _same_but_indentation(codex_after: Any, ours_after: Any, path: str) -> bool:
    codex, ours = codex_after.get(path), ours_after.get(path)
    if codex is None or ours is None:
        return False
    return [line.lstrip() for line in codex.splitlines()] == [line.lstrip() for line in ours.splitlines()]


def _apply_patch_recovery(
    tree: dict[str, bytes],
    text: str,
    codex_ok: bool,
    ours_ok: bool,
    ours_after: Any,
    reindented: bool,
    rerun: Rerun | None,
    depth: int,
) -> str:
    """docs/differences.md, Codex (apply_patch): a recovery (it leaves a note) or a refusal of ours."""
    from editors.apply_patch import errors, parser
    from editors.apply_patch.applier import plan_patch

    try:
        patch = parser.parse_patch(text, context_without_space=True)
        plan = plan_patch(patch, tree.get)
    except errors.PatchAlreadyApplied as exc:
        if ours_ok or not codex_ok or rerun is None or not _written_again(tree, text, patch, exc.parts, rerun):
            return "unexplained"
        return "already applied: ours refuses, Codex writes again lines that are there"
    except errors.PatchIndentationMismatch as exc:
        if ours_ok or not codex_ok or not _matched_only_trimmed(tree, text, exc.path, rerun):
            return "unexplained"
        return "indentation: ours refuses a chunk that matches only with other indentation, Codex writes it"
    except errors.ApplyPatchError:
        return "unexplained"
    if ours_ok and not codex_ok and not _parses_strictly(text):
        if not _as_if_sent_right(tree, _with_spaces(text), ours_after, rerun, depth):
            return "unexplained: ours read a line as context, and Codex, the space put back, gives another result"
        return "context line without its leading space: ours reads it as context, Codex refuses the patch"
    if patch.notes and not codex_ok and not plan.notes:  # the parser's: a missing End Patch
        if not _as_if_sent_right(tree, text.rstrip("\n") + "\n*** End Patch\n", ours_after, rerun, depth):
            return "unexplained: ours applied a patch without its End Patch, and Codex, the line added, gives another result"
        return "missing End Patch: ours applies the complete hunks, Codex refuses the patch"
    if plan.notes and not codex_ok:
        if not any(note.endswith("applied in file order.") for note in plan.notes):
            return "recovery of ours where Codex fails"
        return _out_of_order(tree, _in_file_order(text, plan.notes), ours_after, rerun, depth)
    if reindented and any(note.startswith("Re-indented") for note in plan.notes):
        return "re-indented: ours gives the added lines the file's indentation, Codex writes them as sent"
    return "unexplained"


_OUT_OF_ORDER = re.compile(
    r"^(?:Chunk (\d+)|A chunk) of (.+) is before the previous one in the file; applied in file order\.$"
)


def _in_file_order(text: str, notes: list[str]) -> list[str]:
    """The patch as it reads with a section's chunks that ours found out of file order mended, each
    way that keeps Codex's meaning: the named chunk moved earlier, each place it can go (the note
    names the chunk, or only its file: then every chunk is tried), or every chunk a section of its
    own, in the patch's order (each then searched from the file's start: where a chunk's ``@@``
    line is among lines an earlier one in the file removes, no order of one section applies)."""
    head, sections = _hunk_texts(text)
    out: list[str] = []

    def whole(k: int, body: list[str]) -> str:
        rest = [*itertools.chain(*sections[:k]), *body, *itertools.chain(*sections[k + 1 :])]
        return "\n".join([*head, *rest, "*** End Patch", ""])

    for note in notes:
        named = _OUT_OF_ORDER.match(note)
        if named is None:
            continue
        for k, section in enumerate(sections):
            if (
                not section[0].strip().startswith("*** Update File:")
                or section[0].partition(":")[2].strip() != named[2]
            ):
                continue
            lead, chunks = _chunk_blocks(section)
            for number in [int(named[1])] if named[1] else range(2, len(chunks) + 1):
                for to in range(min(number, len(chunks) + 1) - 1):
                    moved = [*chunks[:to], chunks[number - 1], *chunks[to : number - 1], *chunks[number:]]
                    out.append(whole(k, [*lead, *itertools.chain(*moved)]))
            target = lead[-1].partition(":")[2].strip()  # (after a Move to, the file is there)
            apart = [*lead, *chunks[0]]
            for chunk in chunks[1:]:
                apart += [f"*** Update File: {target}", *chunk]
            out.append(whole(k, apart))
    return out


def _chunk_blocks(section: list[str]) -> tuple[list[str], list[list[str]]]:
    """An update section as its header lines (``*** Update File``, ``*** Move to``) and its chunks'
    lines, each from its ``@@`` line to the next (a first chunk without one is given a bare ``@@``,
    so that it can go elsewhere)."""
    lead = [section[0]]
    rest = section[1:]
    if rest and rest[0].startswith("*** Move to:"):
        lead.append(rest.pop(0))
    chunks: list[list[str]] = []
    for line in rest:
        if line.startswith("@@"):
            chunks.append([line])
        elif not chunks:
            chunks.append(["@@", line])
        else:
            chunks[-1].append(line)
    return lead, chunks


def _written_again(tree: dict[str, bytes], text: str, patch: Any, parts: list[Any], rerun: Rerun) -> bool:
    """Whether, for each section ours found already present, the present lines are there and
    Codex wrote them again.

    Codex is run on the patch up to that section, up to the one before, and up to that section
    with its chunks that add only present lines left out (the rest of the section). Every present
    line that is one of the section's ``+`` lines (a range holds the context around them too) must
    be in the file once the rest of the section is applied (it is there, whatever else the section
    does: not a line another chunk removes) and once more after the whole section (Codex wrote it
    again). For an added file: Codex wrote the content the file had. The baseline is Codex's own
    state before the section, so a file an earlier section moved or changed is judged as Codex
    saw it."""
    from editors.apply_patch.parser import AddFile, DeleteFile

    head, sections = _hunk_texts(text)
    hunks = [hunk for hunk in patch.hunks if not isinstance(hunk, DeleteFile)]
    if len(sections) != len(patch.hunks) or len(hunks) != len(parts):
        return False
    indices = [k for k, hunk in enumerate(patch.hunks) if not isinstance(hunk, DeleteFile)]
    present = [(indices[n], ranges) for n, (_, ranges, _) in enumerate(parts) if ranges]

    def run(k: int, body: list[str]) -> dict[str, bytes | None] | None:
        return rerun("\n".join([*head, *itertools.chain(*sections[:k]), *body, "*** End Patch", ""]))[0]

    for k, ranges in present:
        hunk = patch.hunks[k]
        before = run(k, []) if k else dict(tree)
        after = run(k, sections[k])
        if before is None or after is None:
            return False
        source = before.get(hunk.path)
        target = after.get(getattr(hunk, "move_path", None) or hunk.path)
        if source is None or target is None or not _utf8(source) or not _utf8(target):
            return False
        if isinstance(hunk, AddFile):
            if source != target:
                return False
            continue
        lines = model_lines(source)
        found = [line for first, last in ranges for line in lines[first - 1 : last]]
        wanted = _added_lines(sections[k], found)
        lead, chunks = _chunk_blocks(sections[k])
        rest = [chunk for chunk in chunks if not _adds_only(chunk, found)]
        if rest:
            done = run(k, [*lead, *itertools.chain(*rest)])
            source = done.get(getattr(hunk, "move_path", None) or hunk.path) if done is not None else None
            if source is None or not _utf8(source):
                return False
        # (counted trimmed: a chunk matched with other indentation has its lines found so, and
        # Codex writes them as sent, ours in the file's indentation)
        kept, written = _trimmed(model_lines(source)), _trimmed(model_lines(target))
        if not wanted or any(kept[line] < n or written[line] < kept[line] + n for line, n in _trimmed(wanted).items()):
            return False  # a present line that the rest takes away, or that Codex did not write again
    return bool(present)


def _trimmed(lines: Iterable[str] | Counter[str]) -> Counter[str]:
    """How many times each line occurs, surrounding space trimmed."""
    counts: Counter[str] = Counter()
    for line, n in lines.items() if isinstance(lines, Counter) else ((line, 1) for line in lines):
        counts[line.strip()] += n
    return counts


def _adds_only(chunk: list[str], found: list[str]) -> bool:
    """Whether a chunk adds lines, each of them among ``found`` (the present lines ours found)."""
    added = {line[1:].removesuffix("\r").strip() for line in chunk if line.startswith("+")}
    return bool(added) and added <= {line.strip() for line in found}


def _added_lines(section: list[str], present: list[str]) -> Counter[str]:
    """The lines of ``present`` (a range ours found, context around the added lines included) that
    are the section's ``+`` lines: as written, or failing that, with surrounding space trimmed; a
    line as many times as the section adds it (a context line may read as an added one)."""
    added = [line[1:].removesuffix("\r") for line in section if line.startswith("+")]
    exact = Counter(line for line in present if line in added) & Counter(added)
    if exact:
        return exact
    trimmed = Counter(line.strip() for line in added)
    loose = Counter(line for line in present if line.strip() in trimmed)
    return Counter({line: min(n, trimmed[line.strip()]) for line, n in loose.items()})


def _hunk_texts(text: str) -> tuple[list[str], list[list[str]]]:
    """The patch's lines before its first file section, and each section's lines (End Patch and
    what follows left out)."""
    head: list[str] = []
    sections: list[list[str]] = []
    for line in text.splitlines():
        if line.strip().startswith(("*** Add File: ", "*** Delete File: ", "*** Update File: ")):
            sections.append([line])
        elif line.strip() == "*** End Patch":
            break
        else:
            (sections[-1] if sections else head).append(line)
    return head, sections


def _matched_only_trimmed(tree: dict[str, bytes], text: str, path: str | None, rerun: Rerun | None) -> bool:
    """Whether a section updating ``path`` has a chunk whose old lines are not the file's lines as
    they stand (nor with trailing space trimmed, Codex's first two passes) anywhere, but are as its
    loosest pass reads lines (trimmed, typographic punctuation as ASCII): Codex takes them and
    writes the patch's indentation. The file as Codex had it before that section (``rerun`` on the
    sections before it)."""
    from editors.apply_patch.matcher import normalise_punctuation as loose  # (Codex's loosest pass)

    head, sections = _hunk_texts(text)
    for k, section in enumerate(sections):
        name = section[0].partition(":")[2].strip()
        if not section[0].strip().startswith("*** Update File:") or path is None:
            continue
        if path != name and not path.endswith("/" + name):
            continue
        if k and rerun is None:
            return False
        before = rerun("\n".join([*head, *itertools.chain(*sections[:k]), "*** End Patch", ""]))[0] if k else tree
        data = before.get(name) if before is not None else None
        if data is None or not _utf8(data):
            continue
        file_lines = model_lines(data)
        for chunk, at_end in _chunks(section[1:]):
            if not _found(file_lines, chunk, str.rstrip, at_end) and _found(file_lines, chunk, loose, at_end):
                return True
    return False


def _chunks(section: list[str]) -> list[tuple[list[str], bool]]:
    """A section's chunks as their old lines (context and removed lines, the prefix cut), and
    whether each ends with ``*** End of File``."""
    chunks: list[tuple[list[str], bool]] = [([], False)]
    for line in section:
        if line.startswith("@@"):
            chunks.append(([], False))
        elif line.strip() == "*** End of File":
            chunks[-1] = (chunks[-1][0], True)
        elif line[:1] in (" ", "-"):
            chunks[-1][0].append(line[1:])
        elif not line:
            chunks[-1][0].append("")
    return [(chunk, at_end) for chunk, at_end in chunks if chunk]


def _found(lines: list[str], chunk: list[str], norm: Callable[[str], str], at_end: bool = False) -> bool:
    """Whether ``chunk`` is lines of the file as ``norm`` reads them; with ``*** End of File``,
    its last lines only (Codex looks there alone)."""
    wanted = [norm(line) for line in chunk]
    seen = [norm(line) for line in lines]
    first = len(seen) - len(wanted) if at_end else 0
    return any(seen[at : at + len(wanted)] == wanted for at in range(max(first, 0), len(seen) - len(wanted) + 1))


def _with_spaces(text: str) -> str:
    """The patch with the leading space put back on each update line that lacks one (the lines
    ours reads as context, where Codex stops)."""
    out: list[str] = []
    updating = False
    for line in text.split("\n"):
        if line.startswith("*** "):
            updating = line.startswith(("*** Update File:", "*** Move to:")) or (
                updating and line.startswith("*** End of File")
            )
        elif updating and line and line[:1] not in (" ", "+", "-", "@", "\t"):
            line = " " + line
        out.append(line)
    return "\n".join(out)


#: How many mendings of one patch are tried one upon another (a context line's space put back,
#: then its chunks put in file order): a mended patch that Codex still refuses is not mended again
#: without end.
_MENDS = 2


def _out_of_order(tree: dict[str, bytes], mended: list[str], ours_after: Any, rerun: Rerun | None, depth: int) -> str:
    """Chunks ours applied in file order: explained where Codex, given them in an order it takes,
    gives our result; not compared where it takes none of them (two chunks at the end of the file,
    an ``@@`` line among lines another chunk removes: no reading of the patch is Codex's);
    unexplained where Codex takes one and gives another result."""
    if rerun is None or depth >= _MENDS:
        return "unexplained: chunks out of file order, and no Codex to ask"
    refused = 0
    for text in mended:
        after, _ = rerun(text)
        if after is None:
            refused += 1
        elif after == ours_after or not classify(
            tree, text, True, True, after, ours_after, rerun=rerun, depth=depth + 1
        ).startswith("unexplained"):
            return "chunks out of file order: ours applies each where it is, Codex refuses the patch"
    if refused == len(mended):
        return "chunks out of file order: ours applies each where it is; Codex takes no order of them (not compared)"
    return "unexplained: ours applied chunks in file order, and Codex, given them so, gives another result"


def _as_if_sent_right(tree: dict[str, bytes], mended: str, ours_after: Any, rerun: Rerun | None, depth: int) -> bool:
    """Whether Codex, given the patch as the model meant it, applies it, and its result is ours
    (or differs from ours only by a deliberate difference of its own)."""
    if rerun is None or depth >= _MENDS:
        return False
    after, err = rerun(mended)
    if after == ours_after:
        return True
    ok = after is not None
    label = classify(tree, mended, ok, True, after if ok else tree, ours_after, err, rerun, depth + 1)
    return not label.startswith("unexplained")


def _parses_strictly(text: str) -> bool:
    """Whether Codex's reading of the patch (no context line without its space) accepts it."""
    from editors.apply_patch import errors, parser

    try:
        parser.parse_patch(text)
    except errors.ApplyPatchError:
        return False
    return True


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def run(trials: int = 10_000, *, seed: int = 0, binary: str | None = None) -> Report:
    """Random files and random patches over the same vocabulary (mostly refused on both sides)."""
    del seed  # hypothesis draws the cases; each run tries new ones
    random_cases = st.tuples(files, patch_text(paths=SAFE_PATHS, free_paths=False))
    return _campaign("differential-codex", random_cases, trials, binary)


def run_derived(trials: int = 10_000, *, seed: int = 0, binary: str | None = None) -> Report:
    """Patches cut from the files they edit (mostly applied on both sides)."""
    del seed
    return _campaign("differential-codex-derived", derived_cases, trials, binary)


def _campaign(name: str, cases: Any, trials: int, binary: str | None) -> Report:
    report = Report(name)
    binary = binary or codex_binary()
    if binary is None:
        report.notes.append("Codex apply_patch binary not found: skipped")
        return report.finish()
    env = CODEX_ENV
    with tempfile.TemporaryDirectory() as tmp:
        counter = [0]

        @settings(max_examples=trials, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(cases)
        def case(drawn: tuple[dict[str, bytes], str]) -> None:
            tree, text = drawn
            if UNSAFE.search(text) or "\x00" in text:
                report.count("skipped: a path that could leave the directory")
                return
            counter[0] += 1
            left = os.path.join(tmp, f"c{counter[0]}")
            right = os.path.join(tmp, f"o{counter[0]}")
            for root in (left, right):
                os.makedirs(root)
                _write_tree(root, tree)
            try:
                proc = subprocess.run([binary, text], cwd=left, env=env, capture_output=True, timeout=20)
            except (OSError, ValueError) as exc:  # an argument the OS refuses (too long, ...)
                report.count(f"skipped: cannot pass to Codex ({type(exc).__name__})")
                return
            codex_ok = proc.returncode == 0
            ws = vfs.Workspace(LocalBackend(right), mount=os.path.realpath(right))
            ours_err = ""
            try:
                apply_patch(ws, text)
                ours_ok = True
            except vfs.VfsError as exc:
                ours_ok, ours_err = False, f"{exc.code}: {exc!s:.200}"
            except Exception as exc:  # noqa: BLE001 - the promise: every refusal is a coded error
                report.fail(f"uncaught {type(exc).__name__}: {exc!s:.200} files={tree!r:.300} patch={text!r:.400}")
                return
            codex_after, ours_after = _read_tree(left), _read_tree(right)
            report.trials += 1
            rerun = codex_rerun(binary, tree, os.path.join(tmp, f"r{counter[0]}"))

            if codex_ok == ours_ok and codex_after == ours_after:
                report.count(f"same ({'success' if ours_ok else 'failure'})")
            else:
                label = classify(tree, text, codex_ok, ours_ok, codex_after, ours_after, proc.stderr, rerun)
                report.count(f"differs: {label}")
                if label.startswith("unexplained"):
                    report.fail(
                        f"unexplained: codex_ok={codex_ok} ours_ok={ours_ok} files={tree!r:.2000} patch={text!r:.2000} "
                        f"codex_err={proc.stderr[:200]!r} ours_err={ours_err!r}"
                        + (f" ours_after={ours_after!r:.300}" if ours_after != tree else "")
                    )
            shutil.rmtree(left, ignore_errors=True)
            shutil.rmtree(right, ignore_errors=True)

        case()
    return report.finish()
