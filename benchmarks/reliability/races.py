"""Race campaign: N processes x M edits through both tools on one local workspace, with external
writers (plain ``O_APPEND`` writes, no vfs) mixed in.

Every edit adds one unique line to one shared file:

* ``str_replace_editor`` workers ``view`` the file, then ``str_replace`` its last line L with
  ``L + "\\n" + mine`` (guarded by the version the view observed);
* ``apply_patch`` workers apply a pure-addition hunk (appended to the content read inside the
  transaction);
* external writers append a line with ``O_APPEND`` (another tool, the user's editor).

Checked after every round:

* 0 lost updates: every winner's line is in the final file exactly once, no loser's line is;
* every loser got ``FS_STALE_VERSION`` (nothing else);
* serial replay: replaying the winners in the order their lines appear (editor: insert after the
  line it saw last; patch and external: append) onto the initial file gives the final file byte for
  byte; in particular every editor winner's line directly follows the line it saw last, and each
  worker's wins keep their own order.

External appends overwritten by a commit are counted, not hidden. Where the kernel has
``renameat2(RENAME_EXCHANGE)`` the local backend swaps the new file in and checks the old one
after (``backends.local.setaside``), so only an append through a handle opened before the swap
and written after the check can still be lost; elsewhere the check-then-rename window remains.
``run_external`` (below) races external replace and append writers against conditional writes
and fails on any lost external write.
"""

from __future__ import annotations

import json
import os
import random
import re
import tempfile
import time
from typing import Any

from backends.local import LocalBackend
from benchmarks.reliability import Report

NUMBERED = re.compile(r"^\s*\d+[ \t]{1,2}(.*)$")
FILE = "shared.txt"
HEADER = b"header\n"


def _worker(root: str, kind: str, wid: int, edits: int, out: str, go: str, seed: int) -> None:
    import vfs
    from editors.apply_patch import apply_patch
    from editors.str_replace_editor import StrReplaceEditor

    rng = random.Random(seed)
    ws = vfs.Workspace(LocalBackend(root), mount=root)
    path = f"{root}/{FILE}"
    results: list[dict[str, Any]] = []
    while not os.path.exists(go):
        time.sleep(0.001)
    for j in range(edits):
        line = f"{kind[0]}{wid}-{j}"
        time.sleep(rng.random() * 0.004)
        if kind == "editor":
            editor = StrReplaceEditor(ws)  # a fresh conversation per edit: view, then edit
            view = editor.run({"command": "view", "path": path})
            shown = [m.group(1) for m in (NUMBERED.match(row) for row in view.text.splitlines()[1:]) if m]
            last = next((row for row in reversed(shown) if row), "")
            time.sleep(rng.random() * 0.002)
            res = editor.run({"command": "str_replace", "path": path, "old_str": last, "new_str": f"{last}\n{line}"})
            code = res.code if res.is_error else None
            results.append({"line": line, "code": code, "seen_last": last, "text": res.text[:300]})
        elif kind == "patch":
            patch = f"*** Begin Patch\n*** Update File: {FILE}\n@@\n+{line}\n*** End Patch"
            try:
                apply_patch(ws, patch)
                code = None
                text = ""
            except vfs.VfsError as exc:
                code, text = exc.code, exc.message
            results.append({"line": line, "code": code, "text": text[:300]})
        else:
            with open(os.path.join(root, FILE), "ab") as handle:
                handle.write(f"{line}\n".encode())
            results.append({"line": line, "code": None})
    with open(out, "w") as handle:
        json.dump(results, handle)


def _spawn(args: tuple[Any, ...]) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _worker(*args)
        except BaseException:  # noqa: BLE001 - the parent sees the exit status
            import traceback

            traceback.print_exc()
            code = 70
        finally:
            os._exit(code)
    return pid


def replay(results: dict[str, list[dict[str, Any]]], final_lines: list[str]) -> list[str]:
    """Apply the winners (and the external appends that survived) in the order their lines appear
    in the final file to the initial file: editor edits insert after the line they saw last,
    patches and external writers append."""
    by_line = {r["line"]: r for rs in results.values() for r in rs if r["code"] is None}
    current = HEADER.decode().splitlines()
    for line in final_lines:
        winner = by_line.get(line)
        if winner is None:
            continue
        if "seen_last" in winner:
            at = current.index(winner["seen_last"]) + 1 if winner["seen_last"] in current else len(current)
            current.insert(at, line)
        else:
            current.append(line)
    return current


