"""The command line: parse flags, build settings, run a session, return an exit code.

`babysit TARGET [options]` watches a target; `babysit demo` is a subcommand. A file
named like a subcommand is reached as `./demo`. Nothing here decides anything."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from babysit import __version__
from babysit.exit_codes import HELP as _EXIT_CODES
from babysit.exit_codes import ExitCode

if TYPE_CHECKING:  # the core is imported by each command, not at start-up
    from babysit.core.reports import Observer

_SUBCOMMANDS = ("watch", "demo", "serve", "schedule", "trace", "agent")


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
    epilog="Every option of a watch (polling, fixes, output, targets): babysit watch -h\n\n"
           + _EXIT_CODES,
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


def _watch_options(
    target: Annotated[list[str] | None, typer.Argument(
        help="What to watch: a training log (./logs/train.log), a TensorBoard log dir "
             "(./runs/exp1), several rank logs of one run (or a quoted glob), or "
             "user@host:/path; with --pid/--proc, the run's log when babysit should not "
             "look for it.", show_default=False,
        metavar="TARGET")] = None,
    interval: Annotated[float | None, typer.Option(
        help="Initial poll interval in seconds (default: 30; 60 for Vertex AI).",
        show_default=False, metavar="SECONDS", rich_help_panel="Polling")] = None,
    max_interval: Annotated[float | None, typer.Option(
        help="Cap for the backoff in seconds (default: 300).", show_default=False,
        metavar="SECONDS", rich_help_panel="Polling")] = None,
    no_backoff: Annotated[bool, typer.Option(
        "--no-backoff", help="Poll at a fixed --interval.", rich_help_panel="Polling")] = False,
    once: Annotated[bool, typer.Option(
        "--once", help="Take one snapshot, print the verdict, exit.",
        rich_help_panel="Polling")] = False,
    max_polls: Annotated[int | None, typer.Option(
        help="Stop after this many polls (the baseline counts as one).",
        show_default=False, metavar="N", rich_help_panel="Polling")] = None,
    timeout: Annotated[str | None, typer.Option(
        "--timeout", help="Stop after this long (90s, 9m, 2h) with a snapshot of the run "
                          "as it is (exit 3 while it is still going): for agents whose "
                          "shell tool has a time limit.", show_default=False,
        metavar="DURATION", rich_help_panel="Polling")] = None,
    schedule: Annotated[str | None, typer.Option(
        "--schedule", help="Fixed cadence while healthy, e.g. 10m,20m,30m,60m (back to the "
                           "first after an anomaly).", show_default=False, metavar="LIST",
        rich_help_panel="Polling")] = None,
    no_fix: Annotated[bool, typer.Option(
        "--no-fix", help="Observe only: never act on the run.",
        rich_help_panel="Fixes and judgement")] = False,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Reviewer command for ambiguous signals: gets a JSON packet on "
                        "stdin, answers STOP, CONTINUE or WAIT (run without a shell).",
        show_default=False, metavar="CMD", rich_help_panel="Fixes and judgement")] = None,
    judge_timeout: Annotated[float, typer.Option(
        help="Seconds the reviewer may take (default: 60).", show_default=False,
        metavar="SECONDS", rich_help_panel="Fixes and judgement")] = 60.0,
    total_steps: Annotated[int | None, typer.Option(
        help="Planned total steps, when the log never says.", show_default=False,
        metavar="N", min=1, max=10**15, rich_help_panel="Fixes and judgement")] = None,
    gpu: Annotated[str | None, typer.Option(
        "--gpu", help="GPU type for MFU: a100, h100-sxm, h100-pcie, h200, b200, l4, a10, "
                      "v100, t4.", show_default=False, metavar="NAME",
        rich_help_panel="Efficiency (MFU)")] = None,
    gpus: Annotated[int | None, typer.Option(
        "--gpus", help="How many GPUs the run uses (all ranks).", show_default=False,
        metavar="N", rich_help_panel="Efficiency (MFU)")] = None,
    precision: Annotated[str | None, typer.Option(
        "--precision", help="fp32, tf32, bf16, fp16 or fp8: which peak applies (default: "
                            "bf16).", show_default=False, metavar="P",
        rich_help_panel="Efficiency (MFU)")] = None,
    peak_tflops: Annotated[float | None, typer.Option(
        "--peak-tflops", help="Dense peak per GPU, instead of the built-in table.",
        show_default=False, metavar="TFLOPS", rich_help_panel="Efficiency (MFU)")] = None,
    flops_per_token: Annotated[float | None, typer.Option(
        "--flops-per-token", help="Useful training FLOPs per token (else estimated from "
                                  "the parameter count).", show_default=False, metavar="F",
        rich_help_panel="Efficiency (MFU)")] = None,
    model_params: Annotated[float | None, typer.Option(
        "--model-params", help="Parameter count, e.g. 124e6 (when the log does not say).",
        show_default=False, metavar="N", rich_help_panel="Efficiency (MFU)")] = None,
    layers: Annotated[int | None, typer.Option(
        "--layers", help="Transformer layers (with --width and --seq-len: attention FLOPs "
                         "are counted).", show_default=False, metavar="L",
        rich_help_panel="Efficiency (MFU)")] = None,
    width: Annotated[int | None, typer.Option(
        "--width", help="Model width (hidden size).", show_default=False, metavar="D",
        rich_help_panel="Efficiency (MFU)")] = None,
    seq_len: Annotated[int | None, typer.Option(
        "--seq-len", help="Tokens per sequence.", show_default=False, metavar="T",
        rich_help_panel="Efficiency (MFU)")] = None,
    tokens_per_step: Annotated[float | None, typer.Option(
        "--tokens-per-step", help="Tokens per optimizer step, all ranks (when the log does "
                                  "not say).", show_default=False, metavar="N",
        rich_help_panel="Efficiency (MFU)")] = None,
    out_dir: Annotated[Path, typer.Option(
        help="Where babysit-training.json is written (default: the current directory).",
        show_default=False, metavar="DIR", rich_help_panel="Output")] = Path("."),
    run_id: Annotated[str | None, typer.Option(
        help="Run id for the artifact (default: a new UUID).", show_default=False,
        metavar="ID", rich_help_panel="Output")] = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="JSON lines on stdout for agents; no human text there.",
        rich_help_panel="Output")] = False,
    serve: Annotated[bool, typer.Option(
        "--serve", help="Also serve a live dashboard and /api/metrics on 127.0.0.1 (port "
                        "--serve-port, or the next free one).", rich_help_panel="Output")] = False,
    serve_port: Annotated[int, typer.Option(
        "--serve-port", help="Port of the dashboard (default: 8765).", show_default=False,
        metavar="PORT", min=0, max=65535, rich_help_panel="Output")] = 8765,
    serve_linger: Annotated[float | None, typer.Option(
        "--serve-linger", help="Keep the dashboard up this many seconds after the verdict "
                               "(default: until Ctrl-C at a terminal, else not at all).",
        show_default=False, metavar="SECONDS", rich_help_panel="Output")] = None,
    until_event: Annotated[bool, typer.Option(
        "--until-event", help="Print nothing until something needs attention (an anomaly, "
                              "a proposal to approve, the end of the run), then the verdict "
                              "and exit.", rich_help_panel="Output")] = False,
    notify: Annotated[list[str] | None, typer.Option(
        "--notify", help="Send anomalies, approvals and the verdict to this apprise URL "
                         "(repeatable; e.g. slack://…, mailto://…, json://host/path).",
        show_default=False, metavar="URL", rich_help_panel="Output")] = None,
    notify_severity: Annotated[str | None, typer.Option(
        help="Least severe anomaly to notify about: blocker, high, medium, low (default: "
             "high).", show_default=False, metavar="LEVEL", rich_help_panel="Output")] = None,
) -> None:
    """The options every kind of target shares (the kinds add their own)."""


def _watch_command() -> Callable[..., None]:
    """The `watch` command: the shared options above, plus each registered kind's flag
    and options, so adding a kind adds its flags here without an edit."""
    import inspect
    from typing import Optional, get_type_hints

    from babysit.targets.kinds import option_dest
    from babysit.targets.registry import KINDS, all_options

    hints = get_type_hints(_watch_options, include_extras=True)
    params = [p.replace(annotation=hints[p.name])
              for p in inspect.signature(_watch_options).parameters.values()]
    for kind in KINDS:
        if kind.flag is None:
            continue
        option = typer.Option(kind.flag, metavar=kind.metavar, show_default=False,
                              help=f"{kind.help} E.g. {kind.example}",
                              rich_help_panel=kind.panel)
        params.append(inspect.Parameter(
            option_dest(kind.flag), inspect.Parameter.KEYWORD_ONLY, default=None,
            annotation=Annotated[Optional[kind.value_type], option]))  # noqa: UP045
    for flag, kind_option in all_options().items():
        panels = {k.panel for k in KINDS if kind_option in k.options}
        panel = panels.pop() if len(panels) == 1 else "Target options"
        if kind_option.type is bool:
            annotation: Any = Annotated[bool, typer.Option(flag, help=kind_option.help,
                                                           rich_help_panel=panel)]
            default: Any = False
        else:
            names = [flag, kind_option.short] if kind_option.short else [flag]
            annotation = Annotated[Optional[kind_option.type], typer.Option(  # noqa: UP045
                *names, help=kind_option.help, metavar=kind_option.metavar,
                show_default=False, rich_help_panel=panel)]
            default = None
        params.append(inspect.Parameter(kind_option.dest, inspect.Parameter.KEYWORD_ONLY,
                                        default=default, annotation=annotation))

    def watch(**values: Any) -> None:
        _watch(values)

    watch.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    watch.__annotations__ = {p.name: p.annotation for p in params}
    watch.__doc__ = "Watch TARGET until the run ends (the default command)."
    return watch


def _watch(values: dict[str, Any]) -> None:
    from babysit.config import ConfigError, load_settings
    from babysit.core.session import run_session
    from babysit.invocation import running_babysit
    from babysit.targets.kinds import KindUsageError
    from babysit.targets.registry import kind_named, rewatch_args, select
    from babysit.watch_request import RequestError, WatchRequest

    try:
        asked = WatchRequest.from_flags(values)
    except RequestError as error:
        raise _BadValue(str(error), param_hint=error.flag) from error
    try:
        request = select(asked.kind_values, asked.target)
        kind = kind_named(request.kind)
    except KindUsageError as error:
        raise _BadValue(str(error), param_hint="TARGET") from error
    if kind.prepare is not None:
        try:
            request = kind.prepare(request, _chooser(asked.json_output))
        except KindUsageError as error:
            # About what was found (several processes match), not about how TARGET was
            # typed: one plain line, the usage exit code, no pointer to -h.
            _echo(f"babysit: error: {error}", err=True)
            raise typer.Exit(ExitCode.USAGE) from None
    try:
        settings = load_settings(Path.cwd(), poll=asked.poll_overrides(),
                                 notify=asked.notify_overrides(),
                                 efficiency=asked.efficiency_overrides(),
                                 serve=asked.serve or None, defaults=kind.defaults,
                                 fix=not asked.no_fix, out_dir=asked.out_dir,
                                 run_id=asked.run_id, target_steps=asked.total_steps,
                                 json=asked.json_output)
    except ConfigError as error:
        # A flag's own value (`--interval: must be …`) is named as the flag; a setting
        # from babysit.toml as the config's.
        flag, _, why = str(error).partition(": ")
        if flag.startswith("--") and " " not in flag and why:
            raise _BadValue(why, param_hint=flag) from error
        raise _BadValue(str(error), param_hint="babysit config") from error
    from babysit.model import Severity

    if settings.run_id is not None and not (settings.run_id.isprintable()
                                            and 0 < len(settings.run_id) <= _MAX_RUN_ID):
        # It names the run in the artifact, the dashboard and notifications: one line.
        raise _BadValue(f"a run id is one printable line of at most {_MAX_RUN_ID} "
                        "characters", param_hint="--run-id")
    if settings.notify.severity.lower() not in {level.value for level in Severity}:
        # Checked whether or not --notify is given: a typo must not wait for the day a URL
        # is added to be found.
        raise _BadValue(f"{settings.notify.severity!r}: choose blocker, high, medium or low",
                        param_hint="--notify-severity")
    if settings.poll.max_interval < settings.poll.interval:
        raise _BadValue(
            f"{settings.poll.max_interval:g}s is shorter than --interval "
            f"({settings.poll.interval:g}s)", param_hint="--max-interval")
    _check_out_dir(asked.out_dir)
    reviewer = _reviewer(asked.judge, asked.judge_timeout)
    prefix = kind.prefix(request) if kind.prefix is not None else ""
    observer = _observer(asked.json_output, prefix=prefix, until_event=asked.until_event,
                         notify=settings.notify)
    dashboard = None
    if asked.serve:
        observer, dashboard = _serving(observer, request.value, kind.name, settings,
                                       asked.serve_port)
    approver = None
    if not asked.json_output:
        from babysit.ui.prompt import ConsoleApprover, interactive

        approver = ConsoleApprover() if interactive() else None
    rewatch = [*running_babysit(),
               *rewatch_args(request, [*asked.mode_args(), f"--out-dir={asked.out_dir}"])]
    kept = False  # a verdict reached (not an interruption): the page keeps it a while
    try:
        def open_target() -> Any:
            # The wait is part of the session: a SIGTERM or Ctrl-C during it ends the
            # session the way it ends a watch, with a verdict file.
            if kind.awaits is not None and not settings.poll.once:
                _wait_to_appear(kind.awaits, request, settings.poll.wait_for_log,
                                asked.json_output)
            return kind.open(request)

        from babysit.ui.streams import pipe_reader_watch

        result = run_session(open_target, request.value, kind.name, settings,
                             observer, rewatch=rewatch, approver=approver, reviewer=reviewer,
                             output_gone=pipe_reader_watch())
        kept = result.exit_code != ExitCode.INTERRUPTED
        if dashboard is not None and kept:  # not after Ctrl-C
            _linger(dashboard, asked.serve_linger, result.verdict.decision.value)
    finally:
        if dashboard is not None:
            from babysit.serve import registry

            dashboard.stop()
            registry.withdraw(keep=kept)
    _report_problems(result.exit_code, result.verdict.stop_reason, result.artifact_error,
                     asked.json_output)
    raise typer.Exit(int(result.exit_code))


def _wait_to_appear(awaits: Callable[[Any], str | None], request: Any, limit: float,
                    json_output: bool) -> None:
    """Like `tail -F`: babysit may be started before the training creates its log."""
    import time

    missing = awaits(request)
    if missing is None or limit <= 0:
        return
    from babysit.units import format_duration

    until = time.strftime("%H:%M", time.localtime(time.time() + limit))
    _echo(f"babysit: waiting for {missing} to appear (up to {format_duration(limit)}, "
          f"until {until}; Ctrl-C to stop)", err=True)
    deadline = time.monotonic() + limit
    while awaits(request) is not None:
        if time.monotonic() >= deadline:
            _echo(f"babysit: {missing} did not appear within {format_duration(limit)}",
                  err=True)
            return
        time.sleep(0.25)
    if not json_output:
        _echo(f"babysit: {missing} appeared", err=True)


def _linger(dashboard: Any, seconds: float | None, decision: str) -> None:
    """The page of a finished watch stays up for a person to read; the exit code is the
    verdict's all the same."""
    import time

    from babysit.ui.prompt import interactive

    if seconds is None:
        seconds = float("inf") if interactive() else 0.0
    if seconds <= 0:
        return
    _echo(f"babysit: the watch ended ({decision}); the dashboard stays up at "
          f"{dashboard.url}" + (" until Ctrl-C" if seconds == float("inf") else
                                f" for {seconds:g}s"), err=True)
    import contextlib

    with contextlib.suppress(KeyboardInterrupt):
        time.sleep(seconds if seconds != float("inf") else 10 ** 9)


