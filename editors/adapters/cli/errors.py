"""How the ``vfs`` command fails: each error carries its exit status and its rendering.

As click's exceptions do: a verb raises, and the entry point (:func:`editors.adapters.cli.main`)
shows the error and exits with its status. So every verb fails the same way:

- :class:`CliError`: ``vfs VERB: MESSAGE`` on stderr, exit 1 (a vfs error adds its ``(CODE)``);
- :class:`UsageError`: ``vfs VERB: MESSAGE (see 'vfs VERB --help')``, exit 2;
- :class:`Interrupted`: ``vfs: interrupted``, exit 130 (Ctrl-C);

and two verbs keep the contract of the program they stand in for:

- :class:`CodexError` (``vfs apply``, a drop-in for Codex's ``apply_patch``): Codex's text as is;
- :class:`ToolFailed` (``vfs tool``): what the model would read on stdout, ``code: CODE`` on stderr.

Imported by ``vfs apply``: only ``sys`` and ``typing`` at module level.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
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
    """A verb failed: ``PROG: MESSAGE`` on stderr, exit 1. ``prog`` (``vfs VERB``) is filled in by
    the entry point when the verb that raised did not say."""

    exit_code: ClassVar[int] = EXIT_FAILURE

    def __init__(self, message: str, *, prog: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.prog = prog

    @classmethod
    def of(cls, exc: vfs.VfsError, *, prog: str | None = None) -> CliError:
        """A vfs error, with its stable code: ``PROG: MESSAGE (CODE)``."""
        return cls(f"{exc.message} ({exc.code})", prog=prog)

    def format_message(self) -> str:
        return f"{self.prog or 'vfs'}: {self.message}"

    def show(self) -> None:
        try:
            write(sys.stderr, self.format_message() + "\n")
        except (OSError, ValueError):  # stderr closed or gone: the exit status still tells
            pass


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
    """``vfs apply``'s failures: the text Codex's ``apply_patch`` prints, as is, on stderr (exit 1)."""

    def format_message(self) -> str:
        return self.message


class CodexUsage(CodexError):
    """``vfs apply`` without a patch: Codex's usage text, exit 2."""

    exit_code = EXIT_USAGE


class ToolFailed(CliError):
    """``vfs tool``'s failed call: the model's text on stdout, ``code: CODE`` on stderr, exit 1."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.code = result.code

    def show(self) -> None:
        write(sys.stdout, self.message if self.message.endswith("\n") else self.message + "\n")
        write(sys.stderr, f"code: {self.code}\n")
