"""Anomaly rules: declared as data (thresholds in RuleSettings, event tables) and
evaluated by pure functions; the RunTracker decides when to call them."""
