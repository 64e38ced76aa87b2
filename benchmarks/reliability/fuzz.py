"""Fuzzing with hypothesis: the patch parser, the matcher/applier (random files + random patches,
and patches cut from the files they edit), the ``str_replace_editor`` arguments (random dicts)
and the CLI argument vectors (in process).

The promise checked on every case: no uncaught exception, no hang (a case over ``HANG_SECONDS``
is reported), and every failure is a coded error (a ``vfs.VfsError`` subclass with ``.code``, or a
tool result with ``is_error`` and ``code``) that leaves the tree exactly as it was.

Violations are recorded (not raised), so one run counts every case; the pytest suite runs the same
targets at a few thousand cases and asserts there were none.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vfs
from backends.memory import MemoryBackend, MemoryStore
from benchmarks.reliability import Report
from editors.apply_patch import apply_patch, parse_patch
from editors.str_replace_editor import StrReplaceEditor
from tests.support.trees import populate, snapshot_tree

HANG_SECONDS = 10.0

#: Bugs already reported (each has a strict-xfail regression test): failures whose text contains
#: a signature are counted under ``known bug: ...`` instead of failing the run.
KNOWN_BUGS: dict[str, str] = {}  # the unknown-storage-option TypeError was fixed in 0037b02

# -- generators -----------------------------------------------------------------------------------

VOCAB = ["foo", "bar", "baz", "  foo", "foo ", "\tbar", "—dash", "“quoted”", "", "x = 1", "é", "🐍", "qux"]
ENDINGS = ["\n", "\r\n", "\r"]
PATHS = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "new.txt", "d", "../x.txt", "/abs.txt", "a b.txt", ""]

lines = st.lists(st.sampled_from(VOCAB) | st.text(max_size=6), max_size=8)


@st.composite
def file_bytes(draw: Any) -> bytes:
    body = draw(lines)
    ending = draw(st.sampled_from(ENDINGS))
    mixed = draw(st.booleans())
    text = "".join(line + (draw(st.sampled_from(ENDINGS)) if mixed else ending) for line in body)
    if body and draw(st.booleans()):
        text = text.rstrip("\r\n")
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 19)) == 0:
        data += b"\xff\x00"  # not text
    return data


files = st.dictionaries(st.sampled_from(["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"]), file_bytes(), max_size=4)


@st.composite
def patch_text(draw: Any, paths: list[str] = PATHS, free_paths: bool = True) -> str:
    """Mostly well-formed patches over the same vocabulary (so hunks match), with damage."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.text(max_size=200))
    out: list[str] = []
    if draw(st.integers(0, 14)):
        out.append(draw(st.sampled_from(["*** Begin Patch", " *** Begin Patch ", "*** Begin Patch\r"])))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["add", "delete", "update", "update", "update", "junk"]))
        named = st.sampled_from(paths[:4] * 3 + paths)
        path = draw(named | st.text(max_size=12) if free_paths else named)
        if kind == "add":
            out.append(f"*** Add File: {path}")
            out += ["+" + line for line in draw(lines)]
        elif kind == "delete":
            out.append(f"*** Delete File: {path}")
        elif kind == "update":
            out.append(f"*** Update File: {path}")
            if draw(st.integers(0, 4)) == 0:
                out.append(f"*** Move to: {draw(st.sampled_from(paths))}")
            for _ in range(draw(st.integers(1, 3))):
                out.append(draw(st.sampled_from(["@@", "@@ foo", "@@ bar", "@@ nothing"])))
                for _ in range(draw(st.integers(0, 5))):
                    prefix = draw(st.sampled_from([" ", "-", "+", " ", "-", "+", " ", "-", "+", ""]))
                    out.append(prefix + draw(st.sampled_from(VOCAB)))
                if draw(st.integers(0, 5)) == 0:
                    out.append("*** End of File")
        else:
            out.append(draw(st.text(max_size=20)))
    if draw(st.integers(0, 14)):
        out.append(draw(st.sampled_from(["*** End Patch", "*** End Patch ", "*** End Patch\n"])))
    return draw(st.sampled_from(["\n", "\r\n"])).join(out)


