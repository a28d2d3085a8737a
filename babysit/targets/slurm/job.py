"""A Slurm batch job: its state from the controller (`scontrol show job`, then `sacct`
once the job has left the queue), its StdOut/StdErr files parsed like a local log.

Each poll is one `scontrol` call (plus one `sacct` after the job has gone) and a read of
what the job's files gained. Steps, losses, NaN, OOM and NCCL errors are found by the
same parsers and rules as in any log; Slurm's own state decides how the job ended. A
requeue (preemption, node failure, `scontrol requeue`) is a new attempt of the same run.
Nothing here acts on the job: `scancel` and `scontrol requeue` are only proposed.
"""

from __future__ import annotations

import os
import pwd
import shlex
import time
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from babysit.model import AnomalyType, Record, Severity, TerminalState
from babysit.snapshot import ServiceAnomaly, Snapshot, TimeLimit
from babysit.targets.base import Target, TargetError, TargetUnavailable
from babysit.targets.kinds import KindUsageError, Request
from babysit.targets.slurm.job_ids import check_job_id
from babysit.targets.slurm.runner import LocalRunner, Runner
from babysit.targets.slurm.states import (
    NEVER_STARTS,
    PENDING_MEANS,
    SACCT_FORMAT,
    TERMINAL,
    WAITING,
    array_tasks,
    cancelled_by,
    gpus,
    job_failure,
    parse_records,
    parse_sacct,
    pick,
    slurm_seconds,
)
from babysit.targets.slurm.view import JobView, slurm_time, view_of

MAX_PENDING = 2 * 3600.0
def _seconds_since(text: str) -> float | None:
    moment = slurm_time(text)
    return None if moment is None else max(0.0, time.time() - moment.timestamp())


