"""``vfs apply`` as a drop-in for Codex's ``apply_patch`` binary: subprocess tests on local dirs.

Patch as the single argument or on stdin; Codex's summary on stdout (exit 0), Codex's error text
on stderr (exit 1, nothing changed), usage errors exit 2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.codex_scenarios import CORPUS, FAILURES, INVERTED, SCENARIOS, failure_text, read_tree
from tests.support.tiers import tiered

REPO = Path(__file__).resolve().parents[2]
META = ".vfs"


def run_cli(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "editors.cli", "apply", *args],
        cwd=cwd,
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )


def tree_without_meta(root: Path) -> dict[str, bytes | None]:
    return {k: v for k, v in read_tree(root).items() if k != META and not k.startswith(META + "/")}


def prepare(tmp_path: Path, scenario: str) -> Path:
    work = tmp_path / "work"
    source = CORPUS / scenario / "input"
    if source.is_dir():
        shutil.copytree(source, work)
    else:
        work.mkdir()
    return work


@pytest.mark.parametrize("form", ["argument", "stdin"])
# a process a case: one scenario in the fast tier; tests/corpus/test_codex_corpus.py runs every
# scenario in process there
@pytest.mark.parametrize("scenario", tiered(SCENARIOS))
def test_scenario_through_the_cli(tmp_path: Path, scenario: str, form: str) -> None:
    work = prepare(tmp_path, scenario)
    start = tree_without_meta(work)
    patch = (CORPUS / scenario / "patch.txt").read_bytes()
    done = run_cli(work, patch.decode("utf-8")) if form == "argument" else run_cli(work, stdin=patch)

    if scenario in FAILURES:
        assert (done.returncode, done.stdout) == (1, b"")
        assert done.stderr.decode("utf-8") == failure_text(scenario, os.path.realpath(work)) + "\n"
    else:
        assert done.returncode == 0, done.stderr
        assert done.stderr == b""
        assert done.stdout.startswith(b"Success. Updated the following files:\n")
    expected = start if scenario in INVERTED else read_tree(CORPUS / scenario / "expected")
    assert tree_without_meta(work) == expected


def test_summary_is_codex_stdout(tmp_path: Path) -> None:
    work = prepare(tmp_path, "002_multiple_operations")
    done = run_cli(work, (CORPUS / "002_multiple_operations" / "patch.txt").read_text(encoding="utf-8"))
    assert done.stdout == b"Success. Updated the following files:\nA nested/new.txt\nM modify.txt\nD delete.txt\n"


def test_root_option_diff_and_dry_run(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"1\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+2\n*** End Patch\n"
    dry = run_cli(tmp_path, "--root", str(root), "--dry-run", "--diff", patch)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == (
        b"Dry run: nothing was changed. The patch would update:\nM a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+2\n"
    )
    coloured = run_cli(tmp_path, "--root", str(root), "--dry-run", "--color", "always", patch)
    assert b"\x1b[31m-1\x1b[0m\n\x1b[32m+2\x1b[0m\n" in coloured.stdout
    assert b"\x1b[" not in run_cli(tmp_path, "--root", str(root), "--dry-run", patch).stdout  # not a terminal
    assert (root / "a.txt").read_bytes() == b"1\n"
    done = run_cli(tmp_path, "--root", str(root), patch)
    assert done.returncode == 0 and (root / "a.txt").read_bytes() == b"2\n"


def test_empty_stdin_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(tmp_path)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr == b"Usage: vfs apply 'PATCH'\n       echo 'PATCH' | vfs apply\n"


def test_two_arguments_are_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "*** Begin Patch", "*** End Patch")
    assert done.returncode == 2
    assert b"unrecognized arguments" in done.stderr


def test_stdin_that_is_not_utf8_fails(tmp_path: Path) -> None:
    done = run_cli(tmp_path, stdin=b"*** Begin Patch\n*** Add File: a\n+\xff\n*** End Patch\n")
    assert done.returncode == 1
    assert done.stderr == b"Error: Failed to read PATCH from stdin.\nstream did not contain valid UTF-8\n"
    assert tree_without_meta(tmp_path) == {}


def test_parse_error_text_on_stderr(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "*** Begin Patch\n*** Add File: a\n+x")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr == b"Invalid patch: The last line of the patch must be '*** End Patch'\n"


def test_sandbox_violation_fails_without_changes(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    done = run_cli(work, "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** Add File: ../out.txt\n+x\n*** End Patch")
    assert done.returncode == 1
    assert b"[sandbox: file access denied under workspace-write mode]" in done.stderr
    assert not (tmp_path / "out.txt").exists() and not (work / "ok.txt").exists()


def test_non_ascii_paths_print_as_utf8(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "*** Begin Patch\n*** Add File: caf\u00e9.txt\n+x\n*** End Patch")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Success. Updated the following files:\nA caf\u00e9.txt\n".encode()
    assert (tmp_path / "caf\u00e9.txt").read_bytes() == b"x\n"
