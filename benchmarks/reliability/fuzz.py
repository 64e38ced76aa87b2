"""Fuzzing with hypothesis: the patch parser, the matcher/applier (random files + random patches),
the ``str_replace_editor`` arguments (random dicts) and the CLI argument vectors (in process).

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


def check_apply(report: Report) -> Callable[[tuple[dict[str, bytes], str]], None]:
    def check(case: tuple[dict[str, bytes], str]) -> None:
        tree, text = case
        ws = _memory_ws(tree)
        before = snapshot_tree(ws)
        try:
            apply_patch(ws, text)
            report.count("apply ok")
        except vfs.VfsError as exc:
            report.count(f"apply {exc.code}")
            if not _coded(exc):
                report.fail(f"apply: uncoded error {exc!r} on {case!r:.300}")
            if snapshot_tree(ws) != before:
                report.fail(f"apply: {exc.code} changed the tree on {case!r:.300}")

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


TARGETS = ("parser", "apply", "editor", "cli")
#: share of the total count per target (the CLI is the slowest per case)
WEIGHTS = {"parser": 0.35, "apply": 0.35, "editor": 0.2, "cli": 0.1}


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
