"""The tools under test, each run on every attempt it applies to, from the same bytes.

Ours (in process, on a ``memory://`` workspace, default policy, one session per attempt in which
the model has viewed every file it edits, as an agent does): ``str_replace_editor`` and
``apply_patch`` through ``editors.integration.handle_tool_call``.

Peers: Codex's ``apply_patch`` binary (a process per call, in a temporary directory), the DSH
``str_replace_editor`` (npm, all attempts in one node process over an in-memory ``ctx.fs``:
``dsh_harness.mjs``) and the OpenHands editor (in process, on a temporary directory). A peer that
is not installed is reported missing with the reason, never silently skipped.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import peers
from benchmarks.replay.corpus import Attempt
from benchmarks.replay.dsh import run_harness

MOUNT = "/workspace"


@dataclass
class Run:
    """What one tool did with one attempt: every reply, and the files afterwards."""

    texts: list[str]
    errors: list[bool]
    final: dict[str, bytes | None]  # relative path -> bytes (None: the file is gone)


@dataclass
class Tool:
    key: str
    label: str
    family: str  # "editor" (str_replace calls) or "patch" (an apply_patch input)
    role: str  # "ours" or "peer"
    version: str | None = None
    missing: str | None = None
    #: Runs a list of attempts, returns one Run per attempt (batching is the tool's business).
    run_all: Callable[[list[Attempt]], list[Run]] | None = None


def applies(tool: Tool, attempt: Attempt) -> bool:
    return (attempt.editor_calls if tool.family == "editor" else attempt.patch) is not None


# -- ours ------------------------------------------------------------------------------------------


def _ours(attempts: list[Attempt], family: str) -> list[Run]:
    import vfs
    from editors.integration import handle_tool_call
    from vfs.errors import VfsError

    out = []
    for n, attempt in enumerate(attempts):
        url = f"memory://replay-{family}-{n}-{attempt.id}"
        ws = vfs.open_workspace(url)
        try:
            for f in attempt.files:
                ws.write_bytes(f"{MOUNT}/{f.path}", f.viewed)
            session = ws.session()
            for f in attempt.files:  # the model has viewed every file it edits (not counted)
                view = handle_tool_call(ws, "str_replace_editor", {"command": "view", "path": f"{MOUNT}/{f.path}"},
                                        session=session)  # fmt: skip
                if view.is_error:
                    raise RuntimeError(f"view failed: {view.text}")
            stale = [f for f in attempt.files if f.original != f.viewed]
            if stale:  # someone else writes the file after the view
                other = vfs.open_workspace(url)
                for f in stale:
                    other.write_bytes(f"{MOUNT}/{f.path}", f.original)
            texts, errors = [], []
            for _ in range(attempt.repeat):
                if family == "editor":
                    assert attempt.editor_calls is not None
                    for call in attempt.editor_calls:
                        args = {**call, "path": f"{MOUNT}/{call['path']}"}
                        reply = handle_tool_call(ws, "str_replace_editor", args, session=session)
                        texts.append(reply.text)
                        errors.append(reply.is_error)
                else:
                    reply = handle_tool_call(ws, "apply_patch", attempt.patch, session=session)
                    texts.append(reply.text)
                    errors.append(reply.is_error)
            final: dict[str, bytes | None] = {}
            for f in attempt.files:
                try:
                    final[f.path] = ws.read(f"{MOUNT}/{f.path}").data
                except VfsError:
                    final[f.path] = None
            out.append(Run(texts, errors, final))
        finally:
            close = getattr(ws, "close", None)
            if close:
                close()
    return out


def ours_tools() -> list[Tool]:
    return [
        Tool("ours.str_replace_editor", "vfs str_replace_editor", "editor", "ours", "this commit",
             run_all=lambda a: _ours(a, "editor")),
        Tool("ours.apply_patch", "vfs apply_patch", "patch", "ours", "this commit",
             run_all=lambda a: _ours(a, "patch")),
    ]  # fmt: skip


# -- peers on a temporary directory ----------------------------------------------------------------


def _materialise(root: Path, attempt: Attempt) -> None:
    for f in attempt.files:
        target = root / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.original)


def _collect(root: Path, attempt: Attempt) -> dict[str, bytes | None]:
    final: dict[str, bytes | None] = {}
    for f in attempt.files:
        target = root / f.path
        final[f.path] = target.read_bytes() if target.is_file() else None
    return final


def _codex(binary: str, attempts: list[Attempt]) -> list[Run]:
    out = []
    base = Path(tempfile.mkdtemp(prefix="vfs-replay-codex-"))
    try:
        for n, attempt in enumerate(attempts):
            root = base / str(n)
            root.mkdir()
            _materialise(root, attempt)
            texts, errors = [], []
            for _ in range(attempt.repeat):
                assert attempt.patch is not None
                done = subprocess.run([binary, attempt.patch], cwd=root, capture_output=True, timeout=60, check=False)
                texts.append((done.stdout + done.stderr).decode("utf-8", "replace"))
                errors.append(done.returncode != 0)
            out.append(Run(texts, errors, _collect(root, attempt)))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def _openhands(site: str | None, attempts: list[Attempt]) -> list[Run]:
    editor_class = peers.load_openhands_editor(site)
    out = []
    base = Path(tempfile.mkdtemp(prefix="vfs-replay-openhands-"))
    try:
        editor = editor_class()
        for n, attempt in enumerate(attempts):
            root = base / str(n)
            root.mkdir()
            _materialise(root, attempt)
            texts, errors = [], []
            for _ in range(attempt.repeat):
                assert attempt.editor_calls is not None
                for call in attempt.editor_calls:
                    args = {**call, "path": str(root / str(call["path"]))}
                    try:
                        result = editor(**args)
                        error = getattr(result, "error", None)
                        texts.append(str(error or getattr(result, "output", "")))
                        errors.append(bool(error))
                    except Exception as exc:  # noqa: BLE001 - the peer's refusals are exceptions
                        texts.append(f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}")
                        errors.append(True)
            out.append(Run(texts, errors, _collect(root, attempt)))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def dsh_modules() -> tuple[Path | None, str | None, str | None]:
    """(node_modules directory, version, why missing)."""
    candidates = []
    if os.environ.get("VFS_BENCH_DSH"):
        candidates.append(Path(os.environ["VFS_BENCH_DSH"]))
    candidates.append(peers.cache_dir() / "dsh" / "node_modules")
    node = shutil.which("node")
    for modules in candidates:
        manifest = modules / "@deepseek-ai" / "dsh-tool-str-replace-editor" / "package.json"
        if manifest.is_file():
            if node is None:
                return None, None, "node is not on PATH"
            version = json.loads(manifest.read_text()).get("version")
            return modules, f"@deepseek-ai/dsh-tool-str-replace-editor {version}", None
    tried = ", ".join(str(c) for c in candidates)
    return None, None, f"DSH editor not found ({tried}); run bash benchmarks/replay/install_dsh.sh"


def _dsh(modules: Path, attempts: list[Attempt]) -> list[Run]:
    payload = []
    for attempt in attempts:
        assert attempt.editor_calls is not None
        payload.append({
            "id": attempt.id,
            "repeat": attempt.repeat,
            "files": {f"{MOUNT}/{f.path}": base64.b64encode(f.original).decode() for f in attempt.files},
            "calls": [{**c, "path": f"{MOUNT}/{c['path']}"} for c in attempt.editor_calls],
        })  # fmt: skip
    out = []
    for attempt, result in zip(attempts, run_harness(modules, payload, timeout=600), strict=True):
        assert result["id"] == attempt.id
        final = {
            f.path: base64.b64decode(result["files"][f"{MOUNT}/{f.path}"]) if f"{MOUNT}/{f.path}" in result["files"]
            else None
            for f in attempt.files
        }  # fmt: skip
        out.append(Run([r["text"] for r in result["results"]], [r["error"] for r in result["results"]], final))
    return out


def peer_tools() -> list[Tool]:
    codex = peers.codex()
    openhands = peers.openhands()
    modules, dsh_version, dsh_missing = dsh_modules()
    site = openhands.path if openhands.path != "site-packages" else None
    return [
        Tool("codex", "Codex apply_patch", "patch", "peer", codex.version, codex.missing,
             (lambda a: _codex(str(codex.path), a)) if codex.available else None),
        Tool("dsh", "DSH str_replace_editor", "editor", "peer", dsh_version, dsh_missing,
             (lambda a: _dsh(modules, a)) if modules is not None else None),
        Tool("openhands", "OpenHands editor", "editor", "peer", openhands.version, openhands.missing,
             (lambda a: _openhands(site, a)) if openhands.available else None),
    ]  # fmt: skip


def all_tools(with_peers: bool = True) -> list[Tool]:
    tools = ours_tools()
    if with_peers:
        tools += peer_tools()
    return tools
