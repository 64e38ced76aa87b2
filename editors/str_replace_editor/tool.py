"""``StrReplaceEditor``: one ``str_replace_editor`` tool call against a ``vfs`` workspace.

Every mutation is one vfs transaction. An edit (``str_replace`` / ``insert``) writes with
``replace_if_version`` against the version it read, and, with a session whose observation policy
is on, against the version the session last saw (a ``view``, or its own previous edit): a file
changed by someone else since is never overwritten (``FS_STALE_VERSION``). ``create`` is a guarded
create-if-absent, so a file created meanwhile by someone else is never clobbered.

With a session (**Ours**): the same ``str_replace`` or ``insert`` sent again while the file is
still at the version it wrote is ``FS_ALREADY_APPLIED``; an edit refused because the file changed
since the view shows the diff since that view (from the bytes the session kept), and with
``ObservationPolicy(rebase=True)`` a ``str_replace`` whose lines did not change is rebased.

With ``session=False`` (one-shot mode, e.g. the CLI) nothing is remembered between calls: each
edit reads and writes in one transaction.

Every failure comes back as a :class:`ToolResult` with ``is_error`` set, text ``Error: <message>``
and a stable code; the file is left untouched.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Callable, Mapping
from typing import Any

import vfs
from backends.values import replace
from editors.diffcard import FileEdit, call_data, location, region_edit, whole_file
from editors.result import ToolResult, error_result, unexpected_result
from editors.str_replace_editor import edits, listing, render, stale
from editors.str_replace_editor.args import (
    ArgumentError,
    EditorArgs,
    check_command_args,
    check_path,
    parse_args,
)
from editors.str_replace_editor.config import EditorConfig, make_config
from editors.str_replace_editor.source import Source, source_of

TOOL_NAME = "str_replace_editor"
PATH_FIRST = frozenset({"view", "str_replace", "undo_edit"})

#: An edit: the file's text in, the edited text (and where the edit landed) out.
Change = Callable[[Source], edits.Replaced]


class StrReplaceEditor:
    """The ``str_replace_editor`` tool over one workspace.

    ``session``: ``True`` (default) keeps a vfs session with the stock observation policy (edits
    need a prior ``view``; absence never authorizes an edit); ``False`` is one-shot mode; or pass
    a :class:`vfs.Session` to share observations with other tools of the same conversation.
    """

    name = TOOL_NAME

    def __init__(
        self,
        workspace: vfs.Workspace,
        *,
        config: EditorConfig | Mapping[str, Any] | None = None,
        session: bool | vfs.Session = True,
    ) -> None:
        self.workspace = workspace
        self.config = make_config(dict(config) if isinstance(config, Mapping) else config)
        if isinstance(session, vfs.Session):
            self.session: vfs.Session | None = session
        else:
            self.session = workspace.session() if session else None

    # -- definitions --------------------------------------------------------------------------

    @property
    def description(self) -> str:
        return self.config.tool_description

    def definitions(self) -> dict[str, dict[str, Any]]:
        from editors.str_replace_editor.definitions import tool_definitions

        return tool_definitions(self.config)

    # -- entry point --------------------------------------------------------------------------

    def run(self, args: Any) -> ToolResult:
        """Run one call; never raises for anything the model or the filesystem did."""
        try:
            return self._dispatch(args)
        except vfs.VfsError as exc:
            return error_result(exc)
        except Exception as exc:  # noqa: BLE001 - a tool call must never surface a traceback
            return unexpected_result(exc)

    __call__ = run

    def _dispatch(self, raw: Any) -> ToolResult:
        args = parse_args(raw, enable_undo=self.config.enable_undo)
        # The DSH editor's order: str_replace (and view) check the path before their parameters;
        # create and insert check their own required parameters first.
        if args.command in PATH_FIRST:
            path = self._path(args.path)
            args = check_command_args(args)
        else:
            args = check_command_args(args)
            path = self._path(args.path)
        if args.command == "view":
            return self._view(path, args.view_range)
        if args.command == "create":
            assert args.file_text is not None
            return self._create(path, args.file_text)
        if args.command == "str_replace":
            assert args.old_str is not None
            return self._str_replace(path, args)
        if args.command == "insert":
            return self._insert(path, args)
        return self._undo(path)

    # -- paths --------------------------------------------------------------------------------

    def _path(self, path: str) -> str:
        """The canonical model-facing path; blank and relative paths are refused (with a suggestion)."""
        if not check_path(path).startswith("/"):
            suggestion = posixpath.normpath(posixpath.join(self.workspace.mount, path))
            raise vfs.InvalidArgument(
                f"The path {path} is not an absolute path, it should start with `/`. Maybe you meant {suggestion}?",
                path=path,
            )
        return self.workspace.to_path(path)

    def _stat(self, path: str, *, record: bool) -> vfs.Stat | None:
        """What is at ``path``, or ``None``; a session records a confirmed absence when ``record``."""
        try:
            if record and self.session is not None:
                return self.session.stat(path)
            return self.workspace.stat(path)
        except vfs.NotFound:
            return None

    def _link_kind(self, path: str) -> str:
        """What a symlink inside the workspace leads to ("other": dangling, or leaving the workspace)."""
        try:
            return self.workspace.stat(path).kind
        except vfs.VfsError:
            return "other"

    @staticmethod
    def _missing(path: str) -> vfs.NotFound:
        return vfs.NotFound(f"The path {path} does not exist. Please provide a valid path.", path=path)

    @staticmethod
    def _directory(path: str) -> vfs.NotRegularFile:
        return vfs.NotRegularFile(
            f"The path {path} is a directory and only the `view` command can be used on directories", path=path
        )

    # -- view ---------------------------------------------------------------------------------

    def _view(self, path: str, view_range: list[int] | None) -> ToolResult:
        stat = self._stat(path, record=True)
        if stat is None:
            raise self._missing(path)
        if stat.kind == "directory":
            if view_range is not None:
                raise vfs.InvalidArgument(
                    "The `view_range` parameter is not allowed when `path` points to a directory.", path=path
                )
            rows = listing.collect(path, self.workspace.list, self._link_kind)
            text = listing.render_listing(path, rows, max_output_chars=self.config.max_output_chars)
            return ToolResult(text, data=call_data(TOOL_NAME, "view", locations=[location(path, None, None)]))
        if stat.kind != "file":
            raise vfs.NotRegularFile(f'cannot view "{path}": not a regular file or directory', path=path)
        try:
            read = self.session.read(path) if self.session is not None else self.workspace.read(path)
        except vfs.NotFound:
            raise self._missing(path) from None
        text = vfs.decode_text(read.data, path)
        shown = render.render_file_view(path, text, view_range, max_output_chars=self.config.max_output_chars)
        n_lines = text.count("\n") + 1
        first, last = (1, n_lines) if view_range is None else render.check_view_range(view_range, n_lines)
        data = call_data(TOOL_NAME, "view", locations=[location(path, first, last)])
        return ToolResult(shown, data=data)

    # -- create -------------------------------------------------------------------------------

    def _create(self, path: str, file_text: str) -> ToolResult:
        exists = vfs.Exists(
            f"File already exists at: {path}. Cannot overwrite files using command `create`.", path=path
        )
        if self._stat(path, record=False) is not None:
            raise exists
        data = _encode(file_text, "file_text")
        if self.session is not None:
            self.session.intent_for(path, "create")  # a custom policy may refuse; the write stays guarded
        try:
            with self.workspace.transaction(label=f"{TOOL_NAME} create {path}", session=self._session_id) as tx:
                tx.write(path, data, intent=vfs.CREATE_IF_ABSENT)
        except (vfs.Exists, vfs.StaleVersion):
            raise exists from None
        self._record(path, tx.result, data)
        text = f"New file created successfully at: {path}"
        return self._result(text, "create", tx.result, whole_file(path, self._display(path), None, data))

    # -- edits --------------------------------------------------------------------------------

    def _edit_target(self, path: str, verb: str) -> vfs.Intent:
        """Checks shared by str_replace and insert; the intent the write must carry."""
        stat = self._stat(path, record=False)
        if stat is not None and stat.kind == "directory":
            raise self._directory(path)
        if stat is not None and stat.kind != "file":
            raise vfs.NotRegularFile(f'cannot {verb} "{path}": not a regular file', path=path)
        intent = self.session.intent_for(path, "edit") if self.session is not None else vfs.UNCONDITIONAL
        if stat is None:
            if self.session is not None:
                self.session.observe(path, None)
            raise self._missing(path)
        return intent

    def _edit(self, path: str, command: str, verb: str, change: Change, signature: str) -> ToolResult:
        """Read, change, write: one transaction, guarded by version (see :meth:`_checked_change`)."""
        intent = self._edit_target(path, verb)
        try:
            with self.workspace.transaction(label=f"{TOOL_NAME} {command} {path}", session=self._session_id) as tx:
                try:
                    read = tx.read(path)
                except vfs.NotFound:
                    if self.session is not None:
                        self.session.observe(path, None)
                    raise self._missing(path) from None
                expected, edited = self._checked_change(path, command, intent, read, change, signature)
                data = edited.encoded(read.data)
                tx.write(path, data, intent=vfs.replace_if_version(expected))
        except _StaleView as stale_view:
            raise self._stale_help(path, intent.version, stale_view.read, change) from None
        except vfs.StaleVersion:
            gone = not self.workspace.exists(path)
            reason = "file no longer exists" if gone else "file changed since it was read"
            raise vfs.StaleVersion(f'cannot write "{path}": {reason}', path=path) from None
        version = self._record(path, tx.result, data)
        if self.session is not None and version is not None:
            self.session.remember_edit(path, vfs.EditMemo(signature, version, edited.line, edited.new_last_line))
        note = f" {edited.note}" if edited.note else ""
        edit = region_edit(
            path, self._display(path), read.data, data, edited.unchanged(read.data), edited.mark(read.data)
        )
        return self._result(f"The file {path} has been edited successfully.{note}", command, tx.result, edit)

    def _checked_change(
        self, path: str, command: str, intent: vfs.Intent, read: vfs.Read, change: Change, signature: str
    ) -> tuple[str, edits.Replaced]:
        """The version to write against and the edit, after the checks that refuse it.

        A file changed since the session's view is refused with what changed (``_StaleView``), or
        rebased when the policy allows it and the edit's lines are untouched. The session's last
        edit of the path sent again, the file unchanged since, is ``AlreadyApplied``.
        """
        assert read.version is not None
        text = source_of(read.data, path)
        if intent.kind == "replace_if_version" and intent.version is not None:
            if read.version != intent.version and not self.workspace.is_current(path, intent.version):
                return read.version, self._rebase(path, command, intent.version, read, text, change)
            expected = intent.version
        else:
            expected = read.version
        memo = self.session.last_edit(path) if self.session is not None else None
        if memo is not None and memo.signature == signature and memo.version in (read.version, expected):
            raise vfs.AlreadyApplied(edits.already_applied_message(memo.first_line, memo.last_line), path=path)
        return expected, change(text)

    def _rebase(
        self, path: str, command: str, seen: str, read: vfs.Read, source: Source, change: Change
    ) -> edits.Replaced:
        """The edit applied to the current text when its lines did not change since the view."""
        viewed = self.session.viewed(path, seen) if self.session is not None and self.session.rebase else None
        if viewed is None or command != "str_replace":
            raise _StaleView(read)
        try:
            viewed_text = vfs.decode_text(viewed, path)
            before, after = change(viewed_text), change(source)
        except vfs.VfsError:
            raise _StaleView(read) from None
        text = str(source)
        if not stale.same_place(viewed_text, text, before, after):
            raise _StaleView(read)
        note = (
            f"The file had changed since your view (now {stale.changed_lines(viewed_text, text)}); your edit's "
            "lines had not, so it was applied to the current version (rebased)."
        )
        return replace(after, note=" ".join(filter(None, [after.note, note])))

    def _stale_help(self, path: str, seen: str | None, read: vfs.Read, change: Change) -> vfs.StaleVersion:
        """``FS_STALE_VERSION`` showing what changed since the view, when the session kept it."""
        message = f'cannot write "{path}": file changed since it was read'
        viewed = self.session.viewed(path, seen) if self.session is not None and seen is not None else None
        if viewed is None or self.session is None or read.version is None:
            return vfs.StaleVersion(f"{message}. View it again before editing.", path=path)
        try:
            before, now = vfs.decode_text(viewed, path), vfs.decode_text(read.data, path)
        except vfs.NotText:
            return vfs.StaleVersion(f"{message}. View it again before editing.", path=path)
        shown = stale.describe(path, before, now, max(self.config.max_output_chars // 2, 1), _focus(change, before))
        if not shown.complete:
            return vfs.StaleVersion(
                f"{message}. What changed since your view (only the part nearest your edit; view the file again for the rest):\n{shown.text}",
                path=path,
            )
        self.session.remember_view(path, read.version, read.data)  # the model now knows this version
        return vfs.StaleVersion(
            f"{message}. What changed since your view (nothing was written; this is now your view of the file, so "
            f"the edit can be sent again, corrected if needed):\n{shown.text}",
            path=path,
        )

    def _str_replace(self, path: str, args: EditorArgs) -> ToolResult:
        assert args.old_str is not None
        old, new = args.old_str, args.replacement
        _encode(new, "new_str")

        def change(text: Source) -> edits.Replaced:
            return edits.replace_unique(text, old, new, path=path)

        return self._edit(path, "str_replace", "edit", change, _signature("str_replace", old, new))

    def _insert(self, path: str, args: EditorArgs) -> ToolResult:
        assert args.insert_line is not None and args.new_str is not None
        line, new = args.insert_line, args.new_str
        _encode(new, "new_str")

        def change(text: Source) -> edits.Replaced:
            return edits.inserted(text, line, new)

        return self._edit(path, "insert", "insert into", change, _signature("insert", line, new))

    # -- undo_edit ----------------------------------------------------------------------------

    @property
    def _session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def _undo(self, path: str) -> ToolResult:
        """Revert the newest transaction if it changed ``path`` and nothing else (**Ours**). With a
        session: this conversation's own newest change, even if other conversations committed
        since (refused if one of them changed the same file)."""
        sid = self._session_id
        entries = self.workspace.log(limit=1, session=sid)
        files = [c for c in entries[0].changes if c.action != "mkdir"] if entries else []
        if not files or any(c.path != path for c in files):
            whose = "your most recent change" if sid is not None else "the most recent change in the workspace"
            raise vfs.NotFound(
                f"No edit to undo for {path}: {whose} is not an edit of "
                "this file (only the latest change can be undone).",
                path=path,
            )
        observed = self.session.observation(path) if self.session is not None else None
        known = observed.version if observed is not None and observed.state == "present" else None
        if known is not None and not self.workspace.is_current(path, known):
            raise vfs.StaleVersion(f'cannot write "{path}": file changed since it was read', path=path)
        before = self._content(path)
        try:
            self.workspace.undo(entries[0].txid, session=sid)
        except vfs.StaleVersion:
            raise vfs.StaleVersion(
                f"cannot undo the last edit of {path}: the file changed after that edit", path=path
            ) from None
        stat = self._stat(path, record=False)
        version = stat.version if stat is not None and stat.kind == "file" else None
        if self.session is not None:
            self.session.observe(path, version)
        after = self._content(path)
        if before is None or after is None:
            edit = whole_file(path, self._display(path), before, after)
        else:
            edit = region_edit(path, self._display(path), before, after)
        data = call_data(TOOL_NAME, "undo_edit", [edit], versions={path: version} if version else None)
        return ToolResult(f"Last edit to {path} undone successfully.", data=data)

    def _content(self, path: str) -> bytes | None:
        try:
            return self.workspace.read(path).data
        except (vfs.NotFound, vfs.NotRegularFile, vfs.IsADirectory):
            return None

    # -- bookkeeping --------------------------------------------------------------------------

    def _display(self, path: str) -> str:
        """``path`` as the diff headers show it: relative to the mount (``a/src/x.py``)."""
        mount = self.workspace.mount.rstrip("/") + "/"
        return path[len(mount) :] if path.startswith(mount) else path.lstrip("/")

    @staticmethod
    def _result(text: str, command: str, commit: vfs.CommitResult | None, edit: FileEdit) -> ToolResult:
        """A write's result: the model's text, and the file's card beside it."""
        versions = dict(commit.versions) if commit is not None else {}
        if edit.path not in versions and len(versions) == 1:  # written through a symlink: the target's key
            versions = {edit.path: next(iter(versions.values()))}
        txid = commit.txid if commit is not None else None
        return ToolResult(text, data=call_data(TOOL_NAME, command, [edit], versions=versions, txid=txid))

    def _record(self, path: str, result: vfs.CommitResult | None, data: bytes | None = None) -> str | None:
        """Observe the version a commit wrote (and keep its bytes as the session's view of it)."""
        if self.session is None or result is None:
            return None
        version = result.versions.get(path)
        if version is None and len(result.versions) == 1:  # written through a symlink: the target's key
            version = next(iter(result.versions.values()))
        if version is not None:
            if data is None:
                self.session.observe(path, version)
            else:
                self.session.remember_view(path, version, data)
        return version


class _StaleView(Exception):
    """The file changed since the session's view (raised inside the transaction, reported after)."""

    def __init__(self, read: vfs.Read) -> None:
        super().__init__("stale view")
        self.read = read


def _focus(change: Change, viewed: str) -> int | None:
    """The line of the viewed text the edit meant (where it applies there), if it applies."""
    try:
        return change(viewed).line
    except vfs.VfsError:
        return None


def _signature(command: str, *args: object) -> str:
    """A digest of an edit call, to recognise the same call sent again."""
    return hashlib.sha256(json.dumps([command, *args]).encode("utf-8", "surrogatepass")).hexdigest()


def _encode(text: str, parameter: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ArgumentError(
            f"Parameter `{parameter}` is not valid Unicode text (a lone surrogate at index {exc.start}).",
            field=parameter,
        ) from None
