"""The command line: parse flags, build settings, run a session, return an exit code.

`babysit TARGET [options]` watches a target; `babysit demo` is a subcommand. A file
named like a subcommand is reached as `./demo`. Nothing here decides anything."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from babysit import __version__

if TYPE_CHECKING:  # the core is imported by each command, not at start-up
    from babysit.reports import Observer
    from babysit.targets.base import Target

_SUBCOMMANDS = ("watch", "demo", "schedule", "agent")


class _TargetFirstGroup(TyperGroup):
    """Route `babysit ./train.log …` (anything that is not a subcommand) to `watch`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["watch", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name in _SUBCOMMANDS if name in self.commands]


app = typer.Typer(
    cls=_TargetFirstGroup,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Watch a running ML training job; say whether it is healthy, what went wrong, "
         "and whether its result can be trusted.\n\n"
         "Usage: babysit TARGET [OPTIONS]   (TARGET: a log file, e.g. ./logs/train.log)",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"babysit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Watch a running ML training job."""


@app.command("watch", help="Watch TARGET until the run ends (the default command).")
def watch(
    target: Annotated[str | None, typer.Argument(
        help="Training log to watch, e.g. ./logs/train.log (with --pid/--proc: the run's "
             "log, when babysit should not look for it)")] = None,
    pid: Annotated[int | None, typer.Option(
        "--pid", min=1, help="Watch this training process (and find its log).")] = None,
    proc: Annotated[str | None, typer.Option(
        "--proc", help="Watch the process whose name or command line contains this.")] = None,
    restart_cmd: Annotated[str | None, typer.Option(
        "--restart-cmd", help="Exact command to restart a crashed run (split like a shell "
                              "would, run without a shell).")] = None,
    interval: Annotated[float | None, typer.Option(
        min=0.1, help="Initial poll interval in seconds [default: 30].")] = None,
    max_interval: Annotated[float | None, typer.Option(
        min=0.1, help="Cap for the backoff in seconds [default: 300].")] = None,
    no_backoff: Annotated[bool, typer.Option(
        "--no-backoff", help="Poll at a fixed --interval.")] = False,
    once: Annotated[bool, typer.Option(
        "--once", help="Take one snapshot, print the verdict, exit.")] = False,
    no_fix: Annotated[bool, typer.Option(
        "--no-fix", help="Observe only: never act on the run.")] = False,
    out_dir: Annotated[Path, typer.Option(
        help="Where babysit-training.json is written.")] = Path("."),
    run_id: Annotated[str | None, typer.Option(
        help="Run id for the artifact [default: a new UUID].")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="JSON lines on stdout for agents; no human text there.")] = False,
    total_steps: Annotated[int | None, typer.Option(
        min=1, help="Planned total steps, when the log never says.")] = None,
    max_polls: Annotated[int | None, typer.Option(
        min=1, help="Stop after this many polls (the baseline counts as one).")] = None,
    mlflow: Annotated[str | None, typer.Option(
        "--mlflow", help="Watch this MLflow run (its run id).")] = None,
    tracking_uri: Annotated[str | None, typer.Option(
        "--tracking-uri", help="MLflow tracking server [default: $MLFLOW_TRACKING_URI].")] = None,
    wandb: Annotated[str | None, typer.Option(
        "--wandb", help="Watch this W&B run: entity/project/run_id, its URL, or a local run "
                        "directory (wandb/latest-run).")] = None,
    fallback_log: Annotated[str | None, typer.Option(
        "--fallback-log", help="With --mlflow/--wandb: the run's log (local or "
                               "user@host:/path), read while the tracker is unreachable.")
    ] = None,
    until_event: Annotated[bool, typer.Option(
        "--until-event", help="Print nothing until something needs attention (an anomaly, "
                              "a proposal to approve, the end of the run), then the verdict "
                              "and exit.")] = False,
    schedule: Annotated[str | None, typer.Option(
        "--schedule", help="Fixed cadence while healthy, e.g. 10m,20m,30m,60m (back to the "
                           "first after an anomaly).")] = None,
    notify: Annotated[list[str] | None, typer.Option(
        "--notify", help="Send anomalies, approvals and the verdict to this apprise URL "
                         "(repeatable; e.g. slack://…, mailto://…, json://host/path).")
    ] = None,
    notify_severity: Annotated[str | None, typer.Option(
        help="Least severe anomaly to notify about: blocker, high, medium, low [high].")
    ] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Reviewer command for ambiguous signals: gets a JSON packet on "
                        "stdin, answers STOP, CONTINUE or WAIT (run without a shell).")
    ] = None,
    judge_timeout: Annotated[float, typer.Option(
        min=1, help="Seconds the reviewer may take.")] = 60.0,
    ssh_accept_new: Annotated[bool, typer.Option(
        "--ssh-accept-new", help="Trust an unknown SSH host key on first use and record it "
                                 "(a changed key is still refused).")] = False,
) -> None:
    from babysit.config import ConfigError, load_settings
    from babysit.session import run_session
    from babysit.targets.registry import resolve_target

    trackers = [t for t in (mlflow, wandb) if t is not None]
    if trackers:
        if len(trackers) > 1 or target is not None or pid is not None or proc is not None:
            raise typer.BadParameter("watch one thing: a tracker run (--mlflow or --wandb), "
                                     "a log, or a process", param_hint="--mlflow/--wandb")
    elif fallback_log is not None or tracking_uri is not None:
        raise typer.BadParameter("only makes sense with --mlflow or --wandb",
                                 param_hint="--fallback-log/--tracking-uri")
    elif target is None and pid is None and proc is None:
        raise typer.BadParameter("give a log file, --pid N, --proc NAME, --mlflow RUN or "
                                 "--wandb RUN", param_hint="TARGET")
    if pid is not None and proc is not None:
        raise typer.BadParameter("give either --pid or --proc, not both", param_hint="--proc")
    restart_argv = _restart_argv(restart_cmd, pid, proc)
    cadence = None
    if schedule is not None:
        from babysit.durations import parse_schedule

        try:
            cadence = parse_schedule(schedule)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--schedule") from error
    poll = {"interval": cadence[0] if cadence else interval,
            "max_interval": max(cadence[-1], cadence[0]) if cadence else max_interval,
            "once": once or None, "max_polls": max_polls,
            "backoff": False if no_backoff else None, "schedule": cadence,
            "until_event": until_event or None}
    notify_options = {"urls": tuple(notify) if notify else None, "severity": notify_severity}
    try:
        settings = load_settings(Path.cwd(), poll=poll, notify=notify_options, fix=not no_fix,
                                 out_dir=out_dir, run_id=run_id, target_steps=total_steps,
                                 json=json_output)
    except ConfigError as error:
        raise typer.BadParameter(str(error), param_hint="babysit config") from error
    if settings.poll.max_interval < settings.poll.interval:
        raise typer.BadParameter(
            f"{settings.poll.max_interval:g}s is shorter than --interval "
            f"({settings.poll.interval:g}s)", param_hint="--max-interval")
    _check_out_dir(out_dir)
    reviewer = _reviewer(judge, judge_timeout)
    from babysit.targets.registry import looks_remote

    if trackers:
        _watch_tracker(settings, json_output, out_dir, mlflow=mlflow, tracking_uri=tracking_uri,
                       wandb=wandb, fallback_log=fallback_log, accept_new=ssh_accept_new,
                       reviewer=reviewer)
    remote = target is not None and looks_remote(target)
    if remote and restart_argv is not None:
        raise typer.BadParameter("babysit does not act on remote runs (the fix policy is "
                                 "for processes on this machine)", param_hint="--restart-cmd")
    observer = _observer(json_output, prefix=_remote_prefix(target) if remote else "",
                         until_event=until_event, notify=settings.notify,
                         log_path=target if target and not remote else None)
    if remote or (pid is None and proc is None):
        assert target is not None
        log_target = target
        ssh = _ssh_settings(ssh_accept_new) if remote else None
        factory: Callable[[], Target] = lambda: resolve_target(  # noqa: E731
            log_target, ssh, pid=pid, proc=proc)
        shown, kind = target, "remote-log" if remote else "local-log"
        rewatch = ["babysit", target, "--out-dir", str(out_dir)]
    else:
        factory, shown, kind = _process_factory(pid, proc, target, restart_argv, json_output)
        rewatch = ["babysit", *([f"--pid={pid}"] if pid else [f"--proc={proc}"]),
                   *([target] if target else []), "--out-dir", str(out_dir)]
    approver = None
    if not json_output:
        from babysit.ui.prompt import ConsoleApprover, interactive

        approver = ConsoleApprover() if interactive() else None
    try:
        result = run_session(factory, shown, kind, settings, observer, rewatch=rewatch,
                             approver=approver, reviewer=reviewer)
    except KeyboardInterrupt:
        typer.echo("babysit: interrupted", err=True)
        raise typer.Exit(130) from None
    _report_problems(result.exit_code, result.verdict.stop_reason, result.artifact_error)
    raise typer.Exit(int(result.exit_code))


