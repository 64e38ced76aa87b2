"""How the ``vfs`` command fails: each error carries its exit status and its rendering.

As click's exceptions do: a verb raises, and the entry point (:func:`editors.adapters.cli.main`)
shows the error and exits with its status. One format for people, on stderr, for every verb:

    vfs VERB: MESSAGE [CODE]

- :class:`CliError`: that line, exit 1 (``[CODE]``: the stable code of a vfs error, when there is one);
- :class:`UsageError`: ``vfs VERB: MESSAGE (see 'vfs VERB --help')``, exit 2;
- :class:`Interrupted`: ``vfs: interrupted``, exit 130 (Ctrl-C);

and two verbs keep the contract of the program they stand in for where a program reads them:

- :class:`CodexError` (``vfs apply``, a drop-in for Codex's ``apply_patch``): Codex's text as is
  when stderr is not a terminal (a harness reads it); on a terminal, the line above;
- :class:`ToolFailed` (``vfs tool``): what the model would read on stdout, the line above on stderr.

With ``--json`` (``json_output``, set by the entry point) a failure also prints ``{"code", "is_error", "text"}``
on stdout (the shape of a tool result), so the code is always there for a program.

Imported by ``vfs apply``: only ``sys`` and ``typing`` at module level.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import IO, ClassVar

    import vfs
    from editors.result import ToolResult

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def write(stream: IO[str], text: str) -> None:
    """UTF-8 whatever the locale says, then flush (a stream without a buffer: tests capturing output)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode("utf-8", "surrogateescape"))
        buffer.flush()
    else:
        stream.write(text)
        stream.flush()


class CliError(Exception):
    """A verb failed: ``PROG: MESSAGE [CODE]`` on stderr, exit 1. ``prog`` (``vfs VERB``) is filled
    in by the entry point when the verb that raised did not say."""

    exit_code: ClassVar[int] = EXIT_FAILURE

    def __init__(self, message: str, *, prog: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog
        self.code = code
        self.json_output = False  # set by the entry point for a verb run with --json

    @classmethod
    def of(cls, exc: vfs.VfsError, *, prog: str | None = None) -> CliError:
        """A vfs error, with its stable code: ``PROG: MESSAGE [CODE]``."""
        return cls(exc.message, prog=prog, code=exc.code)

    def format_message(self) -> str:
        """The one line (or lines: a patch's context) people read: ``PROG: MESSAGE [CODE]``."""
        tail = f" [{self.code}]" if self.code else ""
        return f"{self.prog or 'vfs'}: {self.message}{tail}"

    def show(self) -> None:
        try:
            if self.json_output:
                write(sys.stdout, json_error(self.message, self.code))
            write(sys.stderr, self.format_message() + "\n")
        except (OSError, ValueError):  # stderr closed or gone: the exit status still tells
            pass


def json_error(text: str, code: str | None) -> str:
    """A failure as ``--json`` prints it: the shape of a failed tool result."""
    from editors.result import dumps

    return dumps({"code": code or "FS_ERROR", "is_error": True, "text": text})


class UsageError(CliError):
    """The command line is wrong: one line pointing at ``--help``, exit 2."""

    exit_code = EXIT_USAGE

    def format_message(self) -> str:
        prog = self.prog or "vfs"
        return f"{prog}: {self.message} (see '{prog} --help')"


class Interrupted(CliError):
    """Ctrl-C: one line, no traceback, exit 130."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self) -> None:
        super().__init__("interrupted", prog="vfs")


class CodexError(CliError):
    """``vfs apply``'s failures (exit 1): the text Codex's ``apply_patch`` prints, as is, on stderr
    when a program reads it; on a terminal, the human line with its code."""

    def format_message(self) -> str:
        if is_terminal(sys.stderr):
            return super().format_message()
        return self.message


class CodexUsage(CodexError):
    """``vfs apply`` without a patch: Codex's usage text, exit 2."""

    exit_code = EXIT_USAGE

    def format_message(self) -> str:
        return self.message


class ToolFailed(CliError):
    """``vfs tool``'s failed call, exit 1: the model's text on stdout (as a success's would be),
    ``vfs tool: call failed [CODE]`` on stderr."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text, code=result.code)

    def format_message(self) -> str:
        return f"{self.prog or 'vfs tool'}: call failed [{self.code}]"

    def show(self) -> None:
        try:
            write(sys.stdout, self.message if self.message.endswith("\n") else self.message + "\n")
        except (OSError, ValueError):
            pass
        super().show()


def is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False
