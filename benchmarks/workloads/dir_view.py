"""Directory ``view`` of a large tree: its cost bounded by what is shown (issue 20's last row).

The ``str_replace_editor``'s ``view`` of a directory shows two levels (the DSH editor's rule). Two
trees share those two levels exactly: ``top`` folders under the root, each holding ``mid``
folders and ``top_files`` files, plus ``top_files`` files at the root (``top * (1 + mid +
top_files) + top_files`` entries shown, 165 at full size). The *deep* tree also holds ``files`` files (100,000
at full size) below the shown levels, 3 levels further down in every level-2 folder; the *shallow*
tree holds nothing more. Series (the same view of each root, through ``StrReplaceEditor.run``, in
alternation; the texts must be identical):

- ``local.deep`` / ``local.shallow``: trees on local disk;
- ``s3.deep`` / ``s3.shallow``: the same trees under two prefixes of one bucket on SeaweedFS, behind
  the latency proxy of ``benchmarks/s3_latency_proxy.py`` (``rtt_ms`` per request, as in the ``s3``
  workload); every level-2 folder has its directory marker in both trees, so the listings of the
  shown levels are the same. The S3 requests of each view are counted (``requests``).

Targets: deep / shallow <= ``MAX_RATIO`` (1.5x) on each store. 1.5x rather than 1.0x: the two views
make the same requests and syscalls, but the deep tree's directories are not the same inodes or
objects and a loaded machine's noise on a ~10 ms local view is easily 20-30 %.

How the view stays bounded: the listing asks for the direct children of the root and of each
shown level-1 folder (``Workspace.list`` -> ``Backend.list``, one level each): a ``scandir`` per
folder on disk, one delimiter LIST per folder on S3 (``Delimiter="/"``: the server rolls everything
below up into one common prefix), a prefix index in memory; nothing ever lists recursively. The
levels below the second are never opened.
"""

from __future__ import annotations

import collections
import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.context import Context
from benchmarks.core import Measured, Series, Target, VerificationError, Workload

DEFAULTS: dict[str, dict[str, Any]] = {
    "full": {"top": 10, "mid": 10, "top_files": 5, "files": 100_000, "rtt_ms": 20.0},
    "quick": {"top": 10, "mid": 10, "top_files": 5, "files": 20_000, "rtt_ms": 20.0},
    "tiny": {"top": 3, "mid": 2, "top_files": 2, "files": 120, "rtt_ms": 2.0},
}
MAX_RATIO = 1.5
LOCAL_VIEWS = 10  # views per local run (a view is a few ms)
MOUNT = "/workspace"
CONTENT = b"x = 1\n"


def shown(p: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The two shown levels: (folders, files), relative paths."""
    folders: list[str] = []
    files = [f"root_{k}.py" for k in range(p["top_files"])]
    for i in range(p["top"]):
        folders.append(f"d{i:02d}")
        folders += [f"d{i:02d}/s{j:02d}" for j in range(p["mid"])]
        files += [f"d{i:02d}/file_{k}.py" for k in range(p["top_files"])]
    return folders, files


def deep_files(p: dict[str, Any]) -> list[str]:
    """``files`` relative paths 3 levels below the level-2 folders, spread evenly over them."""
    level2 = [f"d{i:02d}/s{j:02d}" for i in range(p["top"]) for j in range(p["mid"])]
    per = max(1, p["files"] // len(level2))
    side = max(1, round(per ** (1 / 3)))
    out = []
    for folder in level2:
        for n in range(per):
            a, b, c = n // (side * side), (n // side) % side, n % side
            out.append(f"{folder}/a{a}/b{b}/f{c}_{n}.py")
    return out


# -- local disk -----------------------------------------------------------------------------------


def _lay_out(root: Path, folders: list[str], files: list[str]) -> None:
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    made: set[Path] = set()
    for rel in files:
        path = root / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(CONTENT)


def _local_roots(ctx: Context, p: dict[str, Any]) -> tuple[Path, Path]:
    base = ctx.workdir("dir_view")
    folders, files = shown(p)
    deep, shallow = base / "deep", base / "shallow"
    _lay_out(shallow, folders, files)
    _lay_out(deep, folders, files + deep_files(p))
    return deep, shallow


# -- S3 -------------------------------------------------------------------------------------------


class _S3Trees:
    """SeaweedFS, the latency proxy, both trees in one bucket, and a workspace on each prefix."""

    def __init__(self, p: dict[str, Any]) -> None:
        self.p = p
        self.stack = contextlib.ExitStack()
        self.workspaces: dict[str, Any] = {}
        self.counts: dict[str, collections.Counter[str]] = {}

    def start(self) -> None:
        import vfs
        from benchmarks.s3_latency_proxy import LatencyProxyProcess, count_requests
        from tests.support import s3_servers

        ep = self.stack.enter_context(s3_servers.seaweedfs_endpoint())
        bucket = s3_servers.make_bucket(ep, "bench-dir-view")
        folders, files = shown(self.p)
        self._put(ep.client(), bucket, "shallow", folders, files)
        self._put(ep.client(), bucket, "deep", folders, files + deep_files(self.p))
        port = int(ep.endpoint_url.rsplit(":", 1)[1])
        proxy = self.stack.enter_context(LatencyProxyProcess("127.0.0.1", port, rtt=self.p["rtt_ms"] / 1000))
        options = dict(s3_servers.storage_options_for(f"http://127.0.0.1:{proxy.port}"), skip_instance_cache=True)
        for tree in ("deep", "shallow"):
            ws = vfs.open_workspace(f"s3://{bucket}/{tree}", storage_options=options, mount=MOUNT)
            self.stack.callback(ws.close)
            self.workspaces[tree] = ws
            self.counts[tree] = count_requests(ws.backend)

    @staticmethod
    def _put(client: Any, bucket: str, prefix: str, folders: list[str], files: list[str]) -> None:
        """Every folder's marker and every file, 10 requests in flight (the client's pool; untimed)."""
        keys = [(f"{prefix}/{f}/", b"") for f in folders] + [(f"{prefix}/{f}", CONTENT) for f in files]

        def put(item: tuple[str, bytes]) -> None:
            client.put_object(Bucket=bucket, Key=item[0], Body=item[1])

        with ThreadPoolExecutor(10) as pool:
            for _ in pool.map(put, keys):
                pass

    def close(self) -> None:
        self.stack.close()


def _s3_missing() -> str | None:
    from benchmarks.workloads.s3 import missing_reason

    return missing_reason()


# -- the workload ---------------------------------------------------------------------------------


class _Views:
    """The view of each root, timed, and the texts it gave (deep and shallow must agree)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def measure(self, key: str, ws: Any, counts: collections.Counter[str] | None = None, views: int = 1) -> Measured:
        """The mean of ``views`` views (several for a view of a few ms on disk: less noise)."""
        from editors.str_replace_editor.tool import StrReplaceEditor

        if counts is not None:
            counts.clear()
        cpu, start = time.process_time(), time.perf_counter()
        for _ in range(views):
            result = StrReplaceEditor(ws).run({"command": "view", "path": MOUNT})
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        if result.is_error:
            raise VerificationError(f"{key}: the view failed: {result.text[:200]}")
        self.texts[key] = result.text
        extra = {"cpu_s": cpu / views}  # this process's CPU: the same for both trees when the work is
        if counts is not None:
            extra["requests"] = sum(counts.values()) / views
        return Measured(elapsed / views, extra)

    def verify(self, key: str, other: str, rows: int) -> None:
        text = self.texts.get(key, "")
        if text.count("\n") < rows:
            raise VerificationError(f"{key}: the view shows {text.count(chr(10))} lines, expected at least {rows}")
        if other in self.texts and self.texts[other] != text:
            raise VerificationError(f"{key}: the view differs from {other}'s (the shown levels are the same)")


