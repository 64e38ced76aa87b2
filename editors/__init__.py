"""Model-facing tools built on the public API of ``vfs``: ``apply_patch`` and ``str_replace_editor``.

Modules here import only ``vfs`` (never fsspec or a backend), so the tools behave the same on
every backend.
"""
