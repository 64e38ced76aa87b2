"""Every verb fails the same way: the error it raises carries its exit status and its one line."""

from __future__ import annotations

import json

import pytest

import vfs
from editors.adapters.cli import main
from editors.adapters.cli.errors import CliError, CodexError, Interrupted, ToolFailed, UsageError
from editors.result import ToolResult, dumps
from tests.adapters.support import run_cli
from tests.support.tiers import tiered


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (CliError("cannot listen", prog="vfs serve"), 1, "vfs serve: cannot listen"),
        (CliError.of(vfs.NotFound("no such file"), prog="vfs log"), 1, "vfs log: no such file [FS_NOT_FOUND]"),
        (UsageError("bad option", prog="vfs schema"), 2, "vfs schema: bad option (see 'vfs schema --help')"),
        (UsageError("bad option"), 2, "vfs: bad option (see 'vfs --help')"),
        (Interrupted(), 130, "vfs: interrupted"),
        (CodexError("Invalid patch: x", prog="vfs apply"), 1, "Invalid patch: x"),
    ],
)
def test_each_error_renders_itself(error: CliError, status: int, line: str) -> None:
    assert (error.exit_code, error.format_message()) == (status, line)


def test_a_failed_tool_call_splits_text_and_code(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    ToolFailed(ToolResult("Error: nope", True, "FS_NOT_FOUND")).show()
    captured = capsysbinary.readouterr()
    assert (captured.out, captured.err) == (b"Error: nope\n", b"vfs tool: call failed [FS_NOT_FOUND]\n")


# a process a case: log and serve (its own start-up path) in the fast tier, every verb in the full suite
@pytest.mark.parametrize(
    "verb", tiered(["undo", "log", "recover", "demo", "serve"], lambda verb: verb in ("log", "serve"))
)
def test_a_vfs_error_of_any_verb_is_one_line_with_its_code(verb: str) -> None:
    done = run_cli(verb, "--root", "memory://cli-errors", "--mount", "relative")
    assert done.returncode == 1, done.stderr
    assert done.stderr.decode() == (
        f"vfs {verb}: The mount point must be an absolute path, got 'relative' [FS_INVALID_ARGUMENT]\n"
    )


def test_undo_with_nothing_to_undo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "--root", "memory://cli-errors-undo"]) == 1
    assert capsys.readouterr().err == "vfs undo: There is no transaction to undo. [FS_NOT_FOUND]\n"


def test_a_usage_error_of_the_top_level_parser(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nonsense-verb"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vfs: argument VERB: invalid choice: 'nonsense-verb'") and err.endswith(
        "(see 'vfs --help')\n"
    )


def test_log_json_is_the_byte_stable_dumps(capsys: pytest.CaptureFixture[str]) -> None:
    ws = vfs.open_workspace("memory://cli-log-json")
    with ws.transaction(label="seed") as tx:
        tx.write("a.txt", b"a\n")
    assert main(["log", "--root", "memory://cli-log-json", "--json"]) == 0
    out = capsys.readouterr().out
    (entry,) = json.loads(out)
    assert out == dumps([entry])  # sorted keys, two-space indent, one final newline
    assert (entry["label"], entry["changes"]) == ("seed", [{"action": "add", "path": "/workspace/a.txt"}])
