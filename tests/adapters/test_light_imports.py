"""``vfs apply`` imports only what it needs (in the style of click's ``test_light_imports``).

A subprocess runs the ``vfs apply`` command (``editors.adapters.cli.main``) on a small patch and reports
every module that got imported, and every import statement an ``editors`` module executed on the
way (whether or not the module was loaded already: ``vfs`` may import ``json`` itself, the apply
path must not). Plus: the command lines that ``vfs apply`` parses without argparse come out
exactly as argparse would parse them.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest

from editors.adapters.cli import build_parser
from editors.adapters.cli.apply_cmd import parse_quick
from tests.adapters.support import REPO, cli_env

# Imported by nothing on the apply path (nor by `import vfs`): other verbs, the other tool, MCP...
NEVER = (
    "argparse",
    "gettext",
    "pydantic",
    "mcp",
    "lark",
    "anyio",
    "editors.str_replace_editor",
    "editors.integration",
    "editors.adapters.integration",
    "editors.adapters.mcp",
    "editors.tools",
    "editors.adapters.cli.tool_cmd",
    "editors.adapters.cli.serve_cmd",
    "editors.adapters.cli.schema_cmd",
    "editors.adapters.cli.history_cmd",
    "editors.adapters.cli.demo_cmd",
    # Heavy and not needed to apply a patch on local disk or in memory: OpenSSL (hashlib; the
    # content hash is the blake3 package's), the fsspec stack (only other URLs), threads' event loops, logging.
    "hashlib",
    "_hashlib",
    "fsspec",
    "filelock",
    "asyncio",
    "logging",
    "jsonschema",
    # The value classes are backends.values': dataclasses (and with it inspect, ast, dis, tokenize)
    # cost ~4.5 M instructions per class at import, most of what vfs apply spent over the interpreter.
    "dataclasses",
    "inspect",
    # Annotations only (issue 20: ~11 M instructions of start-up): every module imports its typing
    # names under `if TYPE_CHECKING:` (see backends/values.py).
    "typing",
)
# On local disk, also none of these (issue 20: start-up for one name each): threading for its Lock
# (_thread's; ~4 M instructions), signal for SIGURG (_signal's; ~3 M). The memory backend still
# imports threading. Nor ctypes' Python half (~8 M: renameat2 and syncfs are called through
# _ctypes, backends/local/libc.py). Nor json (~7 M: its modules compile regular expressions; a
# commit writes its records with json's C encoder, vfs/recordjson.py).
NEVER_LOCAL = ("threading", "signal", "ctypes", "json")
# What the apply path's own modules may import, besides editors.* and vfs.*.
ALLOWED_STDLIB = {
    "__future__",
    "atexit",  # (built in: whether anything is registered for exit, editors.adapters.cli.run)
    "collections.abc",
    "backends.values",  # the one system of value classes (the bottom layer's; no stdlib import)
    "functools",
    "gc",
    "importlib",
    "os",
    "posixpath",
    "sys",
    "types",
}

SCRIPT = r"""
import builtins, sys
real_import = builtins.__import__
statements = set()

