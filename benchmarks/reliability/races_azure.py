"""Race campaign on Azure Blob Storage (Azurite on 127.0.0.1): the SeaweedFS race campaign
(:mod:`benchmarks.reliability.races_s3`) on ``az://container/ws``: str_replace_editor and
apply_patch processes, each with its own workspace, plus external SDK clients doing If-Match
read-modify-write of the blob, all adding lines to one file. Checked by the same
``races_s3.check_round``: 0 lost updates (an external write that got 201 must be in the file),
every vfs loser ``FS_STALE_VERSION``, the final file equals the serial replay of the winners.

``python -m benchmarks.reliability races-azure [--trials N]`` starts its own Azurite.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks.reliability import Report
from benchmarks.reliability.crash import REPO
from benchmarks.reliability.races import FILE, HEADER, NUMBERED
from benchmarks.reliability.races_s3 import KEY, PATH, WORKER_TIMEOUT, _ready_then_wait, _stop, check_round

URL = "az://{container}/ws"


def _external(spec: dict[str, Any], rng: random.Random, results: list[dict[str, Any]]) -> None:
    """Read, append a line, write back with If-Match on the ETag read; on 412 read again."""
    from azure.core.exceptions import ResourceModifiedError
    from azure.storage.blob import BlobServiceClient

    blob = BlobServiceClient.from_connection_string(spec["options"]["connection_string"]).get_blob_client(
        spec["container"], KEY
    )
    _ready_then_wait(spec["go"])
    for j in range(spec["edits"]):
        line = f"x{spec['wid']}-{j}"
        time.sleep(rng.random() * spec["external_gap"])
        retries = 0
        while True:
            got = blob.download_blob()
            body = got.readall()
            try:
                blob.upload_blob(body + f"{line}\n".encode(), overwrite=True, if_match=got.properties.etag)
                break
            except ResourceModifiedError:
                retries += 1
                time.sleep(rng.random() * spec["jitter"])
        results.append({"line": line, "code": None, "retries": retries})


def _edit(ws: Any, kind: str, line: str, rng: random.Random, jitter: float) -> dict[str, Any]:
    """One vfs edit adding ``line``: view + guarded str_replace of the last line, or a patch."""
    import vfs
    from editors.apply_patch import apply_patch
    from editors.str_replace_editor import StrReplaceEditor

    if kind == "editor":
        editor = StrReplaceEditor(ws)  # a fresh conversation per edit: view, then edit
        rows = editor.run({"command": "view", "path": PATH}).text.splitlines()[1:]
        shown = [m.group(1) for m in (NUMBERED.match(row) for row in rows) if m]
        last = next((row for row in reversed(shown) if row), "")
        time.sleep(rng.random() * jitter / 2)
        res = editor.run({"command": "str_replace", "path": PATH, "old_str": last, "new_str": f"{last}\n{line}"})
        return {"line": line, "code": res.code if res.is_error else None, "seen_last": last, "text": res.text[:300]}
    try:
        apply_patch(ws, f"*** Begin Patch\n*** Update File: {FILE}\n@@\n+{line}\n*** End Patch")
        return {"line": line, "code": None, "text": ""}
    except vfs.VfsError as exc:
        return {"line": line, "code": exc.code, "text": exc.message[:300]}


def worker(spec: dict[str, Any]) -> None:
    """One process of a round (the spec of races_s3's workers, with ``url`` and ``container``)."""
    rng = random.Random(spec["seed"])
    results: list[dict[str, Any]] = []
    if spec["kind"] == "external":
        _external(spec, rng, results)
    else:
        import vfs

        ws = vfs.open_workspace(spec["url"], storage_options=spec["options"])
        _ready_then_wait(spec["go"])
        for j in range(spec["edits"]):
            time.sleep(rng.random() * spec["jitter"])
            results.append(_edit(ws, spec["kind"], f"{spec['kind'][0]}{spec['wid']}-{j}", rng, spec["jitter"]))
        ws.close()
    with open(spec["out"], "w") as handle:
        json.dump(results, handle)


def _spawn(spec: dict[str, Any]) -> subprocess.Popen[bytes]:
    module = "benchmarks.reliability.races_azure"
    return subprocess.Popen(
        [sys.executable, "-m", module, "--worker", json.dumps(spec)],
        env={**os.environ, "PYTHONPATH": REPO},
        stdout=subprocess.PIPE,
    )


def _wait_all(report: Report, where: str, procs: list[subprocess.Popen[bytes]], go: str) -> bool:
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline() != b"r\n":
            report.fail(f"{where}: a worker did not start (exit {proc.wait()})")
            return False
    open(go, "w").close()
    deadline = time.monotonic() + WORKER_TIMEOUT
    for proc in procs:
        try:
            code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            report.fail(f"{where}: a worker hung past {WORKER_TIMEOUT:.0f} s")
            return False
        if code != 0:
            report.fail(f"{where}: a worker died (exit {code})")
            return False
    return True


def one_round(report: Report, ep: Any, tmp: str, round_no: int, kinds: list[str], **knobs: Any) -> None:
    from tests.support import azurite

    container = azurite.make_container(ep, f"races-r{round_no}")
    blob = ep.service().get_blob_client(container, KEY)
    blob.upload_blob(HEADER)
    go = os.path.join(tmp, f"go{round_no}")
    where = f"round {round_no}"
    outs: dict[str, str] = {}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for wid, kind in enumerate(kinds):
            outs[f"{kind}{wid}"] = out = os.path.join(tmp, f"r{round_no}-w{wid}.json")
            spec = {"container": container, "url": URL.format(container=container), "options": ep.storage_options}
            spec.update(knobs, kind=kind, wid=wid, out=out, go=go, seed=knobs["seed"] * 1000 + wid)
            procs.append(_spawn(spec))
        if not _wait_all(report, where, procs, go):
            return
    finally:
        _stop(procs)
    results = {}
    for name, path in outs.items():
        with open(path) as handle:
            results[name] = json.load(handle)
    report.trials += 1
    check_round(report, where, results, blob.download_blob().readall())


def run(
    trials: int = 5,
    *,
    seed: int = 0,
    editors: int = 3,
    patchers: int = 3,
    externals: int = 1,
    edits: int = 10,
    jitter: float = 0.02,
    external_gap: float = 1.0,
    endpoint: Any = None,
) -> Report:
    """``trials`` rounds of (editors + patchers + externals) processes x ``edits`` edits each on
    Azurite (``endpoint``, or one started and stopped here)."""
    from tests.support import azurite

    report = Report("races-azurite")
    report.notes.append(
        f"{editors} editor + {patchers} apply_patch + {externals} external (If-Match RMW) processes x {edits} edits"
    )
    kinds = ["editor"] * editors + ["patch"] * patchers + ["external"] * externals
    with contextlib.ExitStack() as stack:
        ep = endpoint if endpoint is not None else stack.enter_context(azurite.azurite_endpoint())
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        for round_no in range(trials):
            knobs = {"edits": edits, "seed": seed + round_no, "jitter": jitter, "external_gap": external_gap}
            one_round(report, ep, tmp, round_no, kinds, **knobs)
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
