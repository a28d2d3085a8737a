"""Turn raw training-log text into Records: pure functions plus one stateful LogParser."""

from babysit.parsing.parser import LogParser

__all__ = ["LogParser"]