def _serving(observer: Observer, target: str, kind: str, settings: Any,
             port: int) -> tuple[Observer, Any]:
    """The watch's own dashboard on loopback, and the observer that feeds it."""
    import uuid

    from babysit.sanitise import outbound
    from babysit.serve.board import RunBoard
    from babysit.serve.observer import BoardObserver
    from babysit.serve.server import Dashboard, ServeError

    # The board's own label is shown on the page and written to the session file: it
    # takes the outbound pass like every other way out.
    board = RunBoard(outbound(target), kind, settings.run_id or str(uuid.uuid4()))
    token = _own_token()
    try:
        dashboard = _first_free(lambda at: Dashboard(lambda: [board.entry()], "127.0.0.1",
                                                     at, token), port)
    except ServeError as error:
        raise _BadValue(str(error), param_hint="--serve-port") from None
    # babysit's own address and the token it made: printed as they are (the scrubber
    # would mask the token the user needs).
    typer.echo(f"babysit: dashboard at {dashboard.url}?token={token} (/api/metrics for "
               f"agents, with that token)", err=True)
    return BoardObserver(observer, board), dashboard


def _first_free(make: Callable[[int], Any], port: int) -> Any:
    """A dashboard started on `port` or, when that one is taken (another watch's
    `--serve`, the all-sessions page), the next free of the nine after it; port 0 is any
    free one. Raises the last ServeError when none is free."""
    from babysit.serve.server import ServeError

    error: ServeError | None = None
    for candidate in range(port, min(port + 10, 65536)) if port else [0]:
        try:
            return make(candidate).start()
        except ServeError as failed:
            error = failed
    assert error is not None
    raise error


