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
) -> str:
    """Name the spec's deliberate difference that explains a mismatch, or ``unexplained``. Each
    class is named only where its cause is in the case: in the section of the patch for a file
    that differs (or, where Codex failed, the file its error names); a refusal of ours that
    changed a byte is never explained."""
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
    return _apply_patch_recovery(tree, text, codex_ok, ours_ok, reindented)


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


def _apply_patch_recovery(tree: dict[str, bytes], text: str, codex_ok: bool, ours_ok: bool, reindented: bool) -> str:
    """docs/differences.md, Codex (apply_patch): a recovery (it leaves a note) or a refusal of ours."""
    from editors.apply_patch import errors, parser
    from editors.apply_patch.applier import plan_patch

    try:
        patch = parser.parse_patch(text, context_without_space=True)
        plan = plan_patch(patch, tree.get)
    except (errors.PatchAlreadyApplied, errors.PatchIndentationMismatch):
        return "unexplained" if ours_ok else "refusal of ours where Codex writes (already applied, indentation)"
    except errors.ApplyPatchError:
        return "unexplained"
    if ours_ok and not codex_ok and not _parses_strictly(text):
        return "context line without its leading space: ours reads it as context, Codex refuses the patch"
    if (plan.notes or patch.notes) and not codex_ok:  # patch.notes: the parser's (a missing End Patch)
        return "recovery of ours where Codex fails"
    if reindented and any(note.startswith("Re-indented") for note in plan.notes):
        return "re-indented: ours gives the added lines the file's indentation, Codex writes them as sent"
    return "unexplained"


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
    env = {**os.environ, "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1"}
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
            try:
                apply_patch(ws, text)
                ours_ok = True
            except vfs.VfsError:
                ours_ok = False
            except Exception as exc:  # noqa: BLE001 - the promise: every refusal is a coded error
                report.fail(f"uncaught {type(exc).__name__}: {exc!s:.200} files={tree!r:.300} patch={text!r:.400}")
                return
            codex_after, ours_after = _read_tree(left), _read_tree(right)
            report.trials += 1
            if codex_ok == ours_ok and codex_after == ours_after:
                report.count(f"same ({'success' if ours_ok else 'failure'})")
            else:
                label = classify(tree, text, codex_ok, ours_ok, codex_after, ours_after, proc.stderr)
                report.count(f"differs: {label}")
                if label.startswith("unexplained"):
                    report.fail(
                        f"unexplained: codex_ok={codex_ok} ours_ok={ours_ok} files={tree!r:.300} patch={text!r:.400} "
                        f"codex_err={proc.stderr[:200]!r}"
                    )
            shutil.rmtree(left, ignore_errors=True)
            shutil.rmtree(right, ignore_errors=True)

        case()
    return report.finish()
