"""Anomaly rules: declared as data (thresholds in RuleSettings, event tables) and
evaluated by pure functions; the run (core/run.py) decides when to call them."""
