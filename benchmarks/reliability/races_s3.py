"""Race campaign on SeaweedFS (issue 8.3, "local and SeaweedFS"): the campaign of
:mod:`benchmarks.reliability.races` with every process opening its own workspace on the same
``s3://bucket/ws`` of a ``weed mini`` server on 127.0.0.1.

Every edit adds one unique line to ``/workspace/shared.txt``:

* ``str_replace_editor`` workers ``view`` the file, then ``str_replace`` its last line L with
  ``L + "\\n" + mine`` (guarded by the version the view observed);
* ``apply_patch`` workers apply a pure-addition hunk;
* external writers are plain S3 clients (boto3, no vfs) doing read-modify-write of the object
  ``ws/shared.txt``: ``GetObject``, append a line, ``PutObject`` with ``If-Match: <the ETag read>``,
  and on 412 read again and retry. The conditional PUT is the external writer's own concurrency
  control: a blind ``PutObject`` would overwrite whatever vfs committed since the writer's read, a
  lost update caused by that writer, not by vfs, which no store-side protocol can prevent. With
  ``If-Match`` on both sides there is no check-then-rename window (the local campaign's documented
  overwrite window), so here every external write that returned 200 must be in the final file.

Checked after every round by the local campaign's own ``races.check_round``:

* 0 lost updates: every winner's line (vfs or external) is in the final file exactly once, no
  loser's line is;
* every vfs loser got ``FS_STALE_VERSION`` (nothing else);
* serial replay: replaying the winners in the order their lines appear onto the initial file gives
  the final file byte for byte; each worker's wins keep their own order.

Workers are fresh interpreters (``subprocess``): s3fs's event-loop thread must not be forked. A
worker opens its workspace, prints ``r``, and starts its edits when the parent creates the go file
(once every worker is ready). SeaweedFS's ETag is the MD5 of the body and every write here adds a
unique line, so an ``If-Match`` cannot be fooled by an identical rewrite (ABA).

``python -m benchmarks.reliability races-s3 [--trials N]`` starts its own SeaweedFS server.
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

from benchmarks.reliability import Report, races
from benchmarks.reliability.crash import REPO
from benchmarks.reliability.races import FILE, HEADER, NUMBERED

KEY = f"ws/{FILE}"
PATH = f"/workspace/{FILE}"
WORKER_TIMEOUT = 600.0


def _external(spec: dict[str, Any], rng: random.Random, go: str, results: list[dict[str, Any]]) -> None:
    import boto3
    from botocore.exceptions import ClientError

    opts = spec["options"]
    client = boto3.client(
        "s3",
        endpoint_url=opts["client_kwargs"]["endpoint_url"],
        region_name=opts["client_kwargs"]["region_name"],
        aws_access_key_id=opts["key"],
        aws_secret_access_key=opts["secret"],
    )
    _ready_then_wait(go)
    for j in range(spec["edits"]):
        line = f"x{spec['wid']}-{j}"
        time.sleep(rng.random() * spec["external_gap"])  # spread over the round, not all at its start
        retries = 0
        while True:
            got = client.get_object(Bucket=spec["bucket"], Key=KEY)
            body = got["Body"].read()
            try:
                client.put_object(Bucket=spec["bucket"], Key=KEY, Body=body + f"{line}\n".encode(), IfMatch=got["ETag"])
                break
            except ClientError as exc:
                if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") != 412:
                    raise
                retries += 1
                time.sleep(rng.random() * spec["jitter"])
        results.append({"line": line, "code": None, "retries": retries})


def _ready_then_wait(go: str) -> None:
    sys.stdout.write("r\n")
    sys.stdout.flush()
    while not os.path.exists(go):
        time.sleep(0.001)


def worker(spec: dict[str, Any]) -> None:
    """One process of a round (``spec``: bucket, options, kind, wid, edits, out, go, seed, jitter,
    external_gap). vfs workers pause up to ``jitter`` s before an edit; external writers up to
    ``external_gap`` s, so that their few writes land all through the round."""
    rng = random.Random(spec["seed"])
    kind, wid = spec["kind"], spec["wid"]
    results: list[dict[str, Any]] = []
    if kind == "external":
        _external(spec, rng, spec["go"], results)
    else:
        import vfs
        from editors.apply_patch import apply_patch
        from editors.str_replace_editor import StrReplaceEditor

        ws = vfs.open_workspace(f"s3://{spec['bucket']}/ws", storage_options=spec["options"])
        _ready_then_wait(spec["go"])
        for j in range(spec["edits"]):
            line = f"{kind[0]}{wid}-{j}"
            time.sleep(rng.random() * spec["jitter"])
            if kind == "editor":
                editor = StrReplaceEditor(ws)  # a fresh conversation per edit: view, then edit
                view = editor.run({"command": "view", "path": PATH})
                rows = view.text.splitlines()[1:]
                shown = [m.group(1) for m in (NUMBERED.match(row) for row in rows) if m]
                last = next((row for row in reversed(shown) if row), "")
                time.sleep(rng.random() * spec["jitter"] / 2)
                res = editor.run(
                    {"command": "str_replace", "path": PATH, "old_str": last, "new_str": f"{last}\n{line}"}
                )
                code = res.code if res.is_error else None
                results.append({"line": line, "code": code, "seen_last": last, "text": res.text[:300]})
            else:
                patch = f"*** Begin Patch\n*** Update File: {FILE}\n@@\n+{line}\n*** End Patch"
                try:
                    apply_patch(ws, patch)
                    code, text = None, ""
                except vfs.VfsError as exc:
                    code, text = exc.code, exc.message
                results.append({"line": line, "code": code, "text": text[:300]})
        ws.close()
    with open(spec["out"], "w") as handle:
        json.dump(results, handle)


def check_round(report: Report, where: str, results: dict[str, list[dict[str, Any]]], final: bytes) -> None:
    """The local campaign's per-round checks, stricter in one way: an external write that got 200
    must be in the file (no overwrite window on S3, see the module docstring)."""
    races.check_round(report, where, results, final, externals_may_be_overwritten=False)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def one_round(
    report: Report,
    ep: Any,
    tmp: str,
    round_no: int,
    *,
    editors: int,
    patchers: int,
    externals: int,
    edits: int,
    seed: int,
    jitter: float,
    external_gap: float,
) -> None:
    from tests.support import s3_servers

    bucket = s3_servers.make_bucket(ep, f"races-r{round_no}")
    client = ep.client()
    client.put_object(Bucket=bucket, Key=KEY, Body=HEADER)
    go = os.path.join(tmp, f"go{round_no}")
    kinds = ["editor"] * editors + ["patch"] * patchers + ["external"] * externals
    env = {**os.environ, "PYTHONPATH": REPO}
    procs: list[subprocess.Popen[bytes]] = []
    outs: dict[str, str] = {}
    where = f"round {round_no}"
    try:
        for wid, kind in enumerate(kinds):
            out = os.path.join(tmp, f"r{round_no}-w{wid}.json")
            outs[f"{kind}{wid}"] = out
            spec = {
                "bucket": bucket,
                "options": ep.storage_options,
                "kind": kind,
                "wid": wid,
                "edits": edits,
                "out": out,
                "go": go,
                "seed": seed * 1000 + wid,
                "jitter": jitter,
                "external_gap": external_gap,
            }
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "benchmarks.reliability.races_s3", "--worker", json.dumps(spec)],
                    env=env,
                    stdout=subprocess.PIPE,
                )
            )
        for proc in procs:
            assert proc.stdout is not None
            if proc.stdout.readline() != b"r\n":
                report.fail(f"{where}: a worker did not start (exit {proc.wait()})")
                return
        open(go, "w").close()
        deadline = time.monotonic() + WORKER_TIMEOUT
        for proc in procs:
            try:
                code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                report.fail(f"{where}: a worker hung past {WORKER_TIMEOUT:.0f} s")
                return
            if code != 0:
                report.fail(f"{where}: a worker died (exit {code})")
                return
    finally:
        _stop(procs)
    results = {}
    for name, path in outs.items():
        with open(path) as handle:
            results[name] = json.load(handle)
    final = client.get_object(Bucket=bucket, Key=KEY)["Body"].read()
    report.trials += 1
    check_round(report, where, results, final)


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
    SeaweedFS (``endpoint``, or a ``weed mini`` started and stopped here)."""
    from tests.support import s3_servers

    report = Report("races-seaweedfs")
    report.notes.append(
        f"{editors} editor + {patchers} apply_patch + {externals} external (If-Match RMW) processes x {edits} edits"
    )
    with contextlib.ExitStack() as stack:
        ep = endpoint if endpoint is not None else stack.enter_context(s3_servers.seaweedfs_endpoint())
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        for round_no in range(trials):
            one_round(
                report,
                ep,
                tmp,
                round_no,
                editors=editors,
                patchers=patchers,
                externals=externals,
                edits=edits,
                seed=seed + round_no,
                jitter=jitter,
                external_gap=external_gap,
            )
    return report.finish()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
    else:
        report = run(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
        print(report.render())
        sys.exit(1 if report.failures else 0)
