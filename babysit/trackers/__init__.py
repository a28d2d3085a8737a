"""Readers for what experiment trackers (W&B, …) write about a run."""
