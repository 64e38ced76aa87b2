"""Shared test helpers: workspace factories per backend, tree snapshots, fault injection."""
