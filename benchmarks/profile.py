"""``python -m benchmarks.profile``: what dominates the hot paths, with numbers to act on.

For each case (``apply``, ``str_replace``, ``commit1``, ``commit100``, ``memory``; default all):

- phases timed with ``perf_counter`` (median of ``--runs``, no profiler attached);
- I/O and hashing counted per operation by wrapping ``os`` and ``hashlib`` for one run: fsyncs
  (file / directory), opens, bytes read and written, stats, renames, and bytes hashed, each with
  the first-party function that asked for it;
- the top functions under ``cProfile`` (``--cprofile``; ``pyinstrument`` is not needed);
- ``memory``: the peak of ``tracemalloc`` while applying a patch to a large file, and the live
  allocations at that peak by first-party line.

Files are settled past the local backend's racy window first (see ``benchmarks.context``), as in
the runner, unless ``--fresh``.
"""

from __future__ import annotations

import argparse
import builtins
import cProfile
import hashlib
import io
import os
import pstats
import stat
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks import inputs
from benchmarks.context import reset_history, restore, wait_until_settled

REPO = Path(__file__).resolve().parent.parent
OURS = (str(REPO / "vfs"), str(REPO / "backends"), str(REPO / "editors"))


def _blame() -> str:
    """The innermost first-party frame of the caller (``package/module.py:function``).

    Walks frames directly (``traceback`` would read source lines, through the wrapped ``os``).
    """
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(OURS):
            path = Path(filename)
            return f"{path.parent.name}/{path.name}:{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