def build(ctx: Context) -> Workload:
    p = ctx.params("dir_view", DEFAULTS)
    import vfs

    folders, files = shown(p)
    rows = len(folders) + len(files) + 1
    deep_root, shallow_root = _local_roots(ctx, p)
    local = {
        tree: vfs.open_workspace(str(root), mount=MOUNT)
        for tree, root in (("deep", deep_root), ("shallow", shallow_root))
    }
    views = _Views()
    series = [
        Series(f"local.{tree}", f"view of a {what} tree's root (local disk)", role,
               lambda tree=tree: views.measure(f"local.{tree}", local[tree], views=LOCAL_VIEWS),
               verify=lambda tree=tree, other=other: views.verify(f"local.{tree}", f"local.{other}", rows))
        for tree, other, role, what in (
            ("deep", "shallow", "ours", f"{p['files']:,}-file"),
            ("shallow", "deep", "baseline", "2-level"),
        )
    ]  # fmt: skip
    s3 = _S3Trees(p)
    missing = _s3_missing()
    if missing is None:
        from tests.support.s3_servers import SeaweedFSStartError

        try:
            s3.start()
        except SeaweedFSStartError as exc:
            s3.close()
            missing = f"SeaweedFS did not start: {str(exc).splitlines()[0]}"
        except BaseException:
            s3.close()
            raise
    for tree, other, role, what in (
        ("deep", "shallow", "ours", f"{p['files']:,}-file"),
        ("shallow", "deep", "baseline", "2-level"),
    ):
        label = f"view of a {what} tree's root (S3, {p['rtt_ms']:g} ms RTT)"
        if missing is not None:
            series.append(Series(f"s3.{tree}", label, role, lambda: 0.0, missing=missing))
            continue
        series.append(Series(
            f"s3.{tree}", label, role,
            lambda tree=tree: views.measure(f"s3.{tree}", s3.workspaces[tree], s3.counts[tree]),
            verify=lambda tree=tree, other=other: views.verify(f"s3.{tree}", f"s3.{other}", rows),
        ))  # fmt: skip
    shown_count = len(folders) + len(files)
    targets = [
        Target(
            f"view of a {p['files']:,}-file tree <= {MAX_RATIO:g}x the same view with nothing below the 2 levels "
            f"shown ({where})",
            f"{store}.deep",
            MAX_RATIO,
            denominator=f"{store}.shallow",
            note=NOTE,
        )
        for store, where in (("local", "local disk"), ("s3", f"S3, {p['rtt_ms']:g} ms RTT"))
    ]

    def teardown() -> None:
        for ws in local.values():
            ws.close()
        s3.close()

    title = f"directory view: {shown_count} entries shown, {p['files']:,} files below them or none"
    repeat = 1 if ctx.profile == "tiny" else 3  # a view takes milliseconds: more runs, steadier medians
    return Workload("dir_view", title, p, series, targets, teardown=teardown, repeat=repeat)


NOTE = (
    "Met on 2026-12-03 (2 cores, load 12-21, 15 runs each): local disk 0.96x (range 0.52-2.15x; CPU "
    "3.40 vs 3.51 ms a view), S3 1.13x (range 0.55-1.89x; 11 requests a view on both trees). The view "
    "lists the root and each shown level-1 folder, one level each: by strace, 11 openat, 22 getdents64 "
    "and 246 newfstatat a view on either tree on disk; on S3 one delimiter LIST per folder, one after "
    "the other (11 round trips: concurrent listings of the level-1 folders would make it 2). Nothing "
    "below the second level is opened (see the module docstring)."
)
