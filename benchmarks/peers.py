"""Locating the peers: Codex's ``apply_patch`` binary and the OpenHands editor.

Nothing here installs anything (``benchmarks/install_peers.sh`` does, into a cache directory outside
the repository). A peer that cannot be found is reported with the reason, and the runner prints
it as ``missing`` in the table; it is never silently skipped.

Lookup order:

- Codex: ``$VFS_BENCH_CODEX`` (the binary, or a symlink named ``apply_patch`` to it), then
  ``$VFS_BENCH_CACHE/codex/apply_patch`` (default cache ``~/.cache/vfs-bench``), then an
  ``apply_patch`` on ``PATH``.
- OpenHands: ``$VFS_BENCH_OPENHANDS`` (a directory holding the unzipped ``openhands_aci`` package),
  then ``$VFS_BENCH_CACHE/openhands/site``, then an importable ``openhands_aci``.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    return Path(os.environ.get("VFS_BENCH_CACHE") or Path.home() / ".cache" / "vfs-bench")


INSTALL_HINT = "bash benchmarks/install_peers.sh"


@dataclass(frozen=True)
class Peer:
    name: str
    path: str | None  # binary or site directory; None when missing
    version: str | None = None
    missing: str | None = None  # why it is not available

    @property
    def available(self) -> bool:
        return self.missing is None


# -- Codex ----------------------------------------------------------------------------------------


def _codex_version(binary: Path) -> str | None:
    """The npm package version next to the binary (the binary itself, called as apply_patch,
    has no --version)."""
    for parent in binary.resolve().parents:
        manifest = parent / "package.json"
        if manifest.is_file() and parent.name.startswith("codex"):
            try:
                data = json.loads(manifest.read_text())
            except (OSError, ValueError):
                continue
            version = data.get("version")
            if isinstance(version, str):
                return f"@openai/codex {version}"
    try:
        real = str(binary.resolve())
        out = subprocess.run([real, "--version"], capture_output=True, text=True, timeout=10, check=False)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


@cache
def codex() -> Peer:
    candidates: list[tuple[str, Path]] = []
    if os.environ.get("VFS_BENCH_CODEX"):
        candidates.append(("$VFS_BENCH_CODEX", Path(os.environ["VFS_BENCH_CODEX"])))
    candidates.append(("cache", cache_dir() / "codex" / "apply_patch"))
    on_path = shutil.which("apply_patch")
    if on_path:
        candidates.append(("PATH", Path(on_path)))
    tried = []
    for origin, path in candidates:
        tried.append(f"{origin}={path}")
        if path.is_file() and os.access(path, os.X_OK):
            if path.name != "apply_patch":
                # Codex dispatches on argv[0]: give it the name it needs, in the cache.
                link = cache_dir() / "codex" / "apply_patch-env"
                link.mkdir(parents=True, exist_ok=True)
                named = link / "apply_patch"
                if named.is_symlink() or named.exists():
                    named.unlink()
                named.symlink_to(path.resolve())
                path = named
            return Peer("codex", str(path), _codex_version(path))
    return Peer("codex", None, None, f"Codex apply_patch not found ({'; '.join(tried)}); run {INSTALL_HINT} codex")


# -- OpenHands ------------------------------------------------------------------------------------

#: Heavy optional imports of openhands_aci (linter, document converter) that the editor's
#: str_replace never calls; stubbed when missing, as peers.md describes.
_STUB_ROOTS = (
    "grep_ast",
    "tree_sitter",
    "tree_sitter_language_pack",
    "tree_sitter_languages",
    "mammoth",
    "markdownify",
    "pandas",
    "pdfminer",
    "pptx",
    "puremagic",
    "speech_recognition",
    "bs4",
    "youtube_transcript_api",
    "requests",
    "xlrd",
    "openpyxl",
    "whatthepatch",
    "diskcache",
    "litellm",
)


class _StubModule(types.ModuleType):
    """A module whose every attribute is a harmless placeholder class."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        # A constant table (grep_ast.parsers.PARSERS) is empty; anything else a do-nothing class.
        placeholder: Any = {} if name.isupper() else type(name, (), {"__init__": lambda self, *a, **k: None})
        setattr(self, name, placeholder)
        return placeholder


def _stub(name: str) -> None:
    module = _StubModule(name)
    module.__path__ = []  # a package, so that submodules can be stubbed too
    module.__file__ = f"<vfs-bench stub {name}>"
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, module)


def _site_candidates() -> list[tuple[str, Path]]:
    out = []
    if os.environ.get("VFS_BENCH_OPENHANDS"):
        out.append(("$VFS_BENCH_OPENHANDS", Path(os.environ["VFS_BENCH_OPENHANDS"])))
    out.append(("cache", cache_dir() / "openhands" / "site"))
    return out


@cache
def openhands() -> Peer:
    for origin, site in _site_candidates():
        if (site / "openhands_aci" / "__init__.py").is_file():
            try:
                load_openhands_editor(str(site))
            except Exception as exc:  # noqa: BLE001 - any import failure means "missing", with the reason
                return Peer("openhands", None, None, f"openhands_aci at {site} ({origin}) failed to import: {exc!r}")
            return Peer("openhands", str(site), _openhands_version(site))
    if importlib.util.find_spec("openhands_aci") is not None:
        try:
            load_openhands_editor(None)
        except Exception as exc:  # noqa: BLE001
            return Peer("openhands", None, None, f"openhands_aci failed to import: {exc!r}")
        return Peer("openhands", "site-packages", _openhands_version(None))
    tried = "; ".join(f"{o}={p}" for o, p in _site_candidates())
    return Peer("openhands", None, None, f"openhands_aci not found ({tried}); run {INSTALL_HINT} openhands")


def _openhands_version(site: Path | None) -> str | None:
    if site is not None:
        infos = sorted(site.glob("openhands_aci-*.dist-info"))
        if infos:
            return "openhands-aci " + infos[-1].name[len("openhands_aci-") : -len(".dist-info")]
    try:
        from importlib.metadata import version

        return "openhands-aci " + version("openhands-aci")
    except Exception:  # noqa: BLE001
        return None


def load_openhands_editor(site: str | None) -> type:
    """``openhands_aci.editor.editor.OHEditor``, importing the wheel from ``site`` with the heavy
    optional modules stubbed (only those that are not installed)."""
    if site is not None and site not in sys.path:
        sys.path.insert(0, site)
    # openhands_aci's file_cache calls logging.basicConfig(level=DEBUG) at import, which in a bare
    # process would make the peer format debug records on every call. A host application has
    # configured logging already (basicConfig is then a no-op): do the same, so it runs as deployed.
    import logging

    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING)
    for _ in range(64):
        try:
            module = importlib.import_module("openhands_aci.editor.editor")
            return module.OHEditor  # type: ignore[no-any-return]
        except ModuleNotFoundError as exc:
            name = exc.name or ""
            if not name or name.split(".")[0] not in _STUB_ROOTS or name in sys.modules:
                raise
            _stub(name)
            for key in [k for k in sys.modules if k.startswith("openhands_aci")]:
                del sys.modules[key]  # re-import cleanly with the stub in place
    raise ImportError("too many missing modules while importing openhands_aci")


def all_peers() -> dict[str, Peer]:
    return {"codex": codex(), "openhands": openhands()}
