"""Codex-compatible ``apply_patch``: parser, matcher (seek_sequence), applier, and the vfs tool."""
