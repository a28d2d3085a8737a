"""Following a failure across lines: a traceback from its header to the exception that
ends it, and whether it broke a checkpoint save.

A traceback's meaning arrives on its last line; a log may end before that line (the
process died mid-write, or a paste was cut), and that is a crash all the same. A save
is known to have failed when an exception follows a `Saving checkpoint …` line before
training moves on, or when the traceback runs through the code that writes checkpoints.

Tracebacks come in more shapes than Python's own:
- each line behind a logger's or a workflow tool's prefix (`2023-04-29 06:01:12.977
  [177/train/578 (pid 28936)] [uuid]   File "…"`), whose numbers change from line to
  line: the prefix is matched as a template (its digits masked), and what follows it
  keeps its indentation;
- headless: a paste or a console that kept only the frames (`File "x.py", line 3, in f`
  … `RuntimeError: …`), or a header a shell wrapped in its own record (PowerShell's
  `python.exe : Traceback (most recent call last):` then `At line:1 char:1`, its
  `+ CategoryInfo` lines, and only then the frames): a frame line opens one;
- a frame a narrow console wrapped (`  File "C:\\…\\Code\\` / `train.py", line 99, in
  <module>`);
- IPython's, whose header names the exception (`KeyboardInterrupt    Traceback (most
  recent call last)`): a cut one still says what ended the run.
"""

from __future__ import annotations

import re
from collections.abc import Set

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing import lua_tracebacks
from babysit.parsing.events import exception_line, raised_line
from babysit.parsing.foreign_failures import foreign_failure, panic_header, panic_with_message
from babysit.parsing.frame_sources import frame_source
from babysit.parsing.log_prefix import message
from babysit.parsing.said_failures import said_failure
from babysit.parsing.start_failures import StartFailures
from babysit.redact import clip

_MAX_TRACEBACK_LINES = 400
# Lines of a headless stack the log ends in (frames and their source lines) that make it
# a crash cut before its exception line, when it runs from the program's top level.
_CUT_STACK_LINES = 6
# Frames that write checkpoints (torch.save, safetensors, the trainers' save hooks).
# (or a frame inside a checkpointing library's own package: Orbax's `orbax/checkpoint/_src/
# …/async_checkpointer.py`, `torch/distributed/checkpoint/…`)
_SAVE_FRAME = lazy_re.compile(r"serialization\.py\", line \d+, in _?save|save_checkpoint|"
                              r"_save_checkpoint|checkpoint_hook|save_pretrained|safetensors|"
                              r"in save_model|in _save\b|"
                              # (any function that saves a checkpoint by its short name:
                              # OpenRLHF's `in save_ckpt`, under `save_logs_and_checkpoints`,
                              # its rotation's `shutil.rmtree` of the oldest failing)
                              r"in \w*save\w*(?:ckpt|checkpoint|snapshot)\w*\s*$|"
                              r"[/\\](?:checkpoint|checkpointing|checkpointers?)[/\\][^\"]*\.py\"")
# The call that writes a model, as a traceback's source line shows it (`torch.save(
# model.state_dict(), path)`, `model.save(path)`, `saver.save(sess, path)`), and a
# frame in a library's save function (Keras' `in save`, `in save_weights`).
_SAVE_CALL = lazy_re.compile(
    r"\btorch\.save\(|\b(?:\w*(?:model|net|saver|trainer|learner|module|network|"
    r"checkpoint|ckpt|estimator|booster|state|weights))\.save\w*\(|"
    r"\bsave_(?:model|weights|checkpoint|state_dict|pretrained|network)\w*\(|"
    r", in (?:save|save_weights|save_model|save_state|_save_model|save_state_dict)\s*$",
    re.IGNORECASE)
# A source line IPython shows around the one that ran, its number and no `--->` (the cell's
# `     41     torch.save(model.state_dict(), PATH)` two lines below `---> 39     train(…)`,
# stopped there by hand): context, not a call the traceback went through.
_IPYTHON_CONTEXT = lazy_re.compile(r"^\s+\d+\s")
# Where a model is written: a checkpoint, weights, a saved model (`ckpt/epoch_3.pt`,
# `saved_models/model`, `weights.h5`).
_MODEL_PATH = lazy_re.compile(
    r"['\"][^'\"]*(?:checkpoint|ckpt|saved?_?model|model|weights|\.pth?|\.h5|"
    r"\.keras|\.safetensors|\.pkl|\.joblib|\.bin)[^'\"]*['\"]", re.IGNORECASE)
