"""`babysit schedule`: the text of a crontab line or a systemd user timer that runs a
babysit check periodically. It only prints; installing is the user's decision."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Sequence

from babysit import lazy_re
from babysit.invocation import running_babysit


class ScheduleError(ValueError):
    pass


def cron_fields(seconds: float) -> str:
    """The five cron time fields for "every `seconds`", when cron can say it exactly."""
    if seconds % 60 or seconds < 60:
        raise ScheduleError("cron counts whole minutes: use an interval of at least 1m, in "
                            "whole minutes (or --systemd)")
    minutes = int(seconds // 60)
    if minutes < 60 and 60 % minutes == 0:
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    if minutes % 60 == 0:
        hours = minutes // 60
        if hours < 24 and 24 % hours == 0:
            return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"
        if hours == 24:
            return "0 0 * * *"
    raise ScheduleError(f"cron cannot run exactly every {minutes} minutes (it needs a divisor "
                        f"of an hour or a day): use --systemd, which can")


# Control characters (a newline adds a crontab line or a systemd directive), C1 too.
_CONTROL = lazy_re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def check_text(value: str, what: str) -> str:
    """`value` without control characters. Raises ScheduleError."""
    if _CONTROL.search(value):
        raise ScheduleError(f"{what} {value!r} holds a control character (a newline would "
                            f"add a line to the schedule): refused")
    return value


def _absolute_command(command: Sequence[str]) -> list[str]:
    """cron and systemd run with a bare PATH: name the program by its full path. For
    `babysit`, that is the babysit running now (started by its full path or as
    `python -m babysit`, it may be on no PATH at all). Raises ScheduleError for an empty
    command or one with control characters."""
    argv = list(command)
    if not argv:
        raise ScheduleError("no command: give it after --, e.g. -- babysit ./train.log --once")
    for arg in argv:
        check_text(arg, "the argument")
    if argv[:1] == ["babysit"]:
        return [*running_babysit(absolute=True), *argv[1:]]
    found = shutil.which(argv[0])
    if found:
        argv[0] = os.path.abspath(found)
    return argv


def crontab_line(seconds: float, command: Sequence[str], cwd: str, log: str) -> str:
    """One crontab line; every part quoted for sh, `%` escaped for cron. Raises
    ScheduleError (a part with a control character is refused, never escaped)."""
    argv = _absolute_command(command)
    check_text(cwd, "the working directory")
    check_text(log, "--log")
    shell = (f"cd {shlex.quote(cwd)} && {shlex.join(argv)} >> {shlex.quote(log)} 2>&1")
    # In a crontab, an unescaped % ends the command and starts its stdin.
    return f"{cron_fields(seconds)} {shell.replace('%', chr(92) + '%')}"


def _systemd_quote(arg: str) -> str:
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    escaped = escaped.replace("$", "$$")
    return f'"{escaped}"'


def _systemd_path(path: str) -> str:
    """A path for a systemd setting that takes one unquoted: `%` is a specifier (so
    doubled); a backslash could continue the line, so it is refused. Raises
    ScheduleError."""
    if "\\" in path:
        raise ScheduleError(f"the working directory {path!r} holds a backslash, which a "
                            f"systemd unit cannot carry unquoted: run from another folder")
    return path.replace("%", "%%")


def systemd_units(seconds: float, command: Sequence[str], cwd: str,
                  name: str) -> dict[str, str]:
    """A oneshot service and the timer that starts it every `seconds`."""
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ScheduleError(f"--name {name!r}: use letters, digits, '.', '_' or '-'")
    argv = _absolute_command(command)
    check_text(cwd, "the working directory")
    service = (
        "[Unit]\n"
        f"Description=babysit check ({name})\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={_systemd_path(cwd)}\n"
        f"ExecStart={' '.join(_systemd_quote(a) for a in argv)}\n"
        # babysit's exit codes carry the verdict (1 NO-GO, 3 CONDITIONAL): not failures.
        "SuccessExitStatus=1 3\n"
    )
    timer = (
        "[Unit]\n"
        f"Description=Run the babysit check ({name}) every {int(seconds)}s\n\n"
        "[Timer]\n"
        f"OnActiveSec={int(seconds)}s\n"
        f"OnUnitActiveSec={int(seconds)}s\n"
        "AccuracySec=1s\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    return {f"babysit-{name}.service": service, f"babysit-{name}.timer": timer}