# -- patches cut from the files they edit ---------------------------------------------------------

#: What the derived campaign's files are made of: lines that repeat (a chunk may match at two
#: places), indented code, typographic punctuation, blank lines; and numbered lines, mostly unique.
DERIVED_VOCAB = ["", "}", "    return x", "\treturn y", "def f():", "    pass", "x = 1", "# \u2014 note",
                 "print(\u201chi\u201d)", "foo", "  bar  ", "\u00e9\U0001f40d"]  # fmt: skip
DERIVED_NAMES = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"]
numbered = st.builds(lambda pad, n: f"{pad}line {n}", st.sampled_from(["", "    ", "\t"]), st.integers(0, 40))


@st.composite
def derived_file(draw: Any) -> bytes:
    """A text file of 1-24 lines: LF or CRLF (now and then mixed), maybe no final line break or a BOM."""
    body = draw(st.lists(st.sampled_from(DERIVED_VOCAB) | numbered, min_size=1, max_size=24))
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    mixed = draw(st.integers(0, 5)) == 0
    text = "".join(line + (draw(st.sampled_from(["\n", "\r\n"])) if mixed else ending) for line in body)
    if draw(st.integers(0, 4)) == 0:
        text = text.rstrip("\r\n")
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if draw(st.integers(0, 19)) == 0 else data


derived_files = st.dictionaries(st.sampled_from(DERIVED_NAMES), derived_file(), min_size=1, max_size=3)


def model_lines(data: bytes) -> list[str]:
    """A file's lines as a model sees them: decoded, without the BOM or any line ending."""
    lines = data.decode("utf-8").removeprefix("\ufeff").split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _as_copied(draw: Any, line: str) -> str:
    """A file line as a model copies it: mostly exact; now and then with a stray trailing space,
    its indentation lost, or ASCII quotes and dashes for the typographic ones."""
    how = draw(st.integers(0, 11))
    if how == 0:
        return line + " "
    if how == 1:
        return line.lstrip()
    if how == 2:
        return line.replace("\u2014", "-").replace("\u201c", '"').replace("\u201d", '"')
    return line


def _context(draw: Any, line: str) -> str:
    """A context line as copied, now and then sent without its leading space."""
    return ("" if draw(st.integers(0, 19)) == 0 else " ") + _as_copied(draw, line)


@st.composite
def derived_chunks(draw: Any, lines: list[str]) -> list[str]:
    """1-3 chunks of an update of ``lines``, mostly in file order: each some context, removed
    lines, added lines, context; headed by a bare ``@@``, an ``@@`` naming an earlier line, or
    (the first; rarely a later one) none; an ``*** End of File`` where the chunk ends the file
    (and, rarely, where it does not)."""
    out: list[str] = []
    cursor, n = 0, len(lines)
    for index in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0 if draw(st.integers(0, 7)) == 0 else cursor, n))  # now and then out of order
        before = draw(st.integers(0, min(3, n - start)))
        removed = draw(st.integers(0, min(3, n - start - before)))
        after = draw(st.integers(0, min(3, n - start - before - removed)))
        added = draw(st.lists(st.sampled_from(DERIVED_VOCAB + lines) | numbered, max_size=3))
        if before + removed + after + len(added) == 0:
            added = [draw(numbered)]  # an empty chunk is a parse error on both sides
        header = draw(st.sampled_from(["@@", "@@", "anchor", "none"]))
        if header == "anchor" and start > cursor:  # Codex looks for the @@ line after the last chunk
            out.append("@@ " + lines[draw(st.integers(cursor, start - 1))])
        elif header != "none" or (index > 0 and draw(st.integers(0, 7))):  # now and then two run together
            out.append("@@")
        cut = [start, start + before, start + before + removed, start + before + removed + after]
        out += [_context(draw, line) for line in lines[cut[0] : cut[1]]]
        out += ["-" + _as_copied(draw, line) for line in lines[cut[1] : cut[2]]]
        out += ["+" + line for line in added]
        out += [_context(draw, line) for line in lines[cut[2] : cut[3]]]
        if (cut[3] == n and draw(st.booleans())) or draw(st.integers(0, 15)) == 0:
            out.append("*** End of File")
        cursor = cut[3]
    return out