def _own_token() -> str:
    """This user's dashboard token from the runtime directory (agents read it there); a
    fresh one for this watch alone when that directory cannot be trusted."""
    import secrets

    from babysit.safe_files import UnsafeFile
    from babysit.serve import registry
    from babysit.serve.tokens import own_token

    try:
        return own_token(registry.runtime_dir())
    except UnsafeFile:
        return secrets.token_urlsafe(32)


def _chooser(json_output: bool) -> Callable[[Sequence[str]], int | None]:
    def choose(rows: Sequence[str]) -> int | None:
        from babysit.ui.prompt import choose_process, interactive

        if json_output or not interactive():
            return None
        return choose_process(rows)

    return choose


@app.command("demo", help="Watch a built-in synthetic training run that goes bad (~8 s).")
def demo(
    out_dir: Annotated[Path, typer.Option(
        help="Where the demo's files go: the run's log and babysit-training.json.",
        metavar="DIR")] = Path("babysit-demo"),
    json_output: Annotated[bool, typer.Option("--json", help="JSON lines for agents.")] = False,
) -> None:
    from babysit.demo.run import run_demo

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _BadValue(f"cannot create {out_dir}: {error.strerror or error}",
                        param_hint="--out-dir") from error
    _check_out_dir(out_dir)
    observer = _observer(json_output)
    say = (lambda text: typer.echo(text, err=True)) if json_output else typer.echo
    code = run_demo(out_dir, observer, say)
    raise typer.Exit(code)


