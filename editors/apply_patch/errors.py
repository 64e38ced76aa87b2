"""The apply_patch error codes (all subclasses of :class:`vfs.errors.PatchError`).

Every error carries two texts:

* ``cli_message``: what Codex's ``apply_patch`` binary prints on stderr (byte for byte);
* ``message``: what Codex's tool reports to the model (``apply_patch verification failed: ...``).
"""

from __future__ import annotations

from vfs.errors import AlreadyApplied, PatchError

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import ClassVar

# (display path, line ranges 1-based inclusive, whether the part is present)
AlreadyPart = tuple[str, list[tuple[int, int]], bool]

AGENT_PREFIX = "apply_patch verification failed: "


class ApplyPatchError(PatchError):
    """Base of the concrete apply_patch errors: ``message`` for a model, ``cli_message`` for the CLI."""

    code: ClassVar[str] = "PATCH_ERROR"

    def __init__(self, cli_message: str, *, path: str | None = None, agent_message: str | None = None) -> None:
        super().__init__(agent_message if agent_message is not None else AGENT_PREFIX + cli_message, path=path)
        self.cli_message = cli_message


class PatchParseError(ApplyPatchError):
    """The patch text is malformed. ``line_number`` is None for whole-patch errors."""

    code = "PATCH_PARSE_ERROR"

    def __init__(self, reason: str, line_number: int | None = None, cause: str = "") -> None:
        if line_number is None:
            cli = f"Invalid patch: {reason}"
            agent = f"{AGENT_PREFIX}invalid patch: {reason}"
        else:
            cli = f"Invalid patch hunk on line {line_number}: {reason}"
            agent = f"{AGENT_PREFIX}invalid hunk at line {line_number}, {reason}"
        # **Ours**: the cause, named after Codex's text (the model's view; the CLI prints Codex's).
        super().__init__(cli, agent_message=agent + (f"\n{cause}" if cause else ""))
        self.reason = reason
        self.line_number = line_number


class PatchEmpty(ApplyPatchError):
    """A well-formed patch with no file operation (``No files were modified.``)."""

    code = "PATCH_EMPTY"


class PatchContextNotFound(ApplyPatchError):
    """An ``@@ context`` anchor line is not in the file."""

    code = "PATCH_CONTEXT_NOT_FOUND"


class PatchLinesNotFound(ApplyPatchError):
    """The lines a chunk removes or keeps are not in the file."""

    code = "PATCH_LINES_NOT_FOUND"


class PatchFileNotFound(ApplyPatchError, FileNotFoundError):
    """``*** Update File`` of a file that does not exist."""

    code = "PATCH_FILE_NOT_FOUND"


class PatchReadFailed(ApplyPatchError, OSError):
    """The file to update could not be read as text (a directory, invalid UTF-8, ...)."""

    code = "PATCH_READ_FAILED"


class PatchDeleteFailed(ApplyPatchError, OSError):
    """``*** Delete File`` of a missing file or of a directory."""

    code = "PATCH_DELETE_FAILED"


class PatchWriteFailed(ApplyPatchError, OSError):
    """A file could not be written (its path is a directory, or a parent is a file)."""

    code = "PATCH_WRITE_FAILED"


class PatchInvalidInput(ApplyPatchError, ValueError):
    """The tool call's arguments are not a patch (wrong JSON envelope, wrong type)."""

    code = "PATCH_INVALID_INPUT"

    def __init__(self, message: str) -> None:
        super().__init__(message, agent_message=message)


class PatchIndentationMismatch(ApplyPatchError):
    """**Ours**: a chunk matched only with other indentation, and no single re-indentation explains it."""

    code = "PATCH_INDENTATION_MISMATCH"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message, path=path, agent_message=AGENT_PREFIX + message)


class PatchAlreadyApplied(ApplyPatchError, AlreadyApplied):
    """**Ours**: the change (or part of it) is already in the file: a repeat or a retry. Nothing changed.

    ``parts`` lists, per file of the patch, ``(display path, [(first line, last line)], present)``.
    """

    code = "FS_ALREADY_APPLIED"

    def __init__(self, message: str, *, path: str | None = None, parts: list[AlreadyPart] | None = None) -> None:
        super().__init__(message, path=path, agent_message=message)
        self.parts: list[AlreadyPart] = parts or []


ALL_PATCH_ERRORS: tuple[type[ApplyPatchError], ...] = (
    PatchParseError,
    PatchEmpty,
    PatchContextNotFound,
    PatchLinesNotFound,
    PatchFileNotFound,
    PatchReadFailed,
    PatchDeleteFailed,
    PatchWriteFailed,
    PatchInvalidInput,
    PatchIndentationMismatch,
    PatchAlreadyApplied,
)
