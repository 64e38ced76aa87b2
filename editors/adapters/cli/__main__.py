from editors.adapters.cli import run

run()