@app.command("serve", help="A dashboard over every babysit session running on this "
                           "machine with --serve (and /api/metrics for agents).")
def serve_command(
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs "
                                           "--token-file.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port, or the next free one after it when it is "
                                           "taken (0: any free one).", min=0,
                                      max=65535)] = 8765,
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", help="A file of yours, mode 600, holding the token clients must "
                             "send (Authorization: Bearer, or #token= for the page); "
                             "default: the runtime directory's own token.",
        show_default=False, metavar="FILE")] = None,
) -> None:
    import time

    from babysit.safe_files import UnsafeFile
    from babysit.serve import registry
    from babysit.serve.server import Dashboard, ServeError, is_loopback
    from babysit.serve.tokens import own_token, read_token_file

    try:
        directory = registry.runtime_dir()
    except UnsafeFile as error:
        raise typer.BadParameter(str(error), param_hint="BABYSIT_RUNTIME_DIR") from None
    try:
        if token_file is not None:
            token: str | None = read_token_file(token_file)
        else:  # off loopback the user chooses the token (Dashboard refuses without one)
            token = own_token(directory) if is_loopback(host) else None
    except UnsafeFile as error:
        raise typer.BadParameter(str(error), param_hint="--token-file") from None
    try:
        dashboard = _first_free(lambda at: Dashboard(lambda: registry.collect(directory),
                                                     host, at, token), port)
    except ServeError as error:
        raise _BadValue(str(error), param_hint="--host/--port") from None
    shown = f"{dashboard.url}?token={token}" if token_file is None else dashboard.url
    from babysit.sanitise import outbound

    typer.echo(f"babysit: dashboard at {shown} over the sessions in {outbound(str(directory))} "
               f"(Ctrl-C to stop)", err=True)
    try:
        while True:
            time.sleep(3600)
    finally:  # Ctrl-C: the interruption itself is answered where every exit is (entry.py)
        dashboard.stop()