@st.composite
def derived_patch(draw: Any, tree: dict[str, bytes]) -> str:
    """A patch of 1-3 operations on ``tree``: mostly updates cut from the files (some moved), and
    adds and deletes; LF or CRLF between its lines."""
    out = ["*** Begin Patch"]
    names = sorted(tree)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["update", "update", "update", "update", "move", "add", "delete"]))
        if kind in ("update", "move", "delete") and not names:
            kind = "add"
        if kind in ("update", "move"):
            path = draw(st.sampled_from(names))
            names.remove(path)  # each file once: Codex applies one operation after the other
            out.append(f"*** Update File: {path}")
            if kind == "move":
                out.append(f"*** Move to: {draw(st.sampled_from(['new.txt', 'd/moved.txt', *names]))}")
            out += draw(derived_chunks(model_lines(tree[path])))
        elif kind == "delete":
            path = draw(st.sampled_from(names))
            names.remove(path)
            out.append(f"*** Delete File: {path}")
        else:
            out.append(f"*** Add File: {draw(st.sampled_from(['new.txt', 'd/n.txt', *names]))}")
            out += ["+" + line for line in draw(st.lists(st.sampled_from(DERIVED_VOCAB) | numbered, max_size=4))]
    out.append("*** End Patch")
    return draw(st.sampled_from(["\n", "\r\n"])).join(out) + draw(st.sampled_from(["", "\n"]))


#: (files, a patch cut from them): the derived campaigns' cases
derived_cases = derived_files.flatmap(lambda tree: st.tuples(st.just(tree), derived_patch(tree)))


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
COMMANDS = ["view", "create", "str_replace", "insert", "undo_edit", "delete", "", "VIEW"]
KEYS = ["command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range", "insert_text", "x"]


COMMAND_KEYS = {
    "view": ["view_range"],
    "create": ["file_text"],
    "str_replace": ["old_str", "new_str"],
    "insert": ["insert_line", "new_str"],
    "undo_edit": [],
}


def _value(draw: Any, key: str) -> Any:
    if key == "command":
        return draw(st.sampled_from(COMMANDS * 3) | JSONISH)
    if key == "path":
        paths = ["/workspace/" + p for p in PATHS] + ["/workspace", "/etc/passwd", "relative.txt"]
        return draw(st.sampled_from(paths * 3) | JSONISH)
    if key in ("old_str", "new_str", "file_text"):
        return draw(st.sampled_from(VOCAB) | st.text(max_size=20) | st.text(max_size=20) | JSONISH)
    if key == "insert_line":
        return draw(st.integers(-3, 12) | st.integers(-3, 12) | JSONISH)
    if key == "view_range":
        pair = st.lists(st.integers(-3, 12), min_size=2, max_size=2)
        return draw(pair | pair | st.lists(st.integers(-3, 12)) | JSONISH)
    return draw(JSONISH)


@st.composite
def editor_call(draw: Any) -> Any:
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return draw(JSONISH)
    if shape < 14:  # a well-shaped call of a real command, with random values
        command = draw(st.sampled_from(sorted(COMMAND_KEYS)))
        keys = ["path", *draw(st.lists(st.sampled_from(COMMAND_KEYS[command] or ["path"]), unique=True))]
        call = {key: _value(draw, key) for key in keys}
        call["command"] = command
        if draw(st.integers(0, 3)) == 0 and "path" in call:
            call["path"] = draw(st.sampled_from(["/workspace/a.txt", "/workspace/d/c.txt", "/workspace/new.txt"]))
        return call
    keys = draw(st.lists(st.sampled_from(KEYS), max_size=6, unique=True))
    return {key: _value(draw, key) for key in keys}


SAFE_TOKENS = ["apply", "tool", "log", "undo", "recover", "schema", "demo", "str_replace_editor", "apply_patch"]
FLAGS = ["--diff", "--dry-run", "--json", "--enable-undo", "-h", "-n", "3", "--limit", "x", "--help"]