# What failing to create or write a file raises (not to read one: a resume from a
# missing checkpoint is `FileNotFoundError` on a load, no save at all).
_WRITE_ERRORS = ("FileExistsError", "PermissionError", "IsADirectoryError",
                 "NotADirectoryError")
_SAVE_BEGINS = lazy_re.compile(r"\b[Ss]aving\b")
# A logger's level before `Traceback (`: the library handled it and said so.
_LOGGED = lazy_re.compile(r"\b(?:WARNING|WARN|INFO|DEBUG|W\d{4})\b|\[W(?:ARNING)?\]")
# A frame of a library that writes images and plots (PIL's `ImageFile.py", line 644, in
# _save`, under matplotlib's `savefig`): a figure being written, no model.
_IMAGE_WRITER = lazy_re.compile(r"[/\\](?:PIL|matplotlib|imageio|skimage|cv2)[/\\]|savefig\(")
# A frame in an installed package or the standard library (`…/site-packages/PIL/…`,
# `…/lib/python3.10/…`).
_LIBRARY_PATH = lazy_re.compile(r"[/\\](?:site-packages|dist-packages|lib/python\d[\d.]*)[/\\]")
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
# Frames as IPython (`---> 60 ...`, `/path/x.py in f(a, b)`, `6 frames`; since IPython 8
# `Cell In[20], line 28` and `File /opt/…/module.py:1736, in Module._call_impl(self)`,
# the path unquoted) and loguru's better-exceptions (`> File "x.py", line 3, in f`) print
# them, unindented.
# rich.traceback draws the traceback in a box (`╭── Traceback (most recent call last)
# ──╮`, frames on `│ … │` lines, `╰──╯`), the exception line under it.
# (IPython's frame heads name the file as it is, spaces and all, and a compiled module's
# `.pyx` too: `/content/drive/MyDrive/2022 FastMRI/…/train_part.py in train(args)`,
# `h5py/_objects.pyx in h5py._objects.with_phil.wrapper()`, `File /…/My Drive/x.py:52, in
# fit(self)`)
_FRAME_LINE = lazy_re.compile(r"-*> ?\d*\s|> File \"|\S[^\"]*?\.pyx? in [\w<>.]+|\d+ frames\s*$|"
                              r"<ipython-input-|-{20,}$|[│┃║╭╰╮╯┏┗]|File \"|"
                              r"Cell In ?\[\d*\], line \d+|File \S[^\"]*?:\d+, in ")
_BOX = lazy_re.compile(r"^[\s│┃║╭╰╮╯┏┗─━═]*$")
# A Python frame, however indented (a paste may lose the indentation), or wrapped by a
# narrow console before its closing quote.
_FRAME_START = lazy_re.compile(r"^\s*File \"[^\"]+(?:\", line \d+|$)")
_FRAME_END = lazy_re.compile(r"^\s*in [\w<>.]+\s*$")
# The rest of a frame whose path a console wrapped (PowerShell at its width: `  File
# "C:\Users\…\leukem`, `ia_Classification…\train_model.py", `, then `line 304, in
# <module>`): its line and function, on a line of their own.
# (or cut inside `line` or its number, PowerShell hard-wrapping at 80 columns: `  File
# "D:\…\train.py", l`, then `ine 542, in <module>`)
_FRAME_REST = lazy_re.compile(r"^\s*(?:line |ine |ne |e )?\d+, in [\w<>.]+\s*$")
_FRAME_CUT = lazy_re.compile(r"\", (?:l|li|lin|line(?: \d+)?)$")
# The function a frame names (`  File "train.py", line 12, in <module>`).
_FRAME_FUNCTION = lazy_re.compile(r"\", line \d+, in (\S+)\s*$")
# Where a traceback of an exception nothing caught begins: the script's top level (or
# runpy's, for `python -m`).
_TOP_LEVEL = frozenset({"<module>", "_run_module_as_main", "_run_code"})
# Functions of Python's own that run callbacks as the process exits, catch what they raise
# and print its traceback (`traceback.print_exc()`), then go on: multiprocessing's
# finalizers (`_run_finalizers`: a worker's temporary directory on NFS, `OSError: [Errno
# 16] Device or resource busy: '.nfs…'`, after every epoch of a Lightning run and after its
# `max_epochs` reached) and atexit's callbacks. A traceback opening there ended nothing.
_PRINTED_AND_CAUGHT = frozenset({"_run_finalizers", "_run_exitfuncs", "_exit_function"})
# Frames of a program still loading its modules: their top levels and the import
# machinery between them (`importlib.import_module`, `_bootstrap`'s own frames).
_LOADING = frozenset({*_TOP_LEVEL, "import_module", "_gcd_import", "_find_and_load",
                      "_find_and_load_unlocked", "_load_unlocked", "exec_module",
                      "_call_with_frames_removed", "_handle_fromlist", "_load"})
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")
# (the function's name may be gone: a Markdown paste takes `in <module>` for a tag)
_FRAME_TAIL = lazy_re.compile(r"\", line \d+, in(?: \S+)?\s*$")
# A traceback pasted through Markdown gets typographic quotes (`File “/opt/…/runpy.py”,
# line 197`, sealed-20's YOLOX issue): read as Python printed them.
_STRAIGHT_QUOTES = str.maketrans({"“": '"', "”": '"'})


