"""``vfs demo``: the main job on an embedded default, no server and no setup.

Applies an example multi-file patch to a fresh workspace, shows the result, then shows a
concurrent change being detected instead of clobbered. The workspace is in memory by default;
``--root DIR`` (or an object-store URL) runs it in a new subdirectory ``vfs-demo-XXXXXXXX`` of DIR,
so the demo never touches a file that was there before it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil

import vfs
from editors.adapters.cli.common import add_workspace_args, open_workspace, parse_storage_options
from editors.adapters.cli.errors import EXIT_FAILURE, EXIT_OK
from editors.apply_patch.tool import apply_patch
from editors.str_replace_editor.tool import StrReplaceEditor

FILES = {
    "app/main.py": 'import greet\n\nprint(greet.hello("world"))\n',
    "app/greet.py": 'def hello(name):\n    return "Hello, " + name\n',
    "app/windows.txt": "line one\r\nline two\r\n",
    "OLD_NOTES.md": "obsolete\n",
}

PATCH = """*** Begin Patch
*** Update File: app/greet.py
@@ def hello(name):
-    return "Hello, " + name
+    return f"Hello, {name}!"
*** Update File: app/windows.txt
@@
 line one
-line two
+line 2 (CRLF kept)
*** Add File: app/util/strings.py
+def shout(text):
+    return text.upper()
*** Delete File: OLD_NOTES.md
*** End Patch
"""


def configure(parser: argparse.ArgumentParser, verb: str) -> None:
    add_workspace_args(parser)
    parser.set_defaults(root="memory://")
    for action in parser._actions:
        if action.dest == "root":
            action.help = (
                "where to run the demo (default: memory://, in memory); a directory or URL given here "
                "gets a new subdirectory vfs-demo-XXXXXXXX, and nothing already in it is touched"
            )


def run(args: argparse.Namespace) -> int:
    """A vfs error goes up to the entry point, which shows it (``vfs demo: ... [CODE]``, exit 1)."""
    given = str(args.root)
    args.root = fresh_root(given, parse_storage_options(args.storage_option))
    try:
        ws = open_workspace(args)
        try:
            _one_patch(ws)
            stale = _concurrent_edit(ws)
            _history(ws)
            return EXIT_OK if stale else EXIT_FAILURE
        finally:
            ws.close()
    except BaseException:
        if args.root != given and os.path.isdir(args.root):  # the subdirectory this run made, and only it
            shutil.rmtree(args.root, ignore_errors=True)
        raise


def fresh_root(root: str, storage_options: dict[str, object]) -> str:
    """A new, empty place under ``root`` for the demo: ``memory://`` roots as they are (process
    memory), a directory gets a new subdirectory (the directory must exist: ``FS_BAD_ROOT``), a
    URL a new prefix."""
    if root.startswith("memory://"):
        return root
    name = "vfs-demo-" + secrets.token_hex(4)
    if "://" not in root or root.startswith("file://"):
        path = root[len("file://") :] if root.startswith("file://") else root
        vfs.open_workspace(path).close()  # FS_BAD_ROOT for a missing directory or a file
        fresh = os.path.join(path, name)
        os.mkdir(fresh)
        return fresh
    return root.rstrip("/") + "/" + name


def _one_patch(ws: vfs.Workspace) -> None:
    print(f"Workspace: {ws.root} mounted at {ws.mount}\n")
    with ws.transaction(label="demo: seed files") as tx:
        for rel, text in FILES.items():
            tx.write(rel, text.encode())
    print("1. One patch touching four files, applied as one transaction:\n")
    result = apply_patch(ws, PATCH, diff=True)
    print(result.summary)
    print(result.diff)
    print(f"   app/windows.txt is now {ws.read_bytes('app/windows.txt')!r}\n")


def _concurrent_edit(ws: vfs.Workspace) -> bool:
    """Whether the editor refused to overwrite the other writer's change (the demo's point)."""
    print("2. Someone else edits a file between the agent's view and its edit:\n")
    editor = StrReplaceEditor(ws)
    path = ws.to_path("app/main.py")
    editor.run({"command": "view", "path": path})
    with ws.transaction(label="another writer") as tx:
        tx.write(path, b'import greet\n\nprint(greet.hello("everyone"))\n')
    outcome = editor.run(
        {"command": "str_replace", "path": path, "old_str": "import greet", "new_str": "import greet as g"}
    )
    print(f"   {outcome.text}  [{outcome.code}]")
    print(f"   the other writer's change is intact: {ws.read_text(path).splitlines()[-1]}\n")
    return outcome.code == vfs.StaleVersion.code


def _history(ws: vfs.Workspace) -> None:
    print("3. History: every commit can be undone while nobody changed its files since:\n")
    for entry in ws.log(5):
        print(f"   {entry.txid}  {entry.label}: " + ", ".join(f"{c.action} {c.path}" for c in entry.changes))
    undone = ws.undo()
    main = ws.read_text(ws.to_path("app/main.py")).splitlines()[-1]
    print(f"\n   undid '{undone.label}'; main.py says again: {main}")