def _reviewer(judge: str | None, timeout: float) -> Any:
    if judge is None:
        return None
    import shlex

    from babysit.core.reviewer import Reviewer

    try:
        argv = shlex.split(judge)
    except ValueError as error:
        raise _BadValue(str(error), param_hint="--judge") from error
    if not argv:
        raise _BadValue("is empty", param_hint="--judge")
    return Reviewer(argv, timeout)


agent_app = typer.Typer(help="Set babysit up for a coding agent.", add_completion=False)
app.add_typer(agent_app, name="agent")
app.command("watch", help="Watch TARGET until the run ends (the default command).",
            epilog=_EXIT_CODES)(
    _watch_command())


@agent_app.command("install", help="Write babysit's slash command and skill where the agent "
                                   "looks (.claude/ for Claude Code, ~/.codex/ for Codex).")
def agent_install(
    agent: Annotated[str, typer.Option("--for", help="claude or codex")] = "claude",
    scope: Annotated[str | None, typer.Option(
        help="project (this directory) or user (home) (default: project for Claude Code, "
             "user for Codex, which reads only ~/.codex).", show_default=False)] = None,
    print_only: Annotated[bool, typer.Option("--print", help="Print the files; write none.")
    ] = False,
    force: Annotated[bool, typer.Option(help="Replace files you changed.")] = False,
) -> None:
    from babysit.agent.install import InstallError, install, plan, user_home

    if scope is None:
        scope = "user" if agent == "codex" else "project"
    if scope not in ("project", "user"):
        raise _BadValue("project or user", param_hint="--scope")
    try:
        home = user_home() if scope == "user" else Path.home()
        files = plan(agent, scope, Path.cwd(), home)
    except InstallError as error:
        raise _BadValue(str(error), param_hint="--for/--scope") from error
    if print_only:
        for item in files:
            _echo(f"# {item.path}")
            typer.echo(item.text)  # babysit's own text
        return
    kept = False
    try:
        outcomes = install(files, Path.cwd() if scope == "project" else home, force=force)
    except InstallError as error:
        raise _BadValue(str(error), param_hint="agent install") from error
    for outcome in outcomes:
        _echo(f"{outcome.status}: {outcome.path}")
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
    except ScheduleError as error:
        raise _BadValue(str(error), param_hint="schedule") from error
    except ValueError as error:
        raise _BadValue(str(error), param_hint="--every") from error


