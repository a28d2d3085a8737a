"""Rendering for people (rich) and agents (JSON lines). Nothing here decides anything."""