def _words(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def _merge(main: Snapshot, other: Snapshot) -> Snapshot:
    """StdOut's snapshot with what StdErr added (tracebacks, warnings, its steps)."""
    first, then = main.log, other.log
    quiet = [q for q in (first.quiet_for, then.quiet_for) if q is not None]
    log = replace(first, records=first.records + then.records,
                  new_bytes=first.new_bytes + then.new_bytes,
                  new_lines=first.new_lines + then.new_lines,
                  formats=first.formats or then.formats,
                  quiet_for=min(quiet) if quiet else None,
                  phase=first.phase or then.phase)
    return replace(main, log=log, notices=main.notices + other.notices)


def _on_node(records: tuple[Record, ...], nodes: str) -> tuple[Record, ...]:
    """A job on one node (its NodeList a single host name): every rank ran there, and a
    finding on a rank names it. Ranks the log placed on a node keep their place; a
    torchrun worker named by its task (`local rank 2 of task 0`) gets the node added."""
    if not nodes or any(c in nodes for c in "[],") or not any(
            r.rank is not None and "node " not in r.source for r in records):
        return records
    return tuple(replace(r, source=_with_node(r.source, nodes))
                 if r.rank is not None and "node " not in r.source else r for r in records)


def _with_node(source: str, node: str) -> str:
    if not source:
        return f"node {node}"
    if source.startswith("rank "):  # `rank 6 (local rank 2 of task 1)`
        return f"{source[:-1]}, node {node})" if source.endswith(")") else source
    return f"{source} on node {node}" if source.startswith("local rank") \
        else f"{source}, node {node}"


class SlurmJobTarget:
    target_type: ClassVar[str] = "slurm"

    def __init__(self, job_id: str, runner: Runner, open_log: Callable[[str], Target], *,
                 max_pending: float = MAX_PENDING, login: str | None = None) -> None:
        self.job_id = job_id
        self.runner = runner
        self._open_log = open_log
        self.max_pending = max_pending
        self.login = login
        self._notices: list[str] = []
        self._accounting: bool | None = None  # None: not asked yet
        self._gone_noted = False
        self._first_seen = time.monotonic()
        self._last = JobView(state="UNKNOWN")
        first = self._read(opening=True)
        if first is None:
            raise TargetError(f"no Slurm job {job_id} on {runner.where}: scontrol does not "
                              f"know it and accounting (sacct) has no record of it")
        self._last = first
        self._restarts = first.restarts
        self._state: str | None = None
        self._raised: set[str] = set()
        self._logs: dict[str, Target] = {}
        self._missing_noted: set[str] = set()
        where = f" via {login}" if login else ""
        self._notices.insert(0, f"Slurm job {self.job_id} ({first.name or 'no name'}){where}: "
                                f"{first.state}" + (f", partition {first.partition}"
                                                     if first.partition else ""))

    @property
    def label(self) -> str:
        # Over SSH the job ID alone does not say which cluster: `login:ID`, the way a
        # remote log is `host:path` (and a new verdict for job 1 elsewhere is not taken
        # for this one's by --until-event).
        return f"{self.login}:{self.job_id}" if self.login else self.job_id

    @property
    def log_path(self) -> str | None:
        return self._last.stdout if self.login is None and self._last.stdout else None

    # --- the job's state ------------------------------------------------------------------

    def _read(self, opening: bool = False) -> JobView | None:
        """This poll's view; None when the job has left the controller and accounting
        cannot say how it ended."""
        done = self.runner.run(["scontrol", "show", "job", "-o", self.job_id])
        if done.ok:
            records = parse_records(done.out)
            tasks = array_tasks(records, self.job_id) if "_" not in self.job_id else []
            if opening and len(tasks) > 1:
                self._notices.append(f"job {self.job_id} is an array of {len(tasks)}+ tasks; "
                                     f"watching task {tasks[0]} (--slurm {tasks[-1]} watches "
                                     f"another)")
                self.job_id = tasks[0]
            record = pick(records, self.job_id)
            if record is not None:
                return view_of(record)
        elif "invalid job id" not in done.err.lower():
            raise (TargetError if opening else TargetUnavailable)(
                f"scontrol show job {self.job_id} failed on {self.runner.where}: "
                f"{done.err or f'exit status {done.status}'}")
        return self._from_accounting()

    def _from_accounting(self) -> JobView | None:
        if self._accounting is False:
            return None
        done = self.runner.run(["sacct", "-n", "-P", "-X", "-j", self.job_id,
                                f"--format={SACCT_FORMAT}"])
        if not done.ok:
            self._accounting = False
            self._notices.append(f"Slurm accounting is not available on {self.runner.where} "
                                 f"(sacct: {done.err or f'exit status {done.status}'}): once "
                                 f"the job leaves the queue, the last state seen is kept")
            return None
        self._accounting = True
        row = parse_sacct(done.out, self.job_id)
        if row is None:
            return None
        return replace(self._last, state=row.state, exit_code=row.exit_code, reason=row.reason,
                       run_time=row.elapsed, nodes=row.nodes or self._last.nodes,
                       tres=row.tres or self._last.tres, source="sacct")

    def _cancelled_by(self, view: JobView) -> str | None:
        """Who cancelled the job: sacct says (`CANCELLED by UID`); scontrol does not."""
        uid = cancelled_by(view.state)
        if uid is None and self._accounting is not False:
            done = self.runner.run(["sacct", "-n", "-P", "-X", "-j", self.job_id,
                                    f"--format={SACCT_FORMAT}"])
            row = parse_sacct(done.out, self.job_id) if done.ok else None
            uid = cancelled_by(row.state) if row is not None else None
        if uid is None:
            return None
        if self.login is None:
            try:
                return f"{pwd.getpwuid(int(uid)).pw_name} (UID {uid})"
            except (KeyError, OverflowError):
                pass
        return f"UID {uid}"

    # --- one poll --------------------------------------------------------------------------

    def poll(self, final: bool = False) -> Snapshot:
        view = self._read()
        gone = view is None
        if view is None:
            view = self._last
            if not self._gone_noted and view.base not in TERMINAL:
                self._gone_noted = True
                self._notices.append(f"job {self.job_id} has left the queue and its end state "
                                     f"cannot be read; keeping the last state seen "
                                     f"({view.state}) and judging the end from its log")
        self._last = view
        name = view.base
        if view.restarts > self._restarts:
            self._notices.append(f"job {self.job_id} was requeued (Restarts={view.restarts}): "
                                 f"attempt {view.restarts + 1} of the same run")
            self._restarts = view.restarts
        run_state = TERMINAL.get(name)
        if name == "PREEMPTED" and not view.requeue:
            run_state = TerminalState.FAILED
        elif name == "PREEMPTED" and "preempted" not in self._raised:
            self._raised.add("preempted")
            self._notices.append(f"job {self.job_id} was preempted; Slurm requeues it "
                                 f"(Requeue=1): a new attempt, not a new run")
        reason_state = f"{name}:{view.reason}:{view.restarts}"
        changed = self._state is not None and reason_state != self._state
        self._state = reason_state
        raised = self._problems(view, name, run_state)
        snapshot = self._read_logs(view, final or run_state is not None or gone)
        notices, self._notices = self._notices, []
        return replace(
            snapshot,
            notices=(*notices, *snapshot.notices),
            log=replace(snapshot.log, formats=snapshot.log.formats or ("slurm",),
                        records=_on_node(snapshot.log.records, view.nodes)),
            process=replace(snapshot.process, alive=False if gone else run_state is None),
            service=replace(
                snapshot.service,
                run_state=run_state,
                run_state_detail=f"Slurm job state: {view.state}" + (
                    f" ({view.reason})" if view.reason and view.reason != "None" else ""),
                run_state_source="Slurm",
                status=self._status(view, name),
                headline=self._headline(view, name),
                raised=raised,
                service_state=reason_state,
                activity=bool(snapshot.log.new_lines) or changed or name in WAITING,
                commands=self._commands(view, run_state),
                cancel_command=self._command("scancel", self.job_id) if run_state is None
                and not gone else None,
                time_limit=self._time_limit(view) if name == "RUNNING" and not gone else None),
            stall_hint=("Slurm still reports the job RUNNING, but its output files did not "
                        "grow in that time") if name == "RUNNING" else "")

    def _time_limit(self, view: JobView) -> TimeLimit | None:
        """TimeLimit and RunTime, both Slurm's own count (suspended time excluded)."""
        limit, used = slurm_seconds(view.time_limit), slurm_seconds(view.run_time)
        if limit is None or used is None:
            return None
        # Raising a limit is an administrator's (a user may only lower it); a requeued
        # job starts again from its script, which resumes if it reads its checkpoint.
        return TimeLimit(limit, used, "Slurm TimeLimit", (
            self._command("scontrol", "update", f"JobId={self.job_id}",
                          "TimeLimit={minutes}"),
            self._command("scontrol", "requeue", self.job_id)))

    def _problems(self, view: JobView, name: str,
                  run_state: TerminalState | None) -> tuple[ServiceAnomaly, ...]:
        found: list[ServiceAnomaly] = []
        what = f"Slurm job {self.job_id}"
        if run_state is not None and "ended" not in self._raised:
            self._raised.add("ended")
            who = self._cancelled_by(view) if name == "CANCELLED" else None
            state = "PREEMPTED" if name == "PREEMPTED" else view.state
            anomaly = job_failure(what, state, view.exit_code, view.reason, who, "")
            if anomaly is not None:
                found.append(anomaly)
        if name != "PENDING":
            return tuple(found)
        if view.reason in NEVER_STARTS and "never" not in self._raised:
            # Not a stall: the run never began. Job-level: as submitted, it cannot run.
            self._raised.add("never")
            found.append(ServiceAnomaly(
                AnomalyType.JOB_FAILURE, Severity.BLOCKER,
                f"{what} is pending with Reason={view.reason} and will not start as "
                f"submitted: {NEVER_STARTS[view.reason]}. Cancel it and resubmit with a "
                f"request the partition can satisfy.", key="slurm-never-starts"))
        waited = self._waited(view)
        if waited > self.max_pending and "pending" not in self._raised:
            # STALLED: the run makes no progress for longer than allowed. It resolves by
            # itself once the job starts and steps arrive (recovers_on_progress).
            self._raised.add("pending")
            found.append(ServiceAnomaly(
                AnomalyType.STALLED, Severity.MEDIUM,
                f"{what} has been pending for {_words(waited)} (Reason={view.reason}: "
                f"{PENDING_MEANS.get(view.reason, 'see `scontrol show job`')}), longer than "
                f"{_words(self.max_pending)}: the queue, not the run, is stuck",
                key="slurm-pending"))
        return tuple(found)

    def _waited(self, view: JobView) -> float:
        since_submit = _seconds_since(view.submitted)
        watched = time.monotonic() - self._first_seen
        return max(since_submit or 0.0, watched)

    # --- the job's files -------------------------------------------------------------------

    def _read_logs(self, view: JobView, final: bool) -> Snapshot:
        paths = [p for p in dict.fromkeys((view.stdout, view.stderr)) if p]
        snapshot: Snapshot | None = None
        for path in paths:
            log = self._logs.get(path)
            if log is None:
                log = self._try_open(path, view)
                if log is None:
                    continue
                self._logs[path] = log
            part = log.poll(final)
            snapshot = part if snapshot is None else _merge(snapshot, part)
        return snapshot or Snapshot()

    def _try_open(self, path: str, view: JobView) -> Target | None:
        try:
            return self._open_log(path)
        except TargetError as error:
            if view.base not in WAITING and path not in self._missing_noted:
                self._missing_noted.add(path)
                self._notices.append(f"the job's output {path} cannot be read yet ({error}); "
                                     f"trying again at every poll")
            return None

    # --- for people ------------------------------------------------------------------------

    def _state_line(self, view: JobView, name: str) -> str:
        if name == "PENDING":
            means = PENDING_MEANS.get(view.reason) or NEVER_STARTS.get(view.reason, "")
            line = f"State: PENDING ({view.reason}" + (f": {means}" if means else "") + ")"
            return line + f" | Waiting: {_words(self._waited(view))}"
        line = f"State: {view.state}"
        if name == "RUNNING" or name not in TERMINAL:
            if view.run_time:
                limit = f" of {view.time_limit}" if view.time_limit else ""
                line += f" | Elapsed: {view.run_time}{limit}"
                known = self._time_limit(view)
                if known is not None:
                    line += f" | Left: {_words(known.left_seconds)}"
        else:
            if view.run_time:
                line += f" | Duration: {view.run_time}"
            if view.exit_code:
                line += f" | ExitCode: {view.exit_code}"
            if view.reason and view.reason != "None":
                line += f" | Reason: {view.reason}"
        if view.nodes:
            line += f" | Nodes: {view.nodes}"
        gpu = gpus(view.tres)
        line += f" | GPUs: {gpu}" if gpu else ""
        return line

    def _status(self, view: JobView, name: str) -> tuple[str, ...]:
        head = f"Slurm job: {self.job_id}" + (f" ({view.name})" if view.name else "")
        if view.partition:
            head += f" | Partition: {view.partition}"
        if view.user:
            head += f" | User: {view.user}"
        lines = [head, self._state_line(view, name)]
        if view.restarts:
            lines.append(f"Attempt: {view.restarts + 1} (requeued {view.restarts}x)")
        if view.stdout:
            lines.append(f"Output: {view.stdout}" + (
                f" (errors: {view.stderr})" if view.stderr and view.stderr != view.stdout
                else ""))
        return tuple(lines)

    def _headline(self, view: JobView, name: str) -> str:
        line = self._state_line(view, name)
        return line + (f" | Attempt {view.restarts + 1}" if view.restarts else "")

    def _command(self, *argv: str) -> str:
        if self.login is None:
            return shlex.join(argv)
        return shlex.join(["ssh", self.login, shlex.join(argv)])

    def _commands(self, view: JobView, run_state: TerminalState | None) -> tuple[str, ...]:
        commands = [self._command("scontrol", "show", "job", self.job_id),
                    self._command("sacct", "-j", self.job_id,
                                  "--format=JobID,State,ExitCode,Reason,Elapsed,MaxRSS")]
        if view.stdout and view.stdout.isprintable():  # scontrol's text: no controls
            commands.append(self._command("tail", "-n", "80", "--", view.stdout))
        if run_state in (None, TerminalState.FAILED):
            # Starts the job again from its script (a hung or node-failed attempt).
            commands.append(self._command("scontrol", "requeue", self.job_id))
        return tuple(commands)

    def close(self) -> None:
        for log in self._logs.values():
            log.close()
        self._logs.clear()
        self.runner.close()


def _local_log(path: str) -> Target:
    from babysit.targets.common.log_file import LocalLogTarget

    if not os.path.exists(path):
        raise TargetError(f"log file not found: {path}")
    return LocalLogTarget(path)


def open_job(request: Request) -> Target:
    try:
        job_id = check_job_id(request.value)
    except KindUsageError as error:
        raise TargetError(str(error)) from error
    max_pending = float(request.option("max_pending", MAX_PENDING))
    login = request.option("ssh")
    if login is None:
        return SlurmJobTarget(job_id, LocalRunner(), _local_log, max_pending=max_pending)
    from babysit.targets.slurm.remote import connect

    runner, open_log = connect(str(login), bool(request.option("ssh_accept_new")))
    try:
        return SlurmJobTarget(job_id, runner, open_log, max_pending=max_pending,
                              login=str(login))
    except BaseException:
        runner.close()
        raise