def one_round(
    report: Report, tmp: str, round_no: int, *, editors: int, patchers: int, externals: int, edits: int, seed: int
) -> None:
    root = os.path.join(tmp, f"r{round_no}")
    os.makedirs(root)
    root = os.path.realpath(root)
    with open(os.path.join(root, FILE), "wb") as handle:
        handle.write(HEADER)
    go = os.path.join(tmp, f"go{round_no}")
    kinds = ["editor"] * editors + ["patch"] * patchers + ["external"] * externals
    pids, outs = [], {}
    for wid, kind in enumerate(kinds):
        out = os.path.join(tmp, f"r{round_no}-w{wid}.json")
        outs[f"{kind}{wid}"] = out
        pids.append(_spawn((root, kind, wid, edits, out, go, seed * 1000 + wid)))
    open(go, "w").close()
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            report.fail(f"round {round_no}: a worker died ({status})")
            return
    results = {}
    for name, path in outs.items():
        with open(path) as handle:
            results[name] = json.load(handle)
    with open(os.path.join(root, FILE), "rb") as handle:
        final = handle.read()
    report.trials += 1
    check_round(report, f"round {round_no}", results, final, externals_may_be_overwritten=True)


def check_round(
    report: Report,
    where: str,
    results: dict[str, list[dict[str, Any]]],
    final: bytes,
    *,
    externals_may_be_overwritten: bool,
) -> None:
    """The per-round checks shared by every race campaign (see the module docstring).

    ``externals_may_be_overwritten``: on local disk an external append that lands inside vfs's
    check-then-rename window is overwritten, and is counted; on S3 (compare-and-swap) there is no
    such window, so an external write that succeeded must be in the file.
    """
    final_lines = final.decode().splitlines()
    if len(final_lines) != len(set(final_lines)):
        report.fail(f"{where}: duplicated lines in the final file")
    present = set(final_lines)
    for name, rs in results.items():
        kind = name.rstrip("0123456789")
        order = [final_lines.index(r["line"]) for r in rs if r["code"] is None and r["line"] in present]
        if order != sorted(order):
            report.fail(f"{where}: {name}'s wins are out of order")
        for r in rs:
            won = r["code"] is None
            report.count(f"{kind} {'wins' if won else r['code']}")
            if r.get("retries"):
                report.count("external 412 retries (its If-Match lost to a concurrent commit)", r["retries"])
            if kind == "external" and externals_may_be_overwritten:
                if r["line"] not in present:
                    report.count("external appends overwritten in the check-then-rename window")
                continue
            if won and r["line"] not in present:
                report.fail(f"{where}: LOST UPDATE: {name}'s committed line {r['line']} is missing")
            if not won and r["line"] in present:
                report.fail(f"{where}: {name}'s refused line {r['line']} is in the file ({r['code']})")
            if not won and r["code"] != "FS_STALE_VERSION":
                report.fail(f"{where}: {name} lost with {r['code']}, not FS_STALE_VERSION: {r.get('text')}")
            if won and "seen_last" in r and r["line"] in present:
                i = final_lines.index(r["line"])
                if final_lines[i - 1] != r["seen_last"]:
                    report.fail(f"{where}: {r['line']} follows {final_lines[i - 1]!r}, it saw {r['seen_last']!r}")
    if replay(results, final_lines) != final_lines:
        report.fail(f"{where}: the serial replay of the winners does not give the final file")
    if not final.endswith(b"\n"):
        report.fail(f"{where}: the final newline was lost")


def run(
    trials: int = 20,
    *,
    seed: int = 0,
    editors: int = 3,
    patchers: int = 3,
    externals: int = 1,
    edits: int = 20,
) -> Report:
    """``trials`` rounds of (editors + patchers + externals) processes x ``edits`` edits each."""
    report = Report("races-local")
    report.notes.append(f"{editors} editor + {patchers} apply_patch + {externals} external processes x {edits} edits")
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(trials):
            one_round(
                report,
                tmp,
                round_no,
                editors=editors,
                patchers=patchers,
                externals=externals,
                edits=edits,
                seed=seed + round_no,
            )
    return report.finish()


# -- external replace and append writers against conditional writes, straight at the backend ------
#
# Writers that bypass vfs (an editor saving by rename, a logger appending) race vfs's conditional
# writes on one file. The externals serialise among themselves with their own flock (which vfs
# does not take), so a line of theirs that is missing at the end was destroyed by vfs: "lost".
# Lines kept by vfs in a ``.vfs-kept-*`` file count as "kept", not lost. A vfs winner's line may
# be clobbered by an external replace (the external writer's own lost update): counted, not
# blamed on vfs.

EXTERNAL_LOCK = "external.lock"


def _external_writer(root: str, kind: str, wid: int, writes: int, out: str, go: str, seed: int) -> None:
    import fcntl

    rng = random.Random(seed)
    path = os.path.join(root, FILE)
    lock = os.open(os.path.join(os.path.dirname(root), EXTERNAL_LOCK), os.O_RDWR | os.O_CREAT, 0o666)
    lines = []
    while not os.path.exists(go):
        time.sleep(0.001)
    for j in range(writes):
        line = f"x{kind[0]}{wid}-{j}"
        if rng.random() < 0.5:
            time.sleep(rng.random() * 0.001)
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if kind == "append":
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                os.write(fd, f"{line}\n".encode())
                os.close(fd)
            else:
                with open(path, "rb") as handle:
                    data = handle.read()
                tmp = os.path.join(root, f"ext-{wid}.tmp")
                with open(tmp, "wb") as handle:
                    handle.write(data + f"{line}\n".encode())
                os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        lines.append(line)
    with open(out, "w") as handle:
        json.dump({"external": lines}, handle)


