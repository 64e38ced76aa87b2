"""The ``apply_patch`` tool on a vfs workspace: one patch, one transaction, all or nothing.

Also the tool definitions (OpenAI freeform custom tool with a Lark grammar, JSON function, MCP)
and the adapter that turns a raw tool call into the text a model gets back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache

import vfs
from backends.values import field, value
from editors.apply_patch.applier import FileChange, PatchPlan, Step, plan_patch
from editors.apply_patch.errors import PatchInvalidInput, PatchWriteFailed
from editors.apply_patch.parser import parse_patch

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any

    from editors.diffcard import FileEdit
    from editors.result import ToolResult

# editors.diffcard and editors.result are imported where a card or a tool result is made: `vfs
# apply` without --diff makes neither (~2.5 M instructions of its start-up, issue 20).

TOOL_NAME = "apply_patch"
TRANSACTION_LABEL = "apply_patch"
INPUT_DESCRIPTION = "The entire contents of the apply_patch command"


@value(frozen=True)
class ApplyResult:
    """What a successful patch did.

    ``summary`` is Codex's stdout (``Success. Updated the following files: ...``); ``changes`` the
    net effect per file; ``diff`` a unified diff of it when asked for; ``commit`` the committed
    transaction's :class:`vfs.CommitResult` (its ``txid`` and the versions written; ``None`` on a
    dry run), so a caller keeping a session can record what the patch wrote; :attr:`edits` what
    each file card shows (:mod:`editors.diffcard`), from ``plan``, made when first asked for (a
    large file's new bytes are then joined, never just to commit them).
    """

    summary: str
    changes: tuple[FileChange, ...]
    diff: str | None = None
    commit: vfs.CommitResult | None = None
    environment_id: str | None = None
    plan: PatchPlan | None = field(default=None, repr=False)
    notes: tuple[str, ...] = ()

    @property
    def edits(self) -> tuple[FileEdit, ...]:
        return file_edits(self.plan) if self.plan is not None else ()

    @property
    def txid(self) -> str | None:
        """The committed transaction (``None`` on a dry run)."""
        return self.commit.txid if self.commit is not None else None

    def data(self) -> dict[str, Any]:
        """The structured result: the transaction, a card per file, the lines touched (bounded)."""
        from editors.diffcard import call_data

        versions = dict(self.commit.versions) if self.commit is not None else {}
        return call_data(TOOL_NAME, TOOL_NAME, self.edits, versions=versions, txid=self.txid)

    def tool_result(self) -> ToolResult:
        """The model's text (Codex's summary), and :meth:`data` beside it."""
        from editors.result import ToolResult

        # **Ours**: what a recovery did follows Codex's summary (never in place of it).
        text = self.summary + "".join(f"Note: {note}\n" for note in self.notes)
        return ToolResult(text, data=self.data())


def _reader(tx: vfs.Transaction) -> Any:
    def read(path: str) -> bytes | None:
        try:
            return tx.read(path).data
        except vfs.NotFound:
            return None

    return read


def _stage(tx: vfs.Transaction, step: Step) -> None:
    """Stage one step; the transaction folds successive steps on one path."""
    target = step.dest if step.kind == "move" else step.path
    try:
        if step.kind == "delete":
            tx.delete(step.path)
            return
        assert step.data is not None
        if step.kind == "move":
            assert step.dest is not None
            tx.move(step.path, step.dest)  # keeps the file's mode
            tx.write(step.dest, step.data)
        else:
            tx.write(step.path, step.data)
    except (vfs.IsADirectory, vfs.NotRegularFile, vfs.NotADirectory):
        raise PatchWriteFailed(f"Failed to write file {target}", path=target) from None


def apply_patch(
    workspace: vfs.Workspace,
    patch_text: str,
    *,
    diff: bool = False,
    dry_run: bool = False,
    label: str = TRANSACTION_LABEL,
    session: str | None = None,
) -> ApplyResult:
    """Apply a Codex-format patch to ``workspace`` as one transaction.

    Relative paths resolve against the workspace mount. Every hunk is matched in memory first;
    any failure (parsing, matching, policy, I/O, a concurrent change) raises and leaves every
    file and directory exactly as before. Errors are :class:`editors.apply_patch.errors.ApplyPatchError`
    (Codex's texts) or the vfs error that stopped the commit. ``session``: the conversation's id,
    recorded on the commit (see :meth:`vfs.Workspace.undo`).
    """
    patch = parse_patch(patch_text, context_without_space=True)
    tx = workspace.transaction(label=label, session=session)
    with tx:
        # One concurrent round of reads on a batching backend (S3) instead of one per file.
        tx.prefetch(p for h in patch.hunks for p in (h.path, getattr(h, "move_path", None)) if p)
        plan = plan_patch(patch, _reader(tx), resolve=workspace.to_path)
        for step in plan.steps:
            _stage(tx, step)
        if dry_run:
            tx.abort()
    committed = tx.result if tx.result is not None and tx.result.txid is not None else None
    return ApplyResult(
        summary=plan.summary,
        changes=plan.changes,
        diff="".join(edit.diff() for edit in file_edits(plan)) if diff else None,
        commit=committed,
        environment_id=patch.environment_id,
        plan=plan,
        notes=(*patch.notes, *plan.notes),
    )


# -- diff ---------------------------------------------------------------------------------------


def file_edits(plan: PatchPlan) -> tuple[FileEdit, ...]:
    """The plan's net changes as diff-card edits, from the matcher's hunks (no diff of whole files).

    A file moved by one step is one ``move`` edit (its source's deletion folded in); a file that
    several steps touched, an add and a delete are shown whole.
    """
    from editors.diffcard import FileEdit, whole_file

    steps: dict[str, list[Step]] = {}
    for step in plan.steps:
        steps.setdefault(step.path, []).append(step)
        if step.dest is not None and step.dest != step.path:
            steps.setdefault(step.dest, []).append(step)
    moved = {
        step.dest: step
        for step in plan.steps
        if step.kind == "move" and len(steps[step.path]) == 1 and len(steps.get(step.dest or "", ())) == 1
    }
    sources = {step.path for step in moved.values()}
    by_key = {change.path: change for change in plan.changes}
    out: list[FileEdit] = []
    for change in plan.changes:
        if change.path in sources:
            continue
        move = moved.get(change.path)
        if move is not None:
            source = by_key[move.path]
            out.append(
                FileEdit(
                    change.path,
                    change.display,
                    source.before,
                    change.after,
                    move.hunks,
                    move.path,
                    move.display,
                    True,
                    marks=move.where.marks(),
                )
            )
            continue
        only = steps.get(change.path, [])
        if len(only) == 1 and only[0].kind == "update":
            out.append(
                FileEdit(
                    change.path,
                    change.display,
                    change.before,
                    change.after,
                    only[0].hunks,
                    cr_breaks=True,
                    marks=only[0].where.marks(),
                )
            )
        else:
            out.append(whole_file(change.path, change.display, change.before, change.after))
    return tuple(out)


# -- tool definitions -----------------------------------------------------------------------------


def _read_beside(name: str) -> str:
    """A file shipped beside this module (``grammar.lark``, ``description.md``)."""
    with open(os.path.join(os.path.dirname(os.path.realpath(__file__)), name), encoding="utf-8") as handle:
        return handle.read()


@cache
def grammar() -> str:
    """The Lark grammar sent with the freeform tool (``grammar.lark``, sent verbatim).

    It has the spec's productions, written so that both OpenAI's grammar engine and the Python
    ``lark`` package accept it: Python lark refuses terminals that can match the empty string
    (``/(.*)/``), so each line's prefix and its text form one terminal (``ADD_LINE: /\\+.*/``).
    """
    return _read_beside("grammar.lark")


@cache
def description() -> str:
    """The model-facing description of the tool."""
    return _read_beside("description.md").strip()


def _input_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"input": {"type": "string", "description": INPUT_DESCRIPTION}},
        "required": ["input"],
        "additionalProperties": False,
    }


def openai_custom_tool() -> dict[str, Any]:
    """OpenAI Responses API freeform tool, constrained by the Lark grammar."""
    return {
        "type": "custom",
        "name": TOOL_NAME,
        "description": description(),
        "format": {"type": "grammar", "syntax": "lark", "definition": grammar()},
    }


def openai_function_tool() -> dict[str, Any]:
    """OpenAI JSON function variant: one string parameter ``input``."""
    return {
        "type": "function",
        "name": TOOL_NAME,
        "description": description(),
        "strict": False,
        "parameters": _input_schema(),
    }


def mcp_tool() -> dict[str, Any]:
    """MCP tool definition (the JSON function's schema)."""
    return {"name": TOOL_NAME, "description": description(), "inputSchema": _input_schema()}


def tool_definitions() -> dict[str, dict[str, Any]]:
    return {"custom": openai_custom_tool(), "function": openai_function_tool(), "mcp": mcp_tool()}


# -- tool calls -----------------------------------------------------------------------------------

_ENVELOPE_KEYS = ("input", "patch")


def patch_from_arguments(arguments: Any) -> str:
    """The patch text of a tool call.

    Accepts the freeform text itself, or the JSON function's arguments (a dict or a JSON string)
    ``{"input": "..."}``, and the envelope models send by mistake, ``{"patch": "..."}``.
    """
    if isinstance(arguments, (bytes, bytearray)):
        try:
            arguments = bytes(arguments).decode("utf-8")
        except UnicodeDecodeError:
            raise PatchInvalidInput("apply_patch input must be UTF-8 text.") from None
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if stripped.startswith("{"):
            import json

            try:
                decoded = json.loads(stripped)
            except json.JSONDecodeError:
                return arguments  # not JSON after all: let the patch parser report what is wrong
            if isinstance(decoded, dict):
                return patch_from_arguments(decoded)
        return arguments
    if isinstance(arguments, dict):
        found = [key for key in _ENVELOPE_KEYS if key in arguments]
        if len(found) == 1 and len(arguments) == 1:
            value = arguments[found[0]]
            if isinstance(value, str):
                return value
            raise PatchInvalidInput(
                f'apply_patch expects "{found[0]}" to be a string holding the whole patch, got {type(value).__name__}.'
            )
        keys = ", ".join(sorted(map(str, arguments))) or "no keys"
        raise PatchInvalidInput(
            'apply_patch expects exactly one argument, "input": a string holding the whole patch '
            f"(*** Begin Patch ... *** End Patch); got {keys}."
        )
    raise PatchInvalidInput(
        'apply_patch expects a string holding the whole patch, or {"input": "<patch>"}; '
        f"got {type(arguments).__name__}."
    )


def call_tool(
    workspace: vfs.Workspace,
    arguments: Any,
    *,
    on_commit: Callable[[vfs.CommitResult], None] | None = None,
    session: str | None = None,
) -> ToolResult:
    """Run one ``apply_patch`` tool call; errors become model-facing text (never a traceback).

    Failures read as Codex's tool reports them (no ``Error:`` prefix: models know those texts).
    ``on_commit`` gets the committed transaction's result (a session records what was written).
    """
    try:
        result = apply_patch(workspace, patch_from_arguments(arguments), session=session)
    except vfs.VfsError as exc:  # ApplyPatchError included
        from editors.result import error_result

        return error_result(exc, prefix="")
    if on_commit is not None and result.commit is not None:
        on_commit(result.commit)
    return result.tool_result()
