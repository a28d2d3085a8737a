"""A federated-learning server's rounds, as Flower's server logs them.

A Flower server (`flwr.server.start_server`, a `ServerApp`) trains nothing itself: it
sends the global model to its clients each round and aggregates what they return. Its
log says the plan as it starts (`Starting Flower server, config: num_rounds=20, no
round_timeout`), each round as it begins (`[ROUND 3]`, then `configure_fit: …`,
`aggregate_fit: received 6 results and 0 failures`), and how the run ended (`[SUMMARY]`,
`Run finished 20 round(s) in 8.01s`, then the history of each round's distributed loss
and metrics). No line of it is a training record: the rounds are the run's steps, and the
summary's history is a table of the rounds already run, not training that went on — but a
round's loss there that is not finite is still the run's: the server printed no loss before
it, and a NaN read nowhere would leave a GO on a run that was never seen.
"""

from __future__ import annotations

import math

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.text import number_from

_PLAN = lazy_re.compile(r"\bStarting Flower (?:server|ServerApp|SuperLink)\b.*?"
                        r"\bnum_rounds=(\d+)")
_ROUND = lazy_re.compile(r"^\[ROUND (\d+)\]\s*$")
_SUMMARY = lazy_re.compile(r"^\[SUMMARY\]\s*$")
_FINISHED = lazy_re.compile(r"^Run finished (\d+) round\(s\) in ")
# A round's loss in the summary's history (`History (loss, distributed):`, then `round 3:
# 0.0496`): never a record of its own, but one that is not finite is the run's.
_HISTORY_LOSS = lazy_re.compile(r"^round (\d+): (\S+)\s*$")
# Flower's logger head (`INFO :      `, after its colours are taken off): the summary's
# history is printed under it, line by line.
_FLOWER_HEAD = lazy_re.compile(r"^(?:INFO|DEBUG|WARNING|ERROR)\s+:\s")
HINTS = ("Flower", "[ROUND", "[SUMMARY", "Run finished")


class FederatedRounds:
    """The rounds of a Flower server's log, read into the run's steps."""

    def __init__(self) -> None:
        self.planned: int | None = None  # the rounds the server was started for
        self._summary = False  # inside the `[SUMMARY]` block
        self._loss_history = False  # inside its history of the rounds' losses

    def wants(self, text: str) -> bool:
        return self._summary or any(hint in text for hint in HINTS)

    def read(self, text: str, message: str, rank: int | None) -> Record | bool | None:
        """The record a line makes (a round begun, the run finished), True for a line of
        the summary's history (taken in, no record), None for any other line."""
        if self._summary:
            if _FLOWER_HEAD.match(text) is None:
                self._summary = False  # the summary's block is over
                return None
            finished = _FINISHED.match(message)
            if finished is not None:
                # the server's own word that it ran its rounds: the run is over
                return Record(step=int(finished.group(1)), target_steps=self.planned,
                              events=(LogEvent(EventKind.COMPLETED, message[:500]),),
                              rank=rank, fmt="flower")
            if "History (" in message:
                self._loss_history = "History (loss" in message
            lost = _HISTORY_LOSS.match(message.strip()) if self._loss_history else None
            value = number_from(lost.group(2)) if lost is not None else None
            if value is not None and not math.isfinite(value):
                return Record(metrics={"loss": value}, rank=rank, fmt="flower")
            return True
        plan = _PLAN.search(message)
        if plan is not None:
            self.planned = int(plan.group(1))
            return None
        started = _ROUND.match(message)
        if started is not None:
            return Record(step=int(started.group(1)), target_steps=self.planned,
                          events=(LogEvent(EventKind.NEW_STAGE, message,
                                           f"round {started.group(1)}"),),
                          rank=rank, fmt="flower")
        if _SUMMARY.match(message) is not None and self.planned is not None:
            self._summary = True
            return True
        return None