def _straight(line: str) -> str:
    """`line` with typographic double quotes made straight (the same string without)."""
    return line.translate(_STRAIGHT_QUOTES) if "“" in line or "”" in line else line

_DIGITS = lazy_re.compile(r"\d+")
CUT_OFF = "the log ends inside a traceback, before its exception line"
# A frame of a native program's stack, as glibc's `backtrace_symbols` writes it (Darknet's
# `error()` prints one before it exits: `2/10: ./darknet(error+0x3d) [0x5c6c92b5a2dd]`):
# the program is dying of an error it printed above the frames.
_NATIVE_FRAME = lazy_re.compile(r"^\s*(?:\d+/\d+:\s*|#\d+\s+)?\S+\((?:[^()\s]*)?\+0x[0-9a-fA-F]+\)"
                                r"\s*\[0x[0-9a-fA-F]+\]\s*$")
# Frames in a row that make a stack, not one address quoted.
_NATIVE_FRAMES = 3
# What Python prints before a traceback that does not end the process: a thread's
# (`Exception in thread Thread-1:`, threading.excepthook) and one raised where nothing
# can catch it (`Exception ignored in: <function …>`, a destructor at exit).
_NOT_THE_PROCESS = lazy_re.compile(r"^\s*Exception (?:in thread \S.*:|ignored in\b)")
# A logger's error line about a thread, right above a traceback: the thread's failure,
# logged (absl's `E0906 13:58:53.559288 … [thread=Thread-195 (_target_setting_result)] …
# raised an exception: …`, Orbax's `Failed to run 3 Handler Commit operations … in
# background save thread`); the process logs on after it. Not the main thread's
# (loguru's `An error has been caught in function 'launch', process 'MainProcess' (2150),
# thread 'MainThread'`: the process's own error).
_THREAD_LOGGED = lazy_re.compile(r"^(?!.*(?:MainThread|[Mm]ain [Tt]hread))"
                                 r"\s*(?:[EF]\d{4} \d|.*\b(?:ERROR|CRITICAL)\b).*\b[Tt]hread\b")
# A line saying that a failure was caught and the work goes on without it, right above
# its traceback (AutoGluon's `Warning: Exception caused NeuralNetFastAI_BAG_L1 to fail
# during training... Skipping this model.`, then Ray's stack of the worker, then the same
# failure again under `Detailed Traceback:`; `Error loading batch 12, skipping`): the
# traceback is printed, not raised — the fit went on to its next model and finished.
_CAUGHT_SAID = lazy_re.compile(r"(?i)\b(?:exception|error|fail(?:ed|ure|s)?|failing)\b.*"
                               r"\b(?:skipping|ignoring|continuing|retrying|moving on)\b")
