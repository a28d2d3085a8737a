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

Flower before 1.5 logs the same things in other words (`server.py`, `app.py`): the plan as
`ServerConfig(num_rounds=10, …)`, each round as `fit_round 3: strategy sampled 8 clients`,
the global model evaluated on the server's own data as `initial parameters (loss, other
metrics): 2.30, {'accuracy': 0.44}` and after each round as `fit progress: (3, 43999636.0,
{'accuracy': 0.41}, 241.2)` — the run's loss, the only one the server prints —, and its end
as `FL finished in 834.95`, then `app_fit: losses_centralized [(0, 2.30), …]`, a history.
"""

from __future__ import annotations

import math

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.text import number_from

_PLAN = lazy_re.compile(r"\bStarting Flower (?:server|ServerApp|SuperLink|simulation)\b.*?"
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
# Flower before 1.5 (see the module).
_FIT_ROUND = lazy_re.compile(r"^fit_round (\d+): strategy sampled ")
_INITIAL = lazy_re.compile(r"^initial parameters \(loss, other metrics\): (\S+?), (\{.*\})\s*$")
_PROGRESS = lazy_re.compile(r"^fit progress: \((\d+), (\S+?), (\{.*\}), [\d.]+\)\s*$")
_OLD_FINISHED = lazy_re.compile(r"^FL finished in [\d.]+\s*$")
_FIGURE = lazy_re.compile(r"'(\w+)': ([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)")
HINTS = ("Flower", "[ROUND", "[SUMMARY", "Run finished", "fit_round ", "fit progress: (",
         "initial parameters (", "FL finished in ", "app_fit: ", "evaluate_round ")


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
        if self.planned is not None:
            older = self._older(message, rank)
            if older is not None:
                return older
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

    def _older(self, message: str, rank: int | None) -> Record | bool | None:
        """A line of a Flower server before 1.5 (see the module), under its plan."""
        if message.startswith("app_fit: "):
            return True  # the history of the rounds already read
        if _OLD_FINISHED.match(message) is not None:
            return Record(target_steps=self.planned,
                          events=(LogEvent(EventKind.COMPLETED, message[:500]),),
                          rank=rank, fmt="flower")
        started = _FIT_ROUND.match(message)
        if started is not None:
            return Record(step=int(started.group(1)), target_steps=self.planned,
                          events=(LogEvent(EventKind.NEW_STAGE, message[:500],
                                           f"round {started.group(1)}"),),
                          rank=rank, fmt="flower")
        if message.startswith(("fit_round ", "evaluate_round ")):
            return True  # (`fit_round 1 received 8 results and 0 failures`: the round's news)
        evaluated = _PROGRESS.match(message)
        at_round = int(evaluated.group(1)) if evaluated is not None else 0
        if evaluated is None:
            evaluated = _INITIAL.match(message)
            if evaluated is None:
                return None
            loss, figures = evaluated.group(1), evaluated.group(2)
        else:
            loss, figures = evaluated.group(2), evaluated.group(3)
        metrics = {name: value for name, text in _FIGURE.findall(figures)
                   if (value := number_from(text)) is not None}
        value = number_from(loss.rstrip(","))
        if value is not None:
            metrics["loss"] = value
        return Record(step=at_round, target_steps=self.planned, metrics=metrics, rank=rank,
                      fmt="flower")
