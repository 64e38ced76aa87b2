"""Benchmarks of vfs against its peers (Codex's apply_patch, the OpenHands editor): ``python -m benchmarks``.

See ``benchmarks/runner.py`` for the options and the README section "Benchmarks" for what is measured.
Nothing here is imported by vfs, the editors or the tests' fast paths.
"""
