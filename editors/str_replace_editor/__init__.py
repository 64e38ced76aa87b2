"""The model-facing ``str_replace_editor`` tool (DSH / Anthropic text-editor compatible) over ``vfs``.

Pure parts: :mod:`args` (argument model, schema), :mod:`config`, :mod:`render` (file view),
:mod:`listing` (directory view), :mod:`edits` (str_replace / insert), :mod:`diagnose` (near
misses). :mod:`tool` runs a call against a workspace, one transaction per mutation.
"""
