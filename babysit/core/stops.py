"""When the watch stops: small conditions over one `LoopState`, composed with `|` (the
first that fires gives the reason) and `&` (all must fire), as tenacity's stop
conditions are. A condition returns why the watch stops, in words, or "" to go on.
"""

from __future__ import annotations

from dataclasses import dataclass

from babysit.config import PollSettings
from babysit.core.run_view import RunView
from babysit.model import Anomaly
from babysit.units import format_duration


@dataclass(frozen=True)
class LoopState:
    """What the stop conditions look at, after a poll."""

    view: RunView
    awaiting: tuple[str, ...]  # proposals waiting for the user
    polls: int  # polls after the baseline
    elapsed: float  # seconds watched
    new_anomalies: tuple[Anomaly, ...]  # raised by this poll


class Stop:
    def __call__(self, state: LoopState) -> str:
        raise NotImplementedError

    def __or__(self, other: Stop) -> Stop:
        return stop_any(self, other)

    def __and__(self, other: Stop) -> Stop:
        return stop_all(self, other)


class stop_any(Stop):
    """Stops when any condition does, with the first one's reason."""

    def __init__(self, *stops: Stop) -> None:
        self.stops = stops

    def __call__(self, state: LoopState) -> str:
        return next((reason for reason in (stop(state) for stop in self.stops) if reason), "")


class stop_all(Stop):
    """Stops only when every condition does, with their reasons together."""

    def __init__(self, *stops: Stop) -> None:
        self.stops = stops

    def __call__(self, state: LoopState) -> str:
        reasons = [stop(state) for stop in self.stops]
        return "; ".join(reasons) if all(reasons) else ""


class stop_on_terminal(Stop):
    def __call__(self, state: LoopState) -> str:
        view = state.view
        return "" if view.running else f"the run ended: {view.state.value}"


def proposal_head(text: str) -> str:
    """What a proposal proposes, without the reason (which names the latest step)."""
    return text.split(" — because")[0].strip()


class stop_on_approval_needed(Stop):
    """A proposal waits for the user. Under --until-event, one the previous verdict for
    the same target already carried was put to the agent then: waking it again at once
    would only spin its loop, so the watch goes on until something new happens."""

    def __init__(self, known: frozenset[str] = frozenset()) -> None:
        self.known = known

    def __call__(self, state: LoopState) -> str:
        fresh = [text for text in state.awaiting if proposal_head(text) not in self.known]
        return f"waiting for your approval: {fresh[0]}" if fresh else ""


class stop_on_blocker(Stop):
    def __call__(self, state: LoopState) -> str:
        blockers = state.view.blockers
        if not blockers:
            return ""
        first = blockers[0]
        at = f" at step {first.step}" if first.step is not None else ""
        return f"unrecoverable problem: {first.type.value}{at}"


class stop_after_first_poll(Stop):
    """--once: the baseline is the whole watch."""

    def __call__(self, state: LoopState) -> str:
        return "--once: single snapshot taken"


class stop_after_polls(Stop):
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(self, state: LoopState) -> str:
        # The baseline counts as a poll.
        return f"--max-polls {self.limit} reached" if state.polls + 1 >= self.limit else ""


class stop_after_deadline(Stop):
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    def __call__(self, state: LoopState) -> str:
        if state.elapsed < self.timeout:
            return ""
        return f"--timeout {format_duration(self.timeout)} reached"


class stop_on_event(Stop):
    """--until-event: the first anomaly not already reported to the agent in an earlier
    invocation (known by type and step) ends the wait."""

    def __init__(self, known: frozenset[tuple[str, int | None]] = frozenset()) -> None:
        self.known = known

    def __call__(self, state: LoopState) -> str:
        for anomaly in state.new_anomalies:
            if (anomaly.type.value, anomaly.step) not in self.known:
                at = f" at step {anomaly.step}" if anomaly.step is not None else ""
                return f"event: {anomaly.type.value} ({anomaly.severity.value}){at}"
        return ""


def stop_conditions(settings: PollSettings,
                    known: frozenset[tuple[str, int | None]] = frozenset(),
                    known_proposals: frozenset[str] = frozenset()) -> Stop:
    """The watch's stop conditions, in the order their reasons win."""
    stop = stop_on_terminal() | stop_on_approval_needed(known_proposals) | stop_on_blocker()
    if settings.once:
        stop |= stop_after_first_poll()
    if settings.max_polls is not None:
        stop |= stop_after_polls(settings.max_polls)
    if settings.timeout is not None:
        stop |= stop_after_deadline(settings.timeout)
    if settings.until_event:
        stop |= stop_on_event(known)
    return stop
