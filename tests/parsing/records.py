"""The training records a parser reads from lines, as the shape tests look at them."""

from __future__ import annotations

from babysit.parsing.parser import LogParser, Record


def metric_records(lines: list[str]) -> list[Record]:
    """Every record with a metric, the parser's closing ones included."""
    parser = LogParser()
    return [r for r in parser.feed_lines(lines) + parser.finish() if r.metrics]