@app.command("demo", help="Watch a built-in synthetic training run that goes bad (~20 s).")
def demo(
    out_dir: Annotated[Path, typer.Option(
        help="Where babysit-training.json is written.")] = Path("."),
    json_output: Annotated[bool, typer.Option("--json", help="JSON lines for agents.")] = False,
) -> None:
    from babysit.demo.run import run_demo

    _check_out_dir(out_dir)
    observer = _observer(json_output)
    say = (lambda text: typer.echo(text, err=True)) if json_output else typer.echo
    code = run_demo(out_dir, observer, say)
    raise typer.Exit(code)


def _reviewer(judge: str | None, timeout: float) -> Any:
    if judge is None:
        return None
    import shlex

    from babysit.judge import Reviewer

    try:
        argv = shlex.split(judge)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--judge") from error
    if not argv:
        raise typer.BadParameter("is empty", param_hint="--judge")
    return Reviewer(argv, timeout)


def _watch_tracker(settings: Any, json_output: bool, out_dir: Path, *, mlflow: str | None,
                   tracking_uri: str | None, wandb: str | None, fallback_log: str | None,
                   accept_new: bool, reviewer: Any) -> None:
    from babysit.session import run_session
    from babysit.targets.registry import looks_remote, resolve_tracker

    ssh = _ssh_settings(accept_new) if fallback_log and looks_remote(fallback_log) else None
    shown = mlflow if mlflow is not None else str(wandb)
    kind = "mlflow" if mlflow is not None else "wandb"
    rewatch = ["babysit", f"--{kind}", shown, *(["--tracking-uri", tracking_uri]
                                                if tracking_uri else []),
               "--out-dir", str(out_dir)]
    try:
        result = run_session(
            lambda: resolve_tracker(mlflow=mlflow, tracking_uri=tracking_uri, wandb=wandb,
                                    fallback_log=fallback_log, ssh=ssh),
            shown, kind, settings,
            _observer(json_output, until_event=settings.poll.until_event,
                      notify=settings.notify,
                      log_path=fallback_log if fallback_log and not ssh else None),
            rewatch=rewatch, reviewer=reviewer)
    except KeyboardInterrupt:
        typer.echo("babysit: interrupted", err=True)
        raise typer.Exit(130) from None
    _report_problems(result.exit_code, result.verdict.stop_reason, result.artifact_error)
    raise typer.Exit(int(result.exit_code))