@st.composite
def argv(draw: Any, root: str) -> list[str]:
    out: list[str] = []
    if draw(st.integers(0, 9)):
        out.append(draw(st.sampled_from(["apply", "tool", "log", "undo", "recover", "schema", "demo", "bogus"])))
    for _ in range(draw(st.integers(0, 5))):
        choice = draw(st.integers(0, 6))
        if choice == 0:
            out += ["--root", draw(st.sampled_from([root, "memory://fuzz", os.path.join(root, "missing")]))]
        elif choice == 1:
            out += ["--mode", draw(st.sampled_from(["read-only", "workspace-write", "danger-full-access", "x"]))]
        elif choice == 2:
            out += ["--storage-option", draw(st.sampled_from(["fsync=false", "a=b", "novalue", "=x"]))]
        elif choice == 3:
            out.append(draw(st.sampled_from(FLAGS + SAFE_TOKENS)))
        elif choice == 4:
            out.append(draw(patch_text()))
        elif choice == 5:
            out += ["--mount", draw(st.sampled_from(["/m", "relative", root]))]
        else:  # free text, never an option (it could name another root: --root=..., --ro=...)
            out.append(draw(st.text(max_size=30).filter(lambda t: not t.startswith("-"))))
    return out


# -- the harness ------------------------------------------------------------------------------


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _watchdog(seconds: float) -> Any:
    def on_alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"over {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _memory_ws(tree: dict[str, bytes]) -> vfs.Workspace:
    backend = MemoryBackend(MemoryStore(), label="memory://fuzz")
    populate(backend, tree)  # type: ignore[arg-type]
    return vfs.Workspace(backend, mount="/workspace")


def _coded(exc: BaseException) -> bool:
    return isinstance(exc, vfs.VfsError) and isinstance(exc.code, str) and exc.code != "" and bool(exc.message)


def _run_target(report: Report, name: str, cases: int, strategy: Any, check: Callable[[Any], None]) -> None:
    slowest = [0.0]

    @settings(
        max_examples=cases,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def target(value: Any) -> None:
        report.trials += 1
        report.count(f"{name} cases")
        if report.trials % 5000 == 0:
            elapsed = time.perf_counter() - report._started
            print(f"[fuzz] {report.trials} cases, {elapsed:.0f} s, {len(report.failures)} failures", file=sys.stderr)
        started = time.perf_counter()
        try:
            with _watchdog(HANG_SECONDS):
                check(value)
        except _Hang:
            report.fail(f"{name}: hang on {value!r:.300}")
        except Exception as exc:  # noqa: BLE001 - an uncaught exception is exactly what we count
            text = f"{name}: uncaught {type(exc).__name__}: {exc!s:.200} on {value!r:.300}"
            known = next((label for sig, label in KNOWN_BUGS.items() if sig in text), None)
            if known:
                report.count(f"known bug: {known}")
            else:
                report.fail(text)
        slowest[0] = max(slowest[0], time.perf_counter() - started)

    target()
    report.notes.append(f"{name}: slowest case {slowest[0] * 1000:.1f} ms")


def check_parser(report: Report) -> Callable[[str], None]:
    def check(text: str) -> None:
        try:
            parse_patch(text)
            report.count("parser accepted")
        except vfs.VfsError as exc:
            if not _coded(exc):
                report.fail(f"parser: uncoded error {exc!r} on {text!r:.300}")
            report.count(f"parser {exc.code}")

    return check


def check_apply(report: Report, name: str = "apply") -> Callable[[tuple[dict[str, bytes], str]], None]:
    def check(case: tuple[dict[str, bytes], str]) -> None:
        tree, text = case
        ws = _memory_ws(tree)
        before = snapshot_tree(ws)
        try:
            apply_patch(ws, text)
            report.count(f"{name} ok")
        except vfs.VfsError as exc:
            report.count(f"{name} {exc.code}")
            if not _coded(exc):
                report.fail(f"{name}: uncoded error {exc!r} on {case!r:.300}")
            if snapshot_tree(ws) != before:
                report.fail(f"{name}: {exc.code} changed the tree on {case!r:.300}")

    return check


def check_editor(report: Report) -> Callable[[tuple[dict[str, bytes], list[Any]]], None]:
    def check(case: tuple[dict[str, bytes], list[Any]]) -> None:
        tree, calls = case
        ws = _memory_ws(tree)
        editor = StrReplaceEditor(ws, config={"enable_undo": True})
        for call in calls:
            before = snapshot_tree(ws)
            result = editor.run(call)
            if not result.is_error:
                report.count("editor ok")
                continue
            report.count(f"editor {result.code}")
            if not result.code or not result.text.startswith("Error: "):
                report.fail(f"editor: uncoded error {result!r:.200} on {call!r:.300}")
            if "Unexpected failure" in result.text:
                report.fail(f"editor: internal exception surfaced: {result.text!r:.300} on {call!r:.300}")
            if snapshot_tree(ws) != before:
                report.fail(f"editor: {result.code} changed the tree on {call!r:.300}")

    return check


def check_cli(report: Report, root: str) -> Callable[[list[str]], None]:
    from editors.cli import main

    def check(args: list[str]) -> None:
        before = _local_tree(root)
        stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
        old_stdin = sys.stdin
        sys.stdin = stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = main(args)
                except SystemExit as exc:
                    status = exc.code if isinstance(exc.code, int) else 2
        finally:
            sys.stdin = old_stdin
        report.count(f"cli exit {status}")
        if status not in (0, 1, 2):
            report.fail(f"cli: exit status {status!r} for {args!r:.300}")
        if status != 0 and _local_tree(root) != before:
            report.fail(f"cli: failed ({status}) but changed the tree for {args!r:.300}")
        out.flush()
        err.flush()
        printed = out.buffer.getvalue() + err.buffer.getvalue()  # type: ignore[attr-defined]
        if b"Traceback" in printed:
            report.fail(f"cli: a traceback was printed for {args!r:.300}")

    return check


def _local_tree(root: str) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".vfs"]
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            with open(os.path.join(dirpath, f), "rb") as handle:
                out[os.path.relpath(os.path.join(dirpath, f), root)] = handle.read()
    return out


