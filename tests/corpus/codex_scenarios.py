"""Codex's apply_patch corpus as data: scenario names, Codex's failure texts, tree reading."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "codex"
SCENARIOS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())

HEADERS = "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
# Codex's stderr for each failure scenario ({root}: the absolute path of the working directory,
# which Codex joins with the patch's path; for our tool, the workspace mount).
FAILURES = {
    "005_rejects_empty_patch": "No files were modified.",
    "006_rejects_missing_context": "Failed to find expected lines in {root}/modify.txt:\nmissing",
    "007_rejects_missing_file_delete": "Failed to delete file {root}/missing.txt",
    "008_rejects_empty_update_hunk": "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty",
    "009_requires_existing_file_for_update": (
        "Failed to read file to update {root}/missing.txt: No such file or directory (os error 2)"
    ),
    "012_delete_directory_fails": "Failed to delete file {root}/dir",
    "013_rejects_invalid_hunk_header": (
        f"Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header. {HEADERS}"
    ),
    "015_failure_after_partial_success_leaves_changes": (
        "Failed to read file to update {root}/missing.txt: No such file or directory (os error 2)"
    ),
}
INVERTED = {"015_failure_after_partial_success_leaves_changes"}


def read_tree(root: Path) -> dict[str, bytes | None]:
    """relative path -> bytes (files) / None (directories); an absent root is an empty tree."""
    tree: dict[str, bytes | None] = {}
    if not root.is_dir():
        return tree
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        tree[rel] = None if path.is_dir() else path.read_bytes()
    return tree


def failure_text(scenario: str, root: str) -> str:
    return FAILURES[scenario].replace("{root}", root)