# Lines between that announcement and its traceback, or between one caught traceback and
# its restatement, at most.
_CAUGHT_GAP = 3
# Python's logging module, when a handler fails to write a record (a console that cannot
# encode a character, a disk full on flush), prints `--- Logging error ---`, the handler's
# traceback (with any exception the record was about, chained before it), `Call stack:`
# with the frames of the logging call, and `Message: …` / `Arguments: …`, then carries on.
# None of it is the process dying (sealed-175's PolyLaneNet run: `UnicodeEncodeError:
# 'charmap' codec can't encode …` under `wandb.finish()`, after the run was stopped).
# The interpreter's word on a start-up hook that failed to import (`Error in
# sitecustomize; set PYTHONVERBOSE for traceback:` then `ModuleNotFoundError: No module
# named 'wrapt'`): printed as a new Python process starts, and that process runs on (a
# fit's job script calling python again after the fit).
_SITE_HOOK = ("Error in sitecustomize", "Error in usercustomize")
_LOGGING_ERROR = "--- Logging error ---"
_LOGGING_ERROR_ENDS = "Arguments: "
_NO_KINDS: frozenset[EventKind] = frozenset()
_FAILURE_KINDS = frozenset({EventKind.EXCEPTION, EventKind.OOM, EventKind.CUDA_ERROR,
                            EventKind.HARDWARE_FAULT, EventKind.HOST_KILL, EventKind.SEGFAULT,
                            EventKind.NCCL})


def _interrupted(events: tuple[LogEvent, ...]) -> bool:
    return any(e.detail.startswith(("KeyboardInterrupt", "SystemExit")) for e in events)


def _prefix_template(prefix: str) -> re.Pattern[str] | None:
    """What a logger puts before each line of a traceback, as a pattern: its numbers (a
    timestamp, a pid) change from line to line, its words do not."""
    if not prefix.strip():
        return None
    pieces = _DIGITS.split(prefix)
    return re.compile(r"\s*" + r"\d+".join(re.escape(p) for p in pieces).lstrip())


_HEADER = "Traceback (most recent call last):"
# A console that wrapped the header is at most this much wider than the header's first
# piece (a word wrap leaves the line short of the width); one wider than this wraps a
# header after a long prefix and little else.
_WRAP_SLACK = 4
_NARROWEST = 40


_HEADER_LETTERS = "".join(_HEADER.split())


def _wrapped_header(previous: tuple[str, str], line: str) -> bool:
    """Whether `line` ends a traceback header that the one or two lines before it began,
    cut where a terminal wrapped it (at a space or in a word: `…Traceback (most recent
    cal`, then `l last):`; PowerShell's `python : Traceback `, `(most recent call `,
    `last):`), at least `Trace` before the last piece."""
    rest = "".join(line.split())
    if not rest.endswith("):") or len(rest) >= len(_HEADER_LETTERS) \
            or not _HEADER_LETTERS.endswith(rest):
        return False
    head = _HEADER_LETTERS[: len(_HEADER_LETTERS) - len(rest)]
    if len(head) < len("Trace"):
        return False
    joined = ""
    for earlier in reversed(previous):
        joined = "".join(earlier.split()) + joined
        if joined.endswith(head):
            return True
        if len(joined) >= len(head):
            return False
    return False


