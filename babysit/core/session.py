"""One babysitting session, start to finish: target → watch → outcome → verdict → artifact.

No printing happens here (the observer renders) and nothing exits the process
(`exit_code_for` maps the outcome; the CLI returns it)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babysit import stopping
from babysit.artifact import (
    ARTIFACT_NAME,
    read_previous,
    replaced_verdict,
    verdict_to_dict,
    write_artifact,
)
from babysit.clock import Clock, SystemClock
from babysit.config import Settings
from babysit.core.fixer import Approver, Fixer
from babysit.core.loop import WatchLoop, WatchStop
from babysit.core.outcome import WatchOutcome
from babysit.core.reports import (
    Observer,
    ScrubbingObserver,
    interruption,
)
from babysit.core.reviewer import Reviewer
from babysit.core.stops import proposal_head
from babysit.core.verdict import decide
from babysit.exit_codes import ExitCode
from babysit.model import Decision, TerminalState, Verdict, utc_text
from babysit.sanitise import outbound_value
from babysit.targets.base import RunControls, Target, TargetError, TargetUnavailable, Wakes


@dataclass(frozen=True)
class SessionResult:
    verdict: Verdict
    artifact_path: Path | None
    artifact_error: str | None
    exit_code: ExitCode


def exit_code_for(verdict: Verdict, outcome: WatchOutcome,
                  artifact_written: bool = True) -> ExitCode:
    """The single mapping from an outcome to the process exit status. A verdict file
    that could not be written wins: tools reading it would read a stale one."""
    if not artifact_written:
        return ExitCode.ARTIFACT_FAILED
    if outcome.interrupted:
        return ExitCode.INTERRUPTED
    if outcome.unreachable is not None:
        return ExitCode.UNREACHABLE
    if outcome.awaiting_approval and verdict.decision is not Decision.NO_GO:
        # A proposal waits: CONDITIONAL, unless the run is already a NO-GO — the exit
        # status agrees with the decision printed, and an agent's loop stops on it.
        return ExitCode.CONDITIONAL
    return {Decision.GO: ExitCode.GO, Decision.NO_GO: ExitCode.NO_GO,
            Decision.CONDITIONAL: ExitCode.CONDITIONAL}[verdict.decision]


def run_session(target_factory: Callable[[], Target], target_text: str, target_type: str,
                settings: Settings, observer: Observer, clock: Clock | None = None,
                rewatch: Sequence[str] = (), approver: Approver | None = None,
                reviewer: Reviewer | None = None,
                output_gone: Callable[[], str | None] | None = None) -> SessionResult:
    # Once a watch has begun it owes the user a verdict file: a stop is held wherever
    # babysit sets up or writes, and lands only where it waits (opening the target, the
    # watch itself) — a Ctrl-C between the two used to end the process with neither a
    # verdict nor a word about one.
    with stopping.held():
        stopping.mark_session_started()
        return _watch(target_factory, target_text, target_type, settings, observer, clock,
                      rewatch, approver, reviewer, output_gone)


def _watch(target_factory: Callable[[], Target], target_text: str, target_type: str,
           settings: Settings, observer: Observer, clock: Clock | None,
           rewatch: Sequence[str], approver: Approver | None, reviewer: Reviewer | None,
           output_gone: Callable[[], str | None] | None) -> SessionResult:
    real_time = clock is None
    clock = clock or SystemClock()
    observer = ScrubbingObserver(observer)  # nothing leaves unscrubbed, whatever renders it
    run_id = settings.run_id or str(uuid.uuid4())
    started = clock.monotonic()

    def unreachable(target: str, kind: str, reason: str) -> SessionResult:
        outcome = WatchOutcome(target=target, target_type=kind, state=TerminalState.RUNNING,
                               watched_seconds=clock.monotonic() - started, unreachable=reason)
        return _finish(outcome, run_id, settings, observer, clock)

    try:
        with stopping.interruptible():
            target = target_factory()
    except (TargetError, TargetUnavailable) as error:
        # TargetUnavailable: a service that hangs or drops while the target is opened
        # (an `scontrol` past its deadline) is as unreachable as one that refused.
        return unreachable(target_text, target_type, str(error))
    except KeyboardInterrupt:
        outcome = WatchOutcome(target=target_text, target_type=target_type,
                               state=TerminalState.RUNNING, interrupted=True,
                               watched_seconds=clock.monotonic() - started,
                               stop_reason=f"{interruption()} before the target was opened")
        return _finish(outcome, run_id, settings, observer, clock)
    fixer = None
    if isinstance(target, RunControls):
        fixer = Fixer(target, fix_enabled=settings.fix, notice=observer.notice,
                      now=lambda: utc_text(clock.now()),
                      approver=approver)
    previous = _previous_verdict(settings, target.label) if settings.poll.until_event \
        else None
    try:
        # A fake clock (tests) drives the loop alone; in real time a local log wakes it.
        waker = target.change_waker() if real_time and isinstance(target, Wakes) else None
        loop = WatchLoop(target, settings, observer, clock, fixer=fixer, reviewer=reviewer,
                         known_anomalies=_already_reported(previous),
                         known_proposals=_proposals_shown(previous), waker=waker,
                         output_gone=output_gone)
        try:
            with stopping.interruptible():
                stop = loop.run()
        except KeyboardInterrupt:  # one held while the watch was set up lands here
            stop = WatchStop(interruption(), interrupted=True)
        except TargetError as error:
            return unreachable(target.label, target.target_type, str(error))
        except Exception as error:
            # A bug in babysit must not cost the user the verdict file: write what is
            # known, marked as incomplete, then let the error surface.
            outcome = loop.outcome(WatchStop(f"babysit internal error: {error!r}", False))
            _finish(outcome, run_id, settings, observer, clock)
            raise
        return _finish(loop.outcome(stop, tuple(rewatch)), run_id, settings, observer, clock)
    finally:
        target.close()


def _previous_verdict(settings: Settings, label: str) -> dict[str, Any] | None:
    """The previous verdict for the same target in `--out-dir`: what an agent that re-runs
    `--until-event` was already told. A file that is unreadable or oddly shaped is
    ignored (the agent is then woken again)."""
    _, previous = read_previous(settings.out_dir)
    return previous if previous is not None and previous.get("target") == label else None


def _already_reported(previous: dict[str, Any] | None) -> frozenset[tuple[str, int | None]]:
    """Anomalies the previous verdict carried, by type and step: an agent that re-runs
    `--until-event` after handling one must not be woken by it again."""
    listed = previous.get("anomalies_detected") if previous is not None else None
    if not isinstance(listed, list):
        return frozenset()
    seen: set[tuple[str, int | None]] = set()
    for item in listed:
        if not isinstance(item, dict):
            continue
        kind, step = item.get("type"), item.get("step")
        if isinstance(kind, str) and (step is None or (isinstance(step, int)
                                                       and not isinstance(step, bool))):
            seen.add((kind, step))
    return frozenset(seen)


def _proposals_shown(previous: dict[str, Any] | None) -> frozenset[str]:
    """What the proposals waiting in the previous verdict proposed: shown to the agent
    once, they do not stop the next `--until-event` watch at once again (its loop would
    spin); they stay in the verdict, and a new one wakes it."""
    listed = previous.get("actions") if previous is not None else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(proposal_head(item["reason"]) for item in listed
                     if isinstance(item, dict) and item.get("status") == "needs-approval"
                     and isinstance(item.get("reason"), str))


def _finish(outcome: WatchOutcome, run_id: str, settings: Settings, observer: Observer,
            clock: Clock) -> SessionResult:
    verdict = outbound_value(decide(outcome, run_id))  # the artifact: the same one pass
    data = verdict_to_dict(verdict, clock.now())
    path: Path | None = None
    error: str | None = None
    stub = outcome.unreachable is not None or outcome.polls == 0
    replaced = None if stub else replaced_verdict(settings.out_dir, data.get("target"))
    if replaced is not None:
        observer.notice(f"this verdict replaces the one on {replaced} in "
                        f"{settings.out_dir / ARTIFACT_NAME} (give each run its own "
                        f"--out-dir to keep both)")
    try:
        path = write_artifact(data, settings.out_dir, stub=stub)
    except OSError as problem:
        error = f"cannot write the verdict to {settings.out_dir}: {problem}"
    observer.final(verdict, data, str(path) if path else None)
    return SessionResult(verdict, path, error, exit_code_for(verdict, outcome, path is not None))
