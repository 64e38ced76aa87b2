"""Issue 14's help for the model on the surfaces a model meets it: stale-edit help over MCP with a
real client (a session keeps the view), and apply_patch's FS_ALREADY_APPLIED through ``vfs apply``
as a subprocess and over MCP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.adapters.support import REPO, cli_env, error_code, ok_text, text_of
from tests.adapters.test_mcp import MOUNT, editor, patch, run, stdio_client

PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-    return 1\n+    return 2\n*** End Patch\n"


def test_mcp_stale_edit_shows_what_changed_since_the_view_and_the_corrected_call_succeeds(tmp_path: Path) -> None:
    target = tmp_path / "s.py"
    target.write_bytes(b"a = 1\nb = 2\nc = 3\n")
    path = f"{MOUNT}/s.py"

    async def scenario() -> None:
        async with stdio_client(tmp_path) as client:
            ok_text(await editor(client, command="view", path=path))
            target.write_bytes(b"a = 1\nb = 20\nc = 3\n")  # someone else, after the model's view
            stale = await editor(client, command="str_replace", path=path, old_str="b = 2\n", new_str="b = 5\n")
            assert error_code(stale) == "FS_STALE_VERSION"
            shown = text_of(stale)
            assert "-b = 2" in shown and "+b = 20" in shown  # the change since the view, as a diff
            # the refusal was the model's new view: the corrected call needs no second `view`
            ok_text(await editor(client, command="str_replace", path=path, old_str="b = 20\n", new_str="b = 5\n"))

    run(scenario)
    assert target.read_bytes() == b"a = 1\nb = 5\nc = 3\n"


def _apply(root: Path, patch_text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "editors.cli", "apply", "--root", str(root), "--mount", MOUNT, patch_text],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=cli_env(),
        timeout=120,
        check=False,
    )


def test_cli_patch_sent_twice_is_already_applied_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"def f():\n    return 1\n")
    first = _apply(tmp_path, PATCH)
    assert first.returncode == 0, first.stderr
    second = _apply(tmp_path, PATCH)
    assert second.returncode != 0
    assert "already present at lines 1-2" in second.stderr + second.stdout
    assert (tmp_path / "a.py").read_bytes() == b"def f():\n    return 2\n"


def test_mcp_patch_sent_twice_is_already_applied(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"def f():\n    return 1\n")

    async def scenario() -> None:
        async with stdio_client(tmp_path) as client:
            ok_text(await patch(client, PATCH))
            again = await patch(client, PATCH)
            assert error_code(again) == "FS_ALREADY_APPLIED"
            assert "already present at lines 1-2" in text_of(again)

    run(scenario)
    assert (tmp_path / "a.py").read_bytes() == b"def f():\n    return 2\n"