def _vfs_writer(root: str, wid: int, writes: int, out: str, go: str, seed: int, set_aside: bool) -> None:
    from backends.base import PreconditionFailed, WriteItem

    rng = random.Random(seed)
    backend = LocalBackend(root, set_aside=set_aside)
    won, refused = [], []
    while not os.path.exists(go):
        time.sleep(0.001)
    for j in range(writes):
        line = f"v{wid}-{j}"
        data, info = backend.read(FILE)
        if rng.random() < 0.5:
            time.sleep(rng.random() * 0.001)
        try:
            with backend.lock(os.path.join("..", "vfs.lock"), timeout=60):  # vfs commits one at a time
                backend.write(WriteItem(FILE, data + f"{line}\n".encode(), if_version=info.version))
            won.append(line)
        except PreconditionFailed:
            refused.append(line)
    with open(out, "w") as handle:
        json.dump({"won": won, "refused": refused}, handle)


def _fork(target: Any, *args: Any) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            target(*args)
        except BaseException:  # noqa: BLE001 - the parent sees the exit status
            import traceback

            traceback.print_exc()
            code = 70
        finally:
            os._exit(code)
    return pid


def external_round(
    report: Report,
    tmp: str,
    round_no: int,
    *,
    appenders: int,
    replacers: int,
    vfs_writers: int,
    writes: int,
    seed: int,
    set_aside: bool = True,
) -> None:
    root = os.path.realpath(os.path.join(tmp, f"x{round_no}", "root"))
    os.makedirs(root)
    with open(os.path.join(root, FILE), "wb") as handle:
        handle.write(HEADER)
    go = os.path.join(tmp, f"xgo{round_no}")
    kinds = ["append"] * appenders + ["replace"] * replacers
    outs, pids = [], []
    for wid, kind in enumerate(kinds):
        outs.append(os.path.join(tmp, f"x{round_no}-e{wid}.json"))
        pids.append(_fork(_external_writer, root, kind, wid, writes, outs[-1], go, seed * 1000 + wid))
    for wid in range(vfs_writers):
        outs.append(os.path.join(tmp, f"x{round_no}-v{wid}.json"))
        pids.append(_fork(_vfs_writer, root, wid, writes, outs[-1], go, seed * 1000 + 500 + wid, set_aside))
    open(go, "w").close()
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            report.fail(f"round {round_no}: a writer died ({status})")
            return
    results: dict[str, list[str]] = {"external": [], "won": [], "refused": []}
    for out in outs:
        with open(out) as handle:
            for name, lines in json.load(handle).items():
                results[name] += lines
    report.trials += 1
    check_external_round(report, f"round {round_no}", root, results)


def check_external_round(report: Report, where: str, root: str, results: dict[str, list[str]]) -> None:
    with open(os.path.join(root, FILE), "rb") as handle:
        final = set(handle.read().decode().splitlines())
    kept: set[str] = set()
    for name in os.listdir(root):
        if name.startswith(".vfs-kept-"):
            with open(os.path.join(root, name), "rb") as handle:
                kept |= set(handle.read().decode().splitlines())
        elif name.startswith(".vfs-tmp-"):
            report.fail(f"{where}: a temp file was left behind: {name}")
    report.count("external writes", len(results["external"]))
    report.count("vfs conditional writes won", len(results["won"]))
    report.count("vfs conditional writes refused (stale)", len(results["refused"]))
    for line in results["external"]:
        if line in final:
            continue
        if line in kept:
            report.count("external writes kept in a .vfs-kept-* file")
        else:
            report.count("external writes lost")
            report.fail(f"{where}: LOST external write {line}")
    report.count("vfs wins clobbered by an external replace", sum(1 for x in results["won"] if x not in final))
    report.count(
        "vfs refused lines seen in the file (read during a swap-back)", sum(1 for x in results["refused"] if x in final)
    )


def run_external(
    trials: int = 5,
    *,
    seed: int = 0,
    appenders: int = 1,
    replacers: int = 1,
    vfs_writers: int = 2,
    writes: int = 500,
    set_aside: bool = True,
) -> Report:
    """``trials`` rounds of external append and replace writers racing vfs conditional writes on
    one local file; every lost external write is a failure line (the promise is none).
    ``set_aside=False`` runs the check-then-rename publish instead, for comparison."""
    report = Report("races-local-external" if set_aside else "races-local-external-check-then-rename")
    report.notes.append(
        f"{appenders} appender + {replacers} replacer (external, no vfs) + {vfs_writers} vfs writer processes"
        f" x {writes} writes"
    )
    report.count("external writes lost", 0)
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(trials):
            external_round(
                report,
                tmp,
                round_no,
                appenders=appenders,
                replacers=replacers,
                vfs_writers=vfs_writers,
                writes=writes,
                seed=seed + round_no,
                set_aside=set_aside,
            )
    return report.finish()