class FailureReader:
    def __init__(self) -> None:
        self._lines = 0  # >0 while inside a traceback
        self._header = ""
        self._first_frame: str | None = None  # the function the first frame names
        self._own_frame = False  # a frame outside installed packages (`_LIBRARY_PATH`)
        self._loading = True  # every frame so far a module's top level or an import's
        self._named = ""  # the exception an IPython header names
        self._headless = False  # opened by a frame, not a header
        self._logged = False  # a traceback a library logged as a warning and carried on
        # A Rust panic whose message comes on the next line: its line and location.
        self._panic: tuple[str, str] | None = None
        self._saving: str | None = None  # a save announced and not yet followed by progress
        self._save_failed: str | None = None  # the open traceback came during this save
        self._save_frame = False  # the open traceback runs through checkpoint-writing code
        # What a logger puts before each line of the open traceback.
        self._prefix: re.Pattern[str] | None = None
        self.start = StartFailures()  # failures printed without a traceback
        # An exception line outside any traceback (a paste or a launcher that kept only
        # the last line): the run's end if nothing follows it (see `finish`); the parser
        # clears it at the next line.
        self.loose_exception: LogEvent | None = None
        self._frame = ""  # the open traceback's last line, when a frame may go on
        self._after_frame = False  # the open traceback's last line named a frame
        # The open traceback's last frame line opened its path's quotes and did not close
        # them: a console wrapped the path, and the lines that follow are its pieces.
        self._path_open = False
        self._chained = False  # a chain's words were read: the next exception is chained
        # Tracebacks announced as not the process's, not yet read: True for a helper
        # thread's (reported: the run may hang without it), False for one Python
        # ignored (`Exception ignored in`, at exit or in `__del__`: noise).
        self._announced: list[bool] = []
        self._in_thread = False  # the open traceback is a helper thread's
        # Lines left in which a traceback opening was announced as caught (`_CAUGHT_SAID`);
        # the open one was so announced.
        self._caught_window = 0
        self._caught = False
        self._thread_tail = False  # after one: its interleaved last lines still come
        # The line read before this one, and whether it said a failure: the message of a
        # Lua traceback stands above its `stack traceback:` (see `lua_tracebacks`).
        self._previous = ""
        self._before_previous = ""  # and the one before it (a header wrapped in three)
        self._previous_failed = False
        self._native = 0  # native stack frames in a row (see `_native_frame`)
        # The width of a narrow console that wrapped a traceback's header (0: none seen).
        self._narrow = 0
        self._native_error = ""  # what the program said before its frames
        self._said_error = ""  # the last line that said `error` (the frames' reason)
        self._logging_error = 0  # lines left of a logging error's report (`_LOGGING_ERROR`)

    @property
    def in_traceback(self) -> bool:
        return self._lines > 0

    def after_site_hook(self) -> bool:
        """Whether the line read before this one was the interpreter's word on a start-up
        hook that failed (`Error in sitecustomize; set PYTHONVERBOSE for traceback:`):
        this one is its exception, and the process runs on (see `_SITE_HOOK`)."""
        return self._previous.startswith(_SITE_HOOK)

    def frame_code(self, line: str) -> bool:
        """Whether `line` is the source line Python prints under the open traceback's
        last frame (`    raise torch.OutOfMemoryError(`): the program's code, which may
        name an error without reporting one."""
        return self._lines > 0 and self._after_frame \
            and frame_source(self._unprefixed(_straight(line)))

    def observe(self, line: str, events: tuple[LogEvent, ...]) -> list[LogEvent]:
        """Events this line adds to the ones it carries itself: the exception that closes
        a traceback, and a failed save."""
        line = _straight(line)
        if line.startswith(_CHAIN):
            self._chained = True  # the next traceback is raised while handling this one
        if "rror" in line or "RROR" in line:
            self._said_error = line.strip()[:300]
            if line.strip() == _LOGGING_ERROR:
                self._logging_error = _MAX_TRACEBACK_LINES
        elif self._logging_error:
            self._logging_error -= 1
            if line.startswith(_LOGGING_ERROR_ENDS):
                self._logging_error = 0
        added = self._observe(line, events)
        self._previous, self._before_previous = line, self._previous
        self._previous_failed = bool(added) or any(e.kind in _FAILURE_KINDS for e in events)
        return added

    def _observe(self, line: str, events: tuple[LogEvent, ...]) -> list[LogEvent]:
        added: list[LogEvent] = []
        if self._lines == 0 and self.after_site_hook():
            return added  # (see `_SITE_HOOK`)
        if self._panic is not None:
            # The held panic's message: this line (see `foreign_failures`).
            header, location = self._panic
            self._panic = None
            return [panic_with_message(header, location, line)]
        if self._lines == 0 and "panicked at " in line \
                and (panic_at := panic_header(line)) is not None:
            self._panic = (line, panic_at)
            return added
        if not events and self._lines == 0 and _wrapped_header(
                (self._before_previous, self._previous), line):
            # The header a terminal wrapped at its width (`…Traceback (most recent cal`,
            # then `l last):`): a traceback opens here, as it would on the whole header.
            # The console is that narrow for every line after it: a frame or a message
            # longer than it comes in pieces (see `continues`).
            width = max(len(self._previous.rstrip("\r\n")), len(line.rstrip("\r\n")))
            self._narrow = width + _WRAP_SLACK if width <= _NARROWEST else 0
            self._open(line, "")
            return added
        if not events and self._lines == 0:  # most lines: skip the events' bookkeeping
            return self._outside(line, _NO_KINDS, added)
        kinds = {e.kind for e in events}
        for event in events:
            if event.kind is EventKind.CHECKPOINT_SAVED and _SAVE_BEGINS.search(event.line):
                self._saving = event.detail or "a checkpoint"
        failing = kinds & {EventKind.EXCEPTION, EventKind.TRACEBACK_START}
        if failing and self._saving is not None and EventKind.CHECKPOINT_ERROR not in kinds:
            self._save_failed = self._saving
            self._saving = None
            if EventKind.EXCEPTION in kinds and EventKind.TRACEBACK_START not in kinds \
                    and not _interrupted(events):
                added.append(self._save_error(line))
        if EventKind.TRACEBACK_START in kinds:
            self._open(line, line[: line.find("Traceback (")])
            return added
        if self._lines == 0:
            return self._outside(line, kinds, added)
        return self._read_frame(self._unprefixed(line), kinds, added)

    def _outside(self, line: str, kinds: Set[EventKind],
                 added: list[LogEvent]) -> list[LogEvent]:
        """A line outside any traceback: one that opens one, or states a failure."""
        if self._thread_tail:
            if line[:1].isspace() or exception_line(line) is not None:
                return added  # two threads' tracebacks interleaved: the other's last lines
            self._thread_tail = False
        if lua_tracebacks.is_header(line):
            # Lua's frames follow; the error is the line above, unless it said so itself.
            if not self._previous_failed:
                added.extend(self._foreign_failed([lua_tracebacks.lua_error(self._previous)]))
            self._open(line, "", headless=True)  # its frames are read, and end nothing
            return added
        if not kinds.isdisjoint(_FAILURE_KINDS) or EventKind.STOPPED_BY_SIGNAL in kinds:
            foreign: list[LogEvent] = []
        else:  # another runtime's fatal error: R, Julia, the JVM, Lua, Go, Rust, C++
            foreign = foreign_failure(line)
        if foreign:
            added.extend(self._foreign_failed(foreign))
            return added
        if self._announces(line):
            return added
        if self._caught_window:
            self._caught_window -= 1
        if ("ail" in line or "rror" in line or "xception" in line) \
                and _CAUGHT_SAID.search(line) is not None:
            self._caught_window = _CAUGHT_GAP
            return added
        if "File \"" in line and (_FRAME_START.match(line)
                                  or _FRAME_START.match(message(line))):
            # (behind a head, a frame may open a traceback too: Ray's `(_dystack
            # pid=167306)   File "…", line 413, in _ray_fit`, its stack with no header)
            head = "" if _FRAME_START.match(line) else line[:line.find('File "')]
            self._open(line, "", headless=True)
            if head:
                self._prefix = _prefix_template(head)
            return self._read_frame(self._unprefixed(line), kinds, added)
        failing = not kinds.isdisjoint(_FAILURE_KINDS)
        if not failing and "+0x" in line:
            added.extend(self._native_frame(line))
        elif self._native:
            self._native = 0
        if not failing:
            added.extend(said_failure(line))
        if EventKind.EXCEPTION not in kinds and not added:
            added.extend(self.start.observe(line))
        if not added and not failing:
            self._loose(line)
        return added

    def _native_frame(self, line: str) -> list[LogEvent]:
        """A frame of a native stack: the third in a row is the program dying, of the
        error it printed before them (the nearest `Error: …` line, else the one above)."""
        if _NATIVE_FRAME.match(line) is None:
            self._native = 0
            return []
        if not self._native:
            self._native_error = self._said_error or self._previous.strip()
        self._native += 1
        if self._native != _NATIVE_FRAMES:
            return []
        said = self._native_error or "a native program's stack trace"
        return [LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500),
                         clip(f"native stack trace after: {said}", 300))]

    def _foreign_failed(self, foreign: list[LogEvent]) -> list[LogEvent]:
        """Another runtime's fatal error, and the save it broke when one was under way
        (char-rnn's `saving checkpoint to cv/….t7`, then torch.save's `cannot open`)."""
        if self._saving is not None and any(e.kind is EventKind.EXCEPTION for e in foreign):
            broken = self._save_error(foreign[0].line)
            self._saving = None
            return [*foreign, broken]
        return foreign

    def _loose(self, line: str) -> None:
        """Note an exception line outside any traceback (see `loose_exception`)."""
        name = line.partition(":")[0]
        if not name or " " in name or "\t" in name or name.endswith("Warning"):
            return  # an exception's name is one word (most lines are not one)
        closing = exception_line(line)
        if closing is not None:
            name, message = closing
            self.loose_exception = LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500),
                                            clip(f"{name}: {message}" if message else name, 300))

    def _open(self, line: str, prefix: str, headless: bool = False) -> None:
        self._lines = 1
        self._after_frame = False
        self._headless = headless
        self._logged = bool(prefix) and _LOGGED.search(prefix) is not None
        self._in_thread = False
        if self._announced and not headless:
            self._in_thread = self._announced.pop(0)
            self._logged = self._thread_tail = True
        elif not headless and _THREAD_LOGGED.search(self._previous):
            self._in_thread = self._logged = self._thread_tail = True
        self._caught = self._caught_window > 0
        if self._caught:
            self._logged = True
        if self._logging_error:
            self._logged = True  # a handler's failure, reported by logging and survived
        named = exception_line(prefix.strip()) if prefix.strip() else None
        # IPython heads its traceback with the exception's name, not a logger's prefix;
        # rich with the corner of its box.
        self._named = named[0] if named is not None else ""
        boxed = _BOX.match(prefix) is not None
        self._prefix = None if named is not None or boxed or headless \
            else _prefix_template(prefix)
        self._header = clip(line.strip(), 300)
        self._first_frame = None
        self._own_frame = False  # a frame of the program's own code, not a package's
        self._loading = True

    def _read_frame(self, line: str, kinds: Set[EventKind],
                    added: list[LogEvent]) -> list[LogEvent]:
        self._lines += 1
        # A frame a narrow console wrapped before its function (`…/serialization.py",
        # line 379,` / ` in save`) is read whole.
        frame = f"{self._frame} {line.strip()}" \
            if _FRAME_END.match(line) or _FRAME_REST.match(line) else line
        self._frame = line.rstrip() if line.rstrip().endswith(",") \
            or _FRAME_CUT.search(line.rstrip()) else ""
        if self._path_open:
            self._path_open = '"' not in line  # a piece of the path: its quote ends it
        elif 'File "' in line:
            self._path_open = '"' not in line.split('File "', 1)[1]
        self._after_frame = _FRAME_TAIL.search(frame) is not None
        if (function := _FRAME_FUNCTION.search(frame)) is not None:
            if self._first_frame is None:
                self._first_frame = function.group(1)
            self._own_frame = self._own_frame or _LIBRARY_PATH.search(frame) is None
            self._loading = self._loading and function.group(1) in _LOADING
        if (_SAVE_FRAME.search(frame) or (_SAVE_CALL.search(frame)
                                           and _IPYTHON_CONTEXT.match(line) is None)) \
                and _IMAGE_WRITER.search(frame) is None:
            self._save_frame = True
        closing = raised_line(line) if self._lines > 2 else exception_line(line)
        if closing is not None:
            self._lines = 0
            name, message = closing
            if self._first_frame in _PRINTED_AND_CAUGHT:
                self._logged = True  # the caller caught it and printed it: noise at exit
            if self._logged:
                self._caught_over()  # (its restatement may follow: `Detailed Traceback:`)
                if self._in_thread:  # not the process's end, but not nothing either
                    self._in_thread = False
                    added.append(LogEvent(EventKind.THREAD_FAILED, clip(line.strip(), 500),
                                          clip(f"{name}: {message}" if message else name,
                                               300)))
                    if self._save_frame and EventKind.CHECKPOINT_ERROR not in kinds:
                        # (a background save's thread: that checkpoint was not written)
                        added.append(self._save_error(line))
                self._save_failed, self._save_frame = None, False
                return added  # handled and carried on: the library said so
            text = f"{name}: {message}" if message else name
            added.append(LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500), clip(text, 300),
                                  uncaught=self._first_frame in _TOP_LEVEL,
                                  chained=self._chained,
                                  at_import=self._loading and self._first_frame is not None
                                  and name.endswith(_IMPORT_ERRORS),
                                  library_only=self._first_frame is not None
                                  and not self._own_frame))
            self._chained = False
            # Stopped by hand during a save is a cancelled run, not a broken checkpoint,
            # unless the traceback shows the save itself failing.
            broke_save = self._save_frame or (self._save_failed is not None
                                              and not name.endswith(("KeyboardInterrupt",
                                                                     "SystemExit"))) \
                or (name.endswith(_WRITE_ERRORS) and _MODEL_PATH.search(message) is not None)
            if broke_save and EventKind.CHECKPOINT_ERROR not in kinds:
                added.append(self._save_error(line))
            self._save_failed, self._save_frame = None, False
        elif self._lines > _MAX_TRACEBACK_LINES:
            self._abandon()
        return added

    def continues(self, line: str) -> bool:
        """Whether `line` still belongs to the open traceback. A line that cannot be
        part of one (training output, a log record) means it was abandoned: printed,
        handled, and the run went on."""
        if self._lines == 0:
            return False
        line = _straight(line)
        text = self._unprefixed(line)
        if not text.strip() or text[:1].isspace() or text.startswith(_CHAIN) \
                or _FRAME_LINE.match(text) or _FRAME_TAIL.search(text):
            return True
        if self._after_frame and frame_source(text):
            return True  # the frame's source line, its indentation lost (see frame_sources)
        if self._path_open or (_FRAME_REST.match(text) and self._frame):
            return True  # a wrapped frame's pieces (see `_FRAME_REST`)
        if len(text.rstrip("\r\n")) <= self._narrow:
            # a piece of a frame or of the message a narrow console cut at its width
            # (PowerShell's 25 columns: `  File "E:\\crop_disease_d`, `etection\\.venv\\…`)
            return True
        if (raised_line(text) if self._lines > 1 else exception_line(text)) is not None:
            return True
        self._abandon()
        return False

    def _caught_over(self) -> None:
        """A traceback announced as caught ended: the same failure said again may follow
        within a few lines (`Detailed Traceback:`, Ray's restatement), caught too."""
        if self._caught:
            self._caught, self._caught_window = False, _CAUGHT_GAP

    def _abandon(self) -> None:
        self._caught_over()
        self._lines = 0
        self._after_frame = False
        self._path_open = False
        self._save_failed, self._save_frame = None, False

    def _unprefixed(self, line: str) -> str:
        if self._prefix is not None:
            match = self._prefix.match(line)
            if match is not None:
                return line[match.end():]
        return line

    def said_again(self, line: str) -> None:
        """A line printed before, word for word, that the parser passes by: one that
        announces the next traceback as not the process's (`Exception ignored in:
        <function Meteor.__del__ at 0x…>`, the same destructor at every epoch's end) still
        announces it."""
        if self._lines == 0:
            self._announces(line)

    def _announces(self, line: str) -> bool:
        """Whether the line announces the next traceback as not the process's (a helper
        thread's, or one Python ignored); noted for `_open` when it does."""
        if "Exception" not in line or _NOT_THE_PROCESS.match(line) is None:
            return False
        if len(self._announced) < 8:
            self._announced.append("in thread" in line)
        return True

    def progressed(self) -> None:
        """Training moved on: an announced save went through."""
        self._saving = None
        self._announced, self._thread_tail = [], False
        self.start.trained()

    def launched(self) -> None:
        """A new launch of the run began (see `launches`): its start-up is read afresh."""
        self.start.launched()

    def finish(self) -> list[LogEvent]:
        """No more lines will come: a traceback still open is a crash on its own (one
        that was only frames, with no header and no exception, says too little), and so
        is an exception line the log ends on."""
        loose, self.loose_exception = self.loose_exception, None
        if self._panic is not None:
            header, location = self._panic
            self._panic = None
            return [panic_with_message(header, location, "")]
        if self._lines == 0:
            return [] if loose is None else [loose]
        headless, logged, lines = self._headless, self._logged, self._lines
        self._lines = 0
        if self._in_thread and not headless:
            # A helper thread's traceback the log ends in: that thread's death, however
            # its exception line was lost.
            self._in_thread = False
            self._save_failed, self._save_frame = None, False
            name = f"{self._named} ({CUT_OFF})" if self._named else CUT_OFF
            return [LogEvent(EventKind.THREAD_FAILED, self._header or "Traceback",
                             name)]
        # (frames alone say enough once they run from the program's top level down: a
        # paste of a crash cut before its exception line, `File "…/train.py", line 177,
        # in <module>` then `main()` and four calls deeper, the log's last lines)
        from_top = headless and self._first_frame in _TOP_LEVEL and lines >= _CUT_STACK_LINES
        if (headless and not from_top) or logged:
            self._save_failed, self._save_frame = None, False
            return []
        detail = f"{self._named} ({CUT_OFF})" if self._named else CUT_OFF
        events = [LogEvent(EventKind.EXCEPTION, self._header or "Traceback", detail)]
        if self._save_failed is not None or self._save_frame:
            events.append(self._save_error(self._header))
        self._save_failed, self._save_frame = None, False
        return events

    def _save_error(self, line: str) -> LogEvent:
        path = self._save_failed or self._saving or ""
        self._save_failed = None
        return LogEvent(EventKind.CHECKPOINT_ERROR, line.strip()[:500],
                        "" if path == "a checkpoint" else path)
