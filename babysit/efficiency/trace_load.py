"""Reading a Chrome trace file — plain or gzipped JSON — into its list of events."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import IO, Any

_GZIP_MAGIC = b"\x1f\x8b"


class TraceError(Exception):
    """The file cannot be read as a Chrome trace; the message says why, in one line."""


def load_events(path: Path) -> list[Any]:
    """The `traceEvents` of the trace at `path`, as parsed (nothing is checked here
    beyond the shape of the document; the summary skips events it cannot use)."""
    try:
        with _open_text(path) as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise TraceError(f"{path}: a damaged or truncated gzip file ({error})") from None
    except OSError as error:
        raise TraceError(f"{path}: cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not text, so not a JSON trace") from None
    except json.JSONDecodeError as error:
        raise TraceError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}, "
                         f"column {error.colno}); not a trace, or one cut short") from None
    except RecursionError:
        raise TraceError(f"{path}: JSON nested too deeply to be a trace") from None
    return _events_of(document, path)


def _open_text(path: Path) -> IO[str]:
    # Sniffed rather than trusted to the suffix: traces get renamed and re-compressed.
    with path.open("rb") as raw:
        gzipped = raw.read(2) == _GZIP_MAGIC
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _events_of(document: Any, path: Path) -> list[Any]:
    # export_chrome_trace writes the object form; the bare array form is valid Chrome
    # trace JSON too, and some tools write it.
    if isinstance(document, dict) and isinstance(document.get("traceEvents"), list):
        events: list[Any] = document["traceEvents"]
        return events
    if isinstance(document, list):
        return document
    raise TraceError(f"{path}: JSON, but not a Chrome trace (no \"traceEvents\" list)")