class IOCounter:
    """Wraps ``os`` calls, ``open``, ``hashlib``'s hashes and the content hash while active; counts per kind."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.counts: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()
        self.blame: dict[str, Counter[str]] = defaultdict(Counter)
        self._fd_kind: dict[int, str] = {}

    def _note(self, kind: str, nbytes: int = 0) -> None:
        self.counts[kind] += 1
        self.bytes[kind] += nbytes
        self.blame[kind][_blame()] += 1

    @contextmanager
    def active(self) -> Iterator[IOCounter]:
        saved: dict[tuple[Any, str], Any] = {}

        def patch(owner: Any, name: str, wrapper: Callable[..., Any]) -> None:
            saved[(owner, name)] = getattr(owner, name)
            setattr(owner, name, wrapper)

        real = {name: getattr(os, name) for name in ("open", "read", "write", "fsync", "replace", "rename",
                                                      "link", "unlink", "lstat", "stat", "fstat", "mkdir",
                                                      "rmdir", "scandir", "listdir")}  # fmt: skip
        real_open = builtins.open
        real_hashes = {name: getattr(hashlib, name) for name in ("blake2b", "sha256", "md5", "sha1")}
        counter = self

        def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            fd = real["open"](path, flags, *args, **kwargs)
            is_dir = stat.S_ISDIR(real["fstat"](fd).st_mode)  # (the path may be relative to a dir_fd)
            counter._fd_kind[fd] = "directory" if is_dir else "file"
            counter._note("os.open (directory)" if is_dir else "os.open (file)")
            return fd

        def os_read(fd: int, n: int) -> bytes:
            data = real["read"](fd, n)
            counter.counts["os.read calls"] += 1
            counter.bytes["bytes read (os.read)"] += len(data)
            return data

        def os_write(fd: int, data: Any) -> int:
            written = real["write"](fd, data)
            counter._note("os.write", written)
            return written

        def os_fsync(fd: Any) -> None:
            number = fd if isinstance(fd, int) else fd.fileno()
            counter._note(f"fsync ({counter._fd_kind.get(number, 'file')})")
            real["fsync"](fd)

        def simple(name: str) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                counter._note(f"os.{name}")
                return real[name](*args, **kwargs)

            return wrapper

        def py_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            handle = real_open(file, mode, *args, **kwargs)
            if isinstance(file, (str, os.PathLike)) and str(file).startswith(counter.root):
                counter._note(f"open({mode})")
                if "r" in mode and "b" in mode:
                    return _CountingReader(handle, counter)
            return handle

        def hasher(name: str) -> Callable[..., Any]:
            def wrapper(data: bytes = b"", **kwargs: Any) -> Any:
                counter._note(f"hashlib.{name}", len(data))
                return real_hashes[name](data, **kwargs)

            return wrapper

        patch(os, "open", os_open)
        patch(os, "read", os_read)
        patch(os, "write", os_write)
        patch(os, "fsync", os_fsync)
        for name in ("replace", "rename", "link", "unlink", "lstat", "stat", "fstat", "mkdir", "rmdir", "scandir",
                     "listdir"):  # fmt: skip
            patch(os, name, simple(name))
        patch(builtins, "open", py_open)
        for name in real_hashes:
            patch(hashlib, name, hasher(name))
        # vfs and the backends hash through backends.base.content_digest (BLAKE3, not hashlib).
        import backends.base

        real_content_hash = backends.base._new_hash or backends.base._blake3()

        class CountedHash:
            """A hash fed piece by piece (a content given as pieces): the bytes of each update count."""

            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def update(self, data: Any) -> None:
                counter.bytes["blake3 (content_digest)"] += memoryview(data).nbytes
                self.inner.update(data)

            def hexdigest(self, length: int = 32) -> str:
                return str(self.inner.hexdigest(length))

        def content_hasher(data: Any = b"", **kwargs: Any) -> Any:
            counter._note("blake3 (content_digest)", memoryview(data).nbytes)
            return CountedHash(real_content_hash(data, **kwargs))

        patch(backends.base, "_new_hash", content_hasher)
        try:
            yield self
        finally:
            for (owner, name), value in saved.items():
                setattr(owner, name, value)

    def report(self, title: str) -> str:
        lines = [f"{title}:"]
        for kind, count in sorted(self.counts.items()):
            size = self.bytes.get(kind, 0)
            size_text = f", {size / 1e6:.2f} MB" if size else ""
            who = ", ".join(f"{k} x{v}" for k, v in self.blame[kind].most_common(4)) if self.blame[kind] else ""
            lines.append(f"  {count:5d} {kind}{size_text}" + (f"   <- {who}" if who else ""))
        if self.bytes.get("bytes read (os.read)"):
            lines.append(f"        bytes read through os.read: {self.bytes['bytes read (os.read)'] / 1e6:.2f} MB")
        return "\n".join(lines)


class _CountingReader:
    def __init__(self, handle: Any, counter: IOCounter) -> None:
        self._handle = handle
        self._counter = counter

    def read(self, *args: Any) -> Any:
        data = self._handle.read(*args)
        self._counter.bytes["bytes read (open().read)"] += len(data)
        self._counter.blame["bytes read (open().read)"][_blame()] += 1
        self._counter.counts["bytes read (open().read)"] += 1
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _CountingReader:
        self._handle.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._handle.__exit__(*exc)


# -- cases ------------------------------------------------------------------------------------------


class Case:
    """A prepared operation: ``reset()`` (untimed) then ``run()``; optional ``phases()``."""

    name = ""
    root: Path

    def reset(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        raise NotImplementedError

    def phases(self) -> dict[str, float]:
        start = time.perf_counter()
        self.run()
        return {"total": time.perf_counter() - start}


class ApplyCase(Case):
    name = "apply"

    def __init__(self, root: Path, lines: int, hunks: int, settle: bool) -> None:
        import vfs

        self.root = root
        self.case = inputs.update_patch({"module.py": inputs.source(lines=lines)}, hunks)
        self.files = {root / "module.py": self.case.files["module.py"]}
        self.settle = settle
        self.workspace = vfs.open_workspace(str(root))
        self.title = f"apply_patch in-process, {hunks} hunks on {lines:,} lines ({len(self.case.files['module.py']) / 1e6:.1f} MB)"

    def reset(self) -> None:
        restore(self.files)
        reset_history(self.root)
        os.sync()
        if self.settle:
            wait_until_settled(*self.files)

    def run(self) -> None:
        from editors.apply_patch.tool import apply_patch

        apply_patch(self.workspace, self.case.patch)

    def phases(self) -> dict[str, float]:
        from editors.apply_patch.applier import plan_patch
        from editors.apply_patch.parser import parse_patch
        from editors.apply_patch.tool import _reader, _stage

        t0 = time.perf_counter()
        patch = parse_patch(self.case.patch)
        t1 = time.perf_counter()
        tx = self.workspace.transaction(label="apply_patch")
        with tx:
            plan = plan_patch(patch, _reader(tx), resolve=self.workspace.to_path)
            t2 = time.perf_counter()
            for step in plan.steps:
                _stage(tx, step)
            t3 = time.perf_counter()
        t4 = time.perf_counter()
        return {
            "parse patch": t1 - t0,
            "plan (read, decode, match, rewrite, encode)": t2 - t1,
            "stage": t3 - t2,
            "commit": t4 - t3,
            "total": t4 - t0,
        }


class MatchCase(Case):
    """The pure part of an update, step by step (no I/O)."""

    name = "match"

    def __init__(self, root: Path, lines: int, hunks: int) -> None:
        self.root = root
        self.case = inputs.update_patch({"module.py": inputs.source(lines=lines)}, hunks)
        self.title = f"matcher steps, {hunks} hunks on {lines:,} lines"

    def reset(self) -> None:
        return None

    def run(self) -> None:
        self.phases()

    def phases(self) -> dict[str, float]:
        from editors.apply_patch.matcher import LineIndex, SourceText, compute_replacements
        from editors.apply_patch.parser import parse_patch

        chunks = parse_patch(self.case.patch).hunks[0].chunks  # type: ignore[union-attr]
        data = self.case.files["module.py"]
        marks = [("start", time.perf_counter())]
        text = data.decode("utf-8")
        marks.append(("decode", time.perf_counter()))
        source = SourceText.parse(text)
        marks.append(("split into lines", time.perf_counter()))
        index = LineIndex(source.texts)
        replacements = compute_replacements(source.texts, chunks, "module.py", index)
        marks.append(("locate chunks (compute_replacements)", time.perf_counter()))
        rewritten = source.replaced(replacements)
        marks.append(("apply replacements", time.perf_counter()))
        out = rewritten.render()
        marks.append(("render", time.perf_counter()))
        encoded = out.encode("utf-8")
        marks.append(("encode", time.perf_counter()))
        assert encoded == self.case.expected["module.py"]
        phases = {name: marks[i][1] - marks[i - 1][1] for i, (name, _) in enumerate(marks) if i}
        phases["total"] = marks[-1][1] - marks[0][1]
        return phases


class StrReplaceCase(Case):
    name = "str_replace"

    def __init__(self, root: Path, size: int, settle: bool) -> None:
        import vfs
        from editors.str_replace_editor.tool import StrReplaceEditor

        self.root = root
        self.case = inputs.str_replace_case(size)
        self.path = root / "big_module.py"
        self.files = {self.path: self.case.data}
        self.settle = settle
        self.editor = StrReplaceEditor(vfs.open_workspace(str(root)), session=False)
        self.title = f"str_replace in-process on a {size / 1e6:.0f} MB file"

    def reset(self) -> None:
        restore(self.files)
        reset_history(self.root)
        os.sync()
        if self.settle:
            wait_until_settled(self.path)

    def run(self) -> None:
        result = self.editor.run(
            {
                "command": "str_replace",
                "path": str(self.path),
                "old_str": self.case.old_str,
                "new_str": self.case.new_str,
            }
        )
        assert not result.is_error, result.text


class CommitCase(Case):
    def __init__(self, root: Path, files: int, size: int) -> None:
        import vfs

        self.root = root
        self.name = f"commit{files}"
        self.paths = [root / f"dir{i % 4}" / f"file_{i:03d}.py" for i in range(files)]
        self.files = {p: inputs.source(size=size, seed=i).data[:size] for i, p in enumerate(self.paths)}
        self.new = {p: data + b"# edited\n" for p, data in self.files.items()}
        self.workspace = vfs.open_workspace(str(root))
        restore(self.files)
        self.title = f"durable commit of {files} file(s) of {size:,} bytes"

    def reset(self) -> None:
        restore(self.files)
        reset_history(self.root)
        os.sync()

    def run(self) -> None:
        with self.workspace.transaction(label="profile") as tx:
            for path, data in self.new.items():
                tx.write(str(path), data)


# -- memory -------------------------------------------------------------------------------------------


def memory_profile(root: Path, size: int, hunks: int, top: int) -> str:
    """Peak of tracemalloc while applying a patch, and what is live at that peak, by our line."""
    import vfs
    from editors.apply_patch.tool import apply_patch

    case = inputs.update_patch({"huge.py": inputs.source(size=size, seed=23)}, hunks)
    path = root / "huge.py"
    restore({path: case.files["huge.py"]})
    patch_text = case.patch
    file_bytes = len(case.files["huge.py"])
    del case
    wait_until_settled(path)
    workspace = vfs.open_workspace(str(root))

    best: dict[str, Any] = {"peak": 0, "snapshot": None, "where": ""}
    step = max(file_bytes // 20, 1 << 20)  # a new snapshot for every 5 % of the file size above the last

    def tracer(frame: Any, event: str, arg: Any) -> None:
        if event not in ("return", "c_return"):
            return
        current, _ = tracemalloc.get_traced_memory()
        if current >= best["peak"] + step:
            best["peak"] = current
            best["snapshot"] = tracemalloc.take_snapshot()
            code = frame.f_code
            callee = f" after {getattr(arg, '__qualname__', arg)}" if event == "c_return" else ""
            best["where"] = f"{Path(code.co_filename).name}:{code.co_name}{callee}"

    tracemalloc.start(1)
    sys.setprofile(tracer)
    try:
        apply_patch(workspace, patch_text)
    finally:
        sys.setprofile(None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    lines = [
        f"memory: apply_patch of {hunks} hunks to a {file_bytes / 1e6:.0f} MB file (tracemalloc, Python allocations only)",
        f"  peak traced: {peak / 1e6:.0f} MB = {peak / file_bytes:.1f}x the file size",
        f"  largest snapshot (in {best['where']}): {best['peak'] / 1e6:.0f} MB live, by line:",
    ]
    snapshot = best["snapshot"]
    if snapshot is not None:
        for stat in snapshot.statistics("lineno")[:top]:
            frame = stat.traceback[0]
            where = f"{Path(frame.filename).parent.name}/{Path(frame.filename).name}:{frame.lineno}"
            lines.append(f"    {stat.size / 1e6:8.1f} MB  {stat.count:9d} blocks  {where}")
    return "\n".join(lines)


# -- driver -------------------------------------------------------------------------------------------


def _median_phases(case: Case, runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        case.reset()
        for name, value in case.phases().items():
            samples[name].append(value)
    return {name: statistics.median(values) for name, values in samples.items()}


def profile_case(case: Case, runs: int, cprofile_top: int) -> str:
    lines = [f"== {case.title}", ""]
    case.reset()
    case.run()  # warm-up (imports, first open)
    phases = _median_phases(case, runs)
    total = phases.get("total") or 1.0
    lines.append(f"phases (median of {runs}, ms):")
    for name, value in phases.items():
        share = "" if name == "total" else f"  {value / total * 100:4.0f} %"
        lines.append(f"  {value * 1e3:8.1f}{share}  {name}")
    case.reset()
    counter = IOCounter(str(case.root))
    with counter.active():
        case.run()
    lines += ["", counter.report("I/O and hashing in one run")]
    if cprofile_top:
        case.reset()
        profiler = cProfile.Profile()
        profiler.enable()
        case.run()
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(cprofile_top)
        body = [line for line in out.getvalue().splitlines() if line.strip()]
        lines += ["", "cProfile, by own time:", *("  " + line for line in body[-(cprofile_top + 1) :])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=["match", "apply", "str_replace", "commit1", "commit100", "memory"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--hunks", type=int, default=1_000)
    parser.add_argument("--bytes", type=int, default=10_000_000, help="str_replace file size")
    parser.add_argument("--memory-bytes", type=int, default=100_000_000)
    parser.add_argument("--cprofile", type=int, default=15, metavar="N", help="top N functions (0: no cProfile)")
    parser.add_argument("--fresh", action="store_true", help="do not wait out the racy window")
    args = parser.parse_args(argv)
    results = REPO / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)  # (absent in a fresh clone)
    with tempfile.TemporaryDirectory(prefix="vfs-profile-", dir=results) as tmp:
        base = Path(tmp)
        for name in args.cases:
            root = base / name
            root.mkdir()
            case: Case
            if name == "apply":
                case = ApplyCase(root, args.lines, args.hunks, not args.fresh)
            elif name == "match":
                case = MatchCase(root, args.lines, args.hunks)
            elif name == "str_replace":
                case = StrReplaceCase(root, args.bytes, not args.fresh)
            elif name.startswith("commit"):
                case = CommitCase(root, int(name[len("commit") :] or 1), 4096)
            elif name == "memory":
                print(memory_profile(root, args.memory_bytes, 10, 12) + "\n", flush=True)
                continue
            else:
                raise SystemExit(f"unknown case {name}")
            print(profile_case(case, args.runs, args.cprofile), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