def _restart_argv(restart_cmd: str | None, pid: int | None, proc: str | None) -> list[str] | None:
    if restart_cmd is None:
        return None
    if pid is None and proc is None:
        raise typer.BadParameter("only makes sense with --pid or --proc",
                                 param_hint="--restart-cmd")
    import shlex

    try:
        argv = shlex.split(restart_cmd)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--restart-cmd") from error
    if not argv:
        raise typer.BadParameter("is empty", param_hint="--restart-cmd")
    return argv


def _process_factory(pid: int | None, proc: str | None, log: str | None,
                     restart_argv: list[str] | None,
                     json_output: bool) -> tuple[Callable[[], Target], str, str]:
    """The target for --pid / --proc. Several unrelated matches for --proc: the user
    picks one at a terminal; otherwise it is a usage error listing them."""
    from babysit.targets.base import TargetError
    from babysit.targets.process import NamedProcessTarget, ProcessTarget

    if pid is not None:
        chosen = pid
        return (lambda: ProcessTarget(chosen, log=log, restart_cmd=restart_argv),
                str(pid), "pid")
    assert proc is not None
    from babysit.procs import describe_process, find_processes, topmost

    roots = topmost(find_processes(proc))
    if not roots:
        def missing() -> Target:
            raise TargetError(f"no running process matches {proc!r}")
        return missing, proc, "process"
    if len(roots) > 1:
        rows = [describe_process(p) for p in roots]
        from babysit.ui.prompt import choose_process, interactive

        if json_output or not interactive():
            listing = "\n  ".join(rows)
            raise typer.BadParameter(f"{len(roots)} unrelated processes match {proc!r}:\n  "
                                     f"{listing}\npick one with --pid", param_hint="--proc")
        roots = [roots[choose_process(rows)]]
    found = roots[0].pid
    return (lambda: NamedProcessTarget(found, name=proc, log=log, restart_cmd=restart_argv),
            proc, "process")


agent_app = typer.Typer(help="Set babysit up for a coding agent.", add_completion=False)
app.add_typer(agent_app, name="agent")


@agent_app.command("install", help="Write babysit's slash command and skill where the agent "
                                   "looks (.claude/ for Claude Code, ~/.codex/ for Codex).")
def agent_install(
    agent: Annotated[str, typer.Option("--for", help="claude or codex")] = "claude",
    scope: Annotated[str, typer.Option(help="project (this directory) or user (home).")
    ] = "project",
    print_only: Annotated[bool, typer.Option("--print", help="Print the files; write none.")
    ] = False,
    force: Annotated[bool, typer.Option(help="Replace files you changed.")] = False,
) -> None:
    from babysit.agent.install import InstallError, install, plan

    if scope not in ("project", "user"):
        raise typer.BadParameter("project or user", param_hint="--scope")
    try:
        files = plan(agent, scope, Path.cwd(), Path.home())
    except InstallError as error:
        raise typer.BadParameter(str(error), param_hint="--for/--scope") from error
    if print_only:
        for item in files:
            typer.echo(f"# {item.path}\n{item.text}")
        return
    kept = False
    for outcome in install(files, force=force):
        typer.echo(f"{outcome.status}: {outcome.path}")
        kept = kept or outcome.status.startswith("kept")
    if kept:
        raise typer.Exit(1)