@app.command("trace", help="Summarize a PyTorch profiler trace (export_chrome_trace JSON, "
                            "gzipped or not): where a training step's time goes.")
def trace_command(
    trace: Annotated[Path, typer.Argument(
        help="The Chrome trace: trace.json or trace.json.gz.", metavar="TRACE",
        show_default=False)],
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the summary as one JSON object instead of text.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", help="Also write the JSON summary to FILE (atomically).",
        metavar="FILE", show_default=False)] = None,
    top: Annotated[int, typer.Option(
        "--top", min=1, help="How many device events and host ranges to list.")] = 10,
) -> None:
    import json

    from babysit.efficiency.trace import summarize_file
    from babysit.efficiency.trace_load import TraceError
    from babysit.efficiency.trace_report import render_lines, summary_to_dict, write_json
    from babysit.sanitise import outbound_value

    try:
        summary = summarize_file(trace, top=top)
    except TraceError as error:  # exit 4, as for any target babysit cannot read
        _echo(f"babysit: error: {error}", err=True)
        raise typer.Exit(ExitCode.UNREACHABLE) from None
    data = outbound_value(summary_to_dict(summary, str(trace)))  # event names come from outside
    if output is not None:
        from babysit.safe_files import UnsafeFile, check_replaceable

        try:
            check_replaceable(output)
        except UnsafeFile as error:
            raise typer.BadParameter(str(error), param_hint="--output") from None
        try:
            write_json(data, output)
        except OSError as error:
            raise _BadValue(f"{output}: cannot write it ({error.strerror or error})",
                            param_hint="--output") from error
    if json_output:
        # `data` took the outbound pass value by value; scrubbing the JSON text again
        # could unquote a value (`"token_count": 5` reads as a secret's name and value).
        typer.echo(json.dumps(data, ensure_ascii=False))
    else:
        for line in render_lines(summary, str(trace)):
            _echo(line)