def tracing_import(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__") or ""
    if importer.split(".")[0] == "editors":
        statements.add((importer, name if not level else "." * level + name))
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = tracing_import
from editors.adapters.cli import main
code = main(sys.argv[2:])
builtins.__import__ = real_import
with open(sys.argv[1], "w", encoding="utf-8") as out:
    out.write(repr({"code": code, "modules": sorted(sys.modules), "statements": sorted(statements)}))
"""

PATCH = """*** Begin Patch
*** Update File: a.txt
@@
-one
+ONE
*** Add File: b.txt
+new
*** End Patch
"""


def _run_apply(tmp_path: Path, *options: str) -> dict[str, object]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    result = _report(tmp_path, "--root", str(root), *options, PATCH)
    if "--dry-run" not in options:
        assert (root / "a.txt").read_text() == "ONE\ntwo\n"
    return result


def _report(tmp_path: Path, *apply_args: str) -> dict[str, object]:
    """``vfs apply APPLY_ARGS`` in a fresh interpreter: its status, the modules loaded, the imports run."""
    report = tmp_path / "report.txt"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(report), "apply", *apply_args],
        capture_output=True,
        env=cli_env(),
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, object] = ast.literal_eval(report.read_text(encoding="utf-8"))
    assert result["code"] == 0
    return result


def _loaded(modules: object, names: tuple[str, ...]) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


@pytest.mark.parametrize("options", [(), ("--dry-run",), ("--diff", "--color", "always")])
def test_vfs_apply_imports_only_what_it_needs(tmp_path: Path, options: tuple[str, ...]) -> None:
    result = _run_apply(tmp_path, *options)
    _check_imports(result, options)
    assert _loaded(result["modules"], NEVER_LOCAL) == []
    if not options:  # no card to show: the card and tool-result modules stay unloaded (~2.5 M)
        assert _loaded(result["modules"], ("editors.diffcard", "editors.result")) == []


@pytest.mark.parametrize("options", [(), ("--dry-run",), ("--diff", "--color", "always")])
def test_vfs_apply_on_memory_imports_only_what_it_needs(tmp_path: Path, options: tuple[str, ...]) -> None:
    """The same on a memory root (nothing to update there: the patch adds a file)."""
    patch = "*** Begin Patch\n*** Add File: b.txt\n+new\n*** End Patch\n"
    _check_imports(_report(tmp_path, "--root", "memory://light", *options, patch), options)


def _check_imports(result: dict[str, object], options: tuple[str, ...]) -> None:
    assert _loaded(result["modules"], NEVER) == []
    assert _loaded(result["modules"], ("difflib",)) == []  # --diff / --dry-run: from the matcher's hunks
    statements = result["statements"]
    assert isinstance(statements, list) and statements
    outside = sorted(
        (importer, name)
        for importer, name in statements
        if name.split(".")[0] not in ("editors", "vfs") and name not in ALLOWED_STDLIB
    )
    assert outside == [], "the apply path imports these itself: import them where they are used"


# -- parse_quick == argparse ------------------------------------------------------------------------

TOKENS = [
    "--diff",
    "--dry-run",
    "--root",
    "/r",
    "--root=/r2",
    "--root=",
    "-o",
    "k=v",
    "--storage-option",
    "--storage-option=b=2",
    "-o=x=y",
    "-ox=y",
    "--mount",
    "--mount=/m",
    "--mode",
    "read-only",
    "--mode=danger-full-access",
    "yolo",
    "--color",
    "never",
    "--color=always",
    "--color=bad",
    "*** Begin Patch\n*** End Patch",
    "",
    "-",
    "--",
    "-h",
    "--dry",
    "--mo",
    "--diff=1",
    "apply",
    "-x y",
]


def _argparse(parser: object, argv: list[str]) -> dict[str, object] | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(parser.parse_args(["apply", *argv]))  # type: ignore[attr-defined]
        except SystemExit:
            return None


def test_parse_quick_agrees_with_argparse() -> None:
    parser = build_parser("apply")
    rng = random.Random(7)
    argvs = [list(c) for n in range(3) for c in itertools.product(TOKENS, repeat=n)]
    argvs += [[rng.choice(TOKENS) for _ in range(rng.randint(3, 7))] for _ in range(3000)]
    quick_ones = 0
    for argv in argvs:
        quick = parse_quick(argv)
        if quick is None:
            continue
        quick_ones += 1
        assert vars(quick) == _argparse(parser, argv), argv
    assert quick_ones > 200


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["PATCH"],
        ["--dry-run", "PATCH"],
        ["--diff", "--color", "never"],
        ["--root", "/repo", "-o", "endpoint_url=http://127.0.0.1:9000", "--storage-option", "anon=true", "PATCH"],
        ["--root=s3://bucket/ws", "--mount", "/workspace", "--mode", "read-only"],
    ],
)
def test_common_apply_command_lines_skip_argparse(argv: list[str]) -> None:
    quick = parse_quick(argv)
    assert quick is not None
    assert vars(quick) == _argparse(build_parser("apply"), argv)


@pytest.mark.parametrize(
    "argv", [["-h"], ["--help"], ["--dry", "P"], ["--mode", "yolo"], ["P", "Q"], ["--root"], ["--"]]
)
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert parse_quick(argv) is None


def test_vfs_apply_pauses_the_cyclic_gc_only_while_it_runs(tmp_path: Path) -> None:
    from editors.adapters.cli import main

    (tmp_path / "a.txt").write_text("one\n")
    assert gc.isenabled()
    assert main(["apply", "--root", str(tmp_path), PATCH]) == 0
    assert gc.isenabled()
    assert main(["apply", "--root", str(tmp_path), "not a patch"]) == 1
    assert gc.isenabled()
    assert (tmp_path / "b.txt").read_text() == "new\n"
    gc.disable()  # a host that turned it off keeps it off
    try:
        assert main(["apply", "--root", str(tmp_path), "not a patch"]) == 1
        assert not gc.isenabled()
    finally:
        gc.enable()
