"""``python -m editors.cli``: the ``vfs`` command (kept here for scripts and tests that run it so)."""

from editors.adapters.cli import main, run

__all__ = ["main"]

if __name__ == "__main__":
    run()
