"""The ``vfs`` console script.

Each verb lives in its own module with two functions, ``configure(parser)`` and ``run(args)``;
modules are imported only when their verb runs, so ``vfs apply`` stays fast to start. A verb's
module may also offer ``parse_quick(argv)``: its plain command lines parsed without argparse
(whose import and parser building cost ~10 ms of a ``vfs apply``), ``None`` for anything else
(help, abbreviations, usage errors), which argparse then parses as always.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from editors.adapters.cli.errors import EXIT_USAGE, CliError, Interrupted, UsageError

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn

# verb -> (module, one-line help). Sorted by how often people use them.
VERBS: dict[str, tuple[str, str]] = {
    "apply": ("editors.adapters.cli.apply_cmd", "apply a Codex-style patch atomically (drop-in for apply_patch)"),
    "tool": ("editors.adapters.cli.tool_cmd", "run one model tool call (str_replace_editor or apply_patch)"),
    "log": ("editors.adapters.cli.history_cmd", "list recent transactions and the files they changed"),
    "undo": ("editors.adapters.cli.history_cmd", "revert the most recent transaction (repeatable)"),
    "redo": ("editors.adapters.cli.history_cmd", "take back the most recent undo or rewind"),
    "checkpoint": ("editors.adapters.cli.history_cmd", "name the current point of history"),
    "rewind": ("editors.adapters.cli.history_cmd", "revert every transaction after a checkpoint or txid, atomically"),
    "recover": ("editors.adapters.cli.history_cmd", "finish or roll back a commit interrupted by a crash"),
    "prune": ("editors.adapters.cli.history_cmd", "show the history's size; forget its oldest records"),
    "serve": ("editors.adapters.cli.serve_cmd", "serve the tools over MCP (stdio or HTTP)"),
    "schema": ("editors.adapters.cli.schema_cmd", "print tool definitions for OpenAI, Anthropic or MCP"),
    "demo": ("editors.adapters.cli.demo_cmd", "apply an example patch to a fresh workspace and show the result"),
}

EPILOG = """examples:
  vfs demo                                   try it on an in-memory workspace
  vfs apply change.patch                     apply a patch file in the current directory (or: < change.patch)
  vfs apply --root s3://bucket/ws --storage-option endpoint_url=http://127.0.0.1:9000 change.patch
  vfs tool str_replace_editor '{"command": "view", "path": "/repo/README.md"}' --root /repo
  vfs log && vfs undo

Failures: 'vfs VERB: MESSAGE [CODE]' on stderr, exit 1 (usage errors: exit 2); with --json, also
{"code", "is_error", "text"} on stdout. vfs apply prints Codex's exact texts when stderr is not a
terminal (a drop-in for Codex's apply_patch).
"""


# Verbs whose module has parse_quick().
QUICK_VERBS = frozenset({"apply"})


def _available_verbs() -> dict[str, tuple[str, str]]:
    import importlib.util

    return {verb: spec for verb, spec in VERBS.items() if importlib.util.find_spec(spec[0]) is not None}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """Usage errors are :class:`UsageError` (one line, exit 2) like any other; ``--help`` shows the usage."""

        def error(self, message: str) -> NoReturn:
            raise UsageError(message, prog=self.prog)

    parser = _Parser(
        prog="vfs",
        description="A transactional filesystem for coding agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"vfs {version()}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for name, (module_name, help_text) in _available_verbs().items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == verb:  # only the verb that runs pays for importing its module
            module = importlib.import_module(module_name)
            module.configure(sp, name)
    return parser


def version() -> str:
    """The installed distribution's version ("unknown" when run from a checkout never installed)."""
    from importlib import metadata

    try:
        return metadata.version("vfs")
    except metadata.PackageNotFoundError:
        return "unknown"


def _parse_quick(args_list: list[str]) -> Any:
    """The namespace of a plain command line of a verb in :data:`QUICK_VERBS`, else ``None``."""
    if not args_list or args_list[0] not in QUICK_VERBS:
        return None
    module = importlib.import_module(VERBS[args_list[0]][0])
    return module.parse_quick(args_list[1:])


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``vfs`` command line; the exit status. Every failure is shown here, once."""
    try:
        return _main_gc(argv)
    except CliError as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        return interrupted()


def run() -> NoReturn:
    """The ``vfs`` program (the console script, ``python -m editors.cli``): :func:`main`, then
    the process ends with its status.

    Without the interpreter's teardown where nothing needs it (as mypy's ``hard_exit``): freeing
    every object and module one by one costs a `vfs apply` of a 5 MB file ~10 ms, a small one ~3
    ms (issue 20), and the kernel frees the memory at once. Nothing is skipped that has work to
    do: output is flushed here, and the process ends as usual when anything registered for exit
    (``atexit``: the S3 stack's clean-up, logging) or a thread besides this one is there."""
    code = main()
    if _nothing_left_for_exit():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # (a closed or broken stream: the interpreter's own exit reports it)
        else:
            os._exit(code)
    raise SystemExit(code)


def _nothing_left_for_exit() -> bool:
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    count = getattr(atexit, "_ncallbacks", None)  # (CPython's; elsewhere: the usual exit)
    return count is not None and count() == 0


def interrupted() -> int:
    """Ctrl-C, shown the same way for every verb; the exit status."""
    error = Interrupted()
    error.show()
    return error.exit_code


def _main_gc(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] != ["apply"] or not gc.isenabled():
        return _main(args_list)
    # A one-shot `vfs apply` makes almost no reference cycles: the cyclic collector (run every
    # 700 allocations, mostly while the modules are imported and the patch is parsed) would cost
    # ~5-10 % of the command and free nothing. Only for the command's duration, and not for
    # `vfs serve`, a long-running process.
    gc.disable()
    try:
        return _main(args_list)
    finally:
        gc.enable()


def _main(args_list: list[str]) -> int:
    args = _parse_quick(args_list)
    if args is None:
        verb = next((a for a in args_list if not a.startswith("-")), None)
        parser = build_parser(verb if verb in VERBS else None)
        args = parser.parse_args(args_list)
        if not args.verb:
            parser.print_help()
            return EXIT_USAGE
    module = importlib.import_module(VERBS[args.verb][0])
    import vfs  # every verb's module has imported it already

    try:
        code: int = module.run(args)
        sys.stdout.flush()
    except CliError as exc:
        exc.prog = exc.prog or f"vfs {args.verb}"
        exc.json_output = bool(getattr(args, "json", False))
        raise
    except vfs.VfsError as exc:  # what a verb did not handle itself: its message and code
        error = CliError.of(exc, prog=f"vfs {args.verb}")
        error.json_output = bool(getattr(args, "json", False))
        raise error from None
    except BrokenPipeError:
        # The reader went away (`vfs log | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