@app.command("schedule", context_settings={"allow_extra_args": True,
                                          "ignore_unknown_options": True},
             help="Print a crontab line (or systemd user timer) that runs a babysit check "
                  "periodically: babysit schedule --every 10m -- babysit --wandb e/p/r --once "
                  "--json")
def schedule_command(
    command: Annotated[list[str], typer.Argument(help="The command to run, after --.")],
    every: Annotated[str, typer.Option("--every", help="How often: 10m, 1h, ...")] = "10m",
    systemd: Annotated[bool, typer.Option(
        "--systemd", help="Print a systemd user service + timer instead of a crontab line.")
    ] = False,
    name: Annotated[str, typer.Option(help="Name of the systemd units.")] = "check",
    log: Annotated[str, typer.Option(help="File the crontab line appends output to.")
    ] = "babysit-schedule.log",
) -> None:
    from babysit.durations import parse_duration
    from babysit.scheduling import ScheduleError, crontab_line, systemd_units

    try:
        seconds = parse_duration(every)
        cwd = str(Path.cwd())
        if systemd:
            units = systemd_units(seconds, command, cwd, name)
            for filename, text in units.items():
                typer.echo(f"# ~/.config/systemd/user/{filename}")
                typer.echo(text)
            timer = next(f for f in units if f.endswith(".timer"))
            typer.echo(f"# then: systemctl --user daemon-reload && systemctl --user enable "
                       f"--now {timer}")
        else:
            line = crontab_line(seconds, command, cwd, str(Path(log).absolute()))
            typer.echo("# add with `crontab -e` (babysit prints this; it installs nothing):")
            typer.echo(line)
    except (ValueError, ScheduleError) as error:
        raise typer.BadParameter(str(error), param_hint="--every") from error


def _observer(json_output: bool, prefix: str = "", until_event: bool = False,
              notify: Any = None, log_path: str | None = None) -> Observer:
    observer: Observer
    if json_output:
        from babysit.ui.jsonl import JsonObserver

        observer = JsonObserver(sys.stdout)
    else:
        from babysit.ui.console import ConsoleObserver

        observer = ConsoleObserver(prefix=prefix)
    if until_event:
        from babysit.reports import UntilEventObserver

        observer = UntilEventObserver(observer)
    if notify is not None and notify.urls:
        # Outermost: notifications go out even when --until-event keeps the screen quiet.
        observer = _notifying(observer, notify, log_path)
    return observer


def _notifying(observer: Observer, notify: Any, log_path: str | None) -> Observer:
    try:
        import apprise  # noqa: F401 - only to say clearly when the extra is missing
    except ImportError as error:
        raise typer.BadParameter("notifications need the [notify] extra: pip install "
                                 "'babysit[notify]'", param_hint="--notify") from error
    from babysit.notify import NotifyingObserver, NotifyPolicy, existing, parse_severity

    try:
        severity = parse_severity(notify.severity)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--notify-severity") from error
    policy = NotifyPolicy(tuple(notify.urls), severity, notify.repeat_seconds)
    return NotifyingObserver(observer, policy, log_path=existing(log_path))


def _remote_prefix(target: str | None) -> str:
    """`[user@host]`, as every line about a remote run starts."""
    from babysit.remote.address import AddressError, parse_remote

    try:
        return f"[{parse_remote(target or '').display()}]"
    except AddressError:
        return ""


def _ssh_settings(accept_new: bool) -> Any:
    from babysit.remote.connection import SshSettings

    return SshSettings(accept_new=accept_new)


def _check_out_dir(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise typer.BadParameter(f"{out_dir}: {error.strerror or error}",
                                 param_hint="--out-dir") from error


def _report_problems(exit_code: int, stop_reason: str, artifact_error: str | None) -> None:
    if exit_code == 4:
        typer.echo(f"babysit: error: {stop_reason}", err=True)
    if artifact_error:
        typer.echo(f"babysit: error: {artifact_error}", err=True)


def _terminate_like_ctrl_c(signum: int, frame: object) -> None:
    """SIGTERM (a scheduler, `kill`) ends the watch the way Ctrl-C does: with a verdict."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status instead of exiting."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:  # answered before the whole command line is built
        print(f"babysit {__version__}")
        return 0
    signal.signal(signal.SIGTERM, _terminate_like_ctrl_c)
    try:
        app(args=args, prog_name="babysit")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0