def _observer(json_output: bool, prefix: str = "", until_event: bool = False,
              notify: Any = None) -> Observer:
    observer: Observer
    if json_output:
        from babysit.ui.jsonl import JsonObserver

        observer = JsonObserver(sys.stdout)
    else:
        from babysit.ui.console import ConsoleObserver

        observer = ConsoleObserver(prefix=prefix)
    if until_event:
        from babysit.ui.until_event import UntilEventObserver

        observer = UntilEventObserver(observer)
    if notify is not None and notify.urls:
        # Outermost: notifications go out even when --until-event keeps the screen quiet.
        observer = _notifying(observer, notify)
    return observer


def _notifying(observer: Observer, notify: Any) -> Observer:
    try:
        import apprise  # noqa: F401 - only to say clearly when the extra is missing
    except ImportError as error:
        raise _BadValue("notifications need the [notify] extra: pip install "
                        "'babysit[notify]'", param_hint="--notify") from error
    from babysit.ui.notify import NotifyingObserver, NotifyPolicy, parse_severity

    try:
        severity = parse_severity(notify.severity)
    except ValueError as error:
        raise _BadValue(str(error), param_hint="--notify-severity") from error
    policy = NotifyPolicy(tuple(notify.urls), severity, notify.repeat_seconds,
                          deadline_seconds=notify.deadline_seconds)
    return NotifyingObserver(observer, policy)


def _check_out_dir(out_dir: Path) -> None:
    """Find out now, not after hours of watching, that the verdict cannot be written."""
    from babysit.artifact import ARTIFACT_NAME, check_writable
    from babysit.safe_files import UnsafeFile, check_replaceable

    try:
        check_writable(out_dir)
    except OSError as error:
        raise _BadValue(f"{out_dir}: the verdict file cannot be written there "
                        f"({error.strerror or error})", param_hint="--out-dir") \
            from error
    try:  # a FIFO or a device where the verdict goes is someone's, not babysit's to replace
        check_replaceable(out_dir / ARTIFACT_NAME)
    except UnsafeFile as error:
        raise typer.BadParameter(str(error), param_hint="--out-dir") from None


_MAX_RUN_ID = 200


class _BadValue(typer.BadParameter):
    """A usage error (exit 2) whose message goes through the outbound pass: the values
    it quotes come from the user or from outside (a file name with a newline in it)."""

    def format_message(self) -> str:
        from babysit.sanitise import outbound

        return outbound(super().format_message())


def _echo(text: str, err: bool = False) -> None:
    """A line of the CLI's own that may carry outside text (a path, a name, an error):
    through the outbound pass (babysit.sanitise) like everything else that leaves."""
    from babysit.sanitise import outbound

    typer.echo(outbound(text), err=err)


def _report_problems(exit_code: int, stop_reason: str, artifact_error: str | None,
                     json_output: bool) -> None:
    # One line on stderr too when stdout is a file or JSON lines; at a terminal the
    # panel on stdout already said it, on the same screen.
    on_screen = not json_output and sys.stdout.isatty() and sys.stderr.isatty()
    if exit_code == ExitCode.UNREACHABLE and not on_screen:
        _echo(f"babysit: error: {stop_reason}", err=True)
    if artifact_error:
        _echo(f"babysit: error: {artifact_error}", err=True)


def main(argv: list[str] | None = None) -> int:
    """Runs the command line and returns its exit status. An interruption is not caught
    here: it goes up to `babysit.entry`, the one place that answers it."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:  # answered before the whole command line is built
        print(f"babysit {__version__}")
        return 0
    try:
        app(args=args, prog_name="babysit")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0
