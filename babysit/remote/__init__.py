"""Reaching another host over SSH: target addresses and one persistent connection."""