TARGETS = ("parser", "apply", "apply-derived", "editor", "cli")
#: share of the total count per target (the CLI is the slowest per case)
WEIGHTS = {"parser": 0.3, "apply": 0.25, "apply-derived": 0.15, "editor": 0.2, "cli": 0.1}


def run(trials: int = 100_000, *, seed: int = 0, targets: tuple[str, ...] = TARGETS) -> Report:
    """``trials`` cases in total, split over the targets by ``WEIGHTS``."""
    report = Report("fuzz")
    del seed  # hypothesis draws its own seeds (derandomize=False); failures print their inputs
    total_weight = sum(WEIGHTS[t] for t in targets)
    counts = {t: max(1, int(trials * WEIGHTS[t] / total_weight)) for t in targets}
    if "parser" in targets:
        _run_target(report, "parser", counts["parser"], patch_text(), check_parser(report))
    if "apply" in targets:
        _run_target(report, "apply", counts["apply"], st.tuples(files, patch_text()), check_apply(report))
    if "apply-derived" in targets:  # patches cut from the files: mostly applied, and the recoveries
        _run_target(
            report, "apply-derived", counts["apply-derived"], derived_cases, check_apply(report, "apply-derived")
        )
    if "editor" in targets:
        calls = st.lists(editor_call(), min_size=1, max_size=4)
        _run_target(report, "editor", counts["editor"], st.tuples(files, calls), check_editor(report))
    if "cli" in targets:
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.realpath(os.path.join(tmp, "root"))
            os.makedirs(os.path.join(root, "d"))
            for name, data in (("a.txt", b"foo\nbar\n"), ("d/c.txt", b"baz\r\n")):
                with open(os.path.join(root, name), "wb") as handle:
                    handle.write(data)
            os.chdir(root)  # a verb without --root works on the current directory: make it ours
            try:
                _run_target(report, "cli", counts["cli"], argv(root), check_cli(report, root))
            finally:
                os.chdir(cwd)
    return report.finish()
