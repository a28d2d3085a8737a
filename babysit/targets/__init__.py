"""Targets: where a run's evidence comes from. One module per kind, one Protocol."""
