"""babysit-training.json: the verdict as a dict (pure), and its atomic write.

The field names and enum strings are a contract (references/artifact.md); the JSON
Schema shipped beside this module pins them and the tests validate every artifact.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from babysit.model import Verdict, utc_text
from babysit.redact import MASK

ARTIFACT_NAME = "babysit-training.json"
STUB_NAME = "babysit-training.unread.json"  # a verdict on a target never read (see below)
SCHEMA_VERSION = "1.0"
SKILL_NAME = "babysit-training"


def json_number(value: float) -> float | str:
    """JSON has no NaN: non-finite values travel as the strings "nan", "inf", "-inf"."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def verdict_to_dict(verdict: Verdict, written_at: datetime) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "skill_name": SKILL_NAME,
        "run_id": verdict.run_id,
        "timestamp": utc_text(written_at),
        "duration_seconds": verdict.duration_seconds,
        "decision": verdict.decision.value,
        "confidence": verdict.confidence.value,
        "summary": verdict.summary,
        "findings": [
            {"id": f.id, "severity": f.severity.value, "title": f.title,
             "description": f.description, "fix": f.fix}
            for f in verdict.findings
        ],
        "next_commands": list(verdict.next_commands),
        "target": verdict.target,
        "target_type": verdict.target_type,
        "terminal_state": verdict.terminal_state.value,
        "total_steps": verdict.total_steps,
        "target_steps": verdict.target_steps,
        "final_metrics": {k: json_number(v) for k, v in verdict.final_metrics.items()},
        "best_checkpoint": verdict.best_checkpoint,
        "anomalies_detected": [
            {"step": a.step, "type": a.type.value, "severity": a.severity.value,
             "description": a.description, "action_taken": a.action_taken}
            for a in verdict.anomalies
        ],
        "actions": [
            {"kind": a.kind, "status": a.status.value, "reason": a.reason, "at": a.at}
            for a in verdict.actions
        ],
        **({"efficiency": dict(verdict.efficiency)} if verdict.efficiency is not None else {}),
        **({"reading": verdict.reading.to_json()} if verdict.reading is not None else {}),
    }


def write_artifact(data: Mapping[str, Any], out_dir: Path, *, stub: bool = False) -> Path:
    """Write atomically: a reader sees the old file or the new one, never half of one.
    Returns the path written.

    A `stub` (a verdict that rests on no reading of its target: a typo'd path, an
    interruption before the target was opened) never replaces the verdict on another
    target: it goes to `babysit-training.unread.json` beside it instead.

    Raises OSError when the directory cannot be created or written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / ARTIFACT_NAME
    if stub and _holds_another_target(out_dir, data.get("target")):
        final = out_dir / STUB_NAME
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    # A verdict that had to hide a secret says where the secret was: the owner's alone.
    write_text_atomically(final, text, 0o600 if MASK in text else None)
    return final


_PREVIOUS_LIMIT = 16 * 1024 * 1024  # a verdict file bigger than this is not one of ours


def read_previous(out_dir: Path) -> tuple[bool, dict[str, Any] | None]:
    """What `out_dir` already holds: whether a verdict file is there, and the verdict it
    holds (None when it cannot be read as one: too big, not JSON, not an object)."""
    path = out_dir / ARTIFACT_NAME
    try:
        if not path.exists():
            return False, None
        if path.stat().st_size > _PREVIOUS_LIMIT or not path.is_file():
            return True, None
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return True, None
    return True, previous if isinstance(previous, dict) else None


def replaced_verdict(out_dir: Path, target: object) -> str | None:
    """The verdict on another target that writing one on `target` in `out_dir` would
    replace (`b.log (NO-GO)`), so that it is said, not silently lost; None when there is
    none, or the file is not one babysit can read."""
    _, previous = read_previous(out_dir)
    if previous is None or previous.get("target") in (None, target):
        return None
    return f"{previous.get('target')} ({previous.get('decision')})"


def _holds_another_target(out_dir: Path, target: object) -> bool:
    """Whether `out_dir`'s verdict file holds something other than a verdict on
    `target`: another target's verdict, or a file babysit cannot read as one (kept, in
    doubt)."""
    there, previous = read_previous(out_dir)
    return there and (previous is None or previous.get("target") != target)


def write_text_atomically(final: Path, text: str, mode: int | None = None) -> None:
    """A temp file beside `final`, synced, then renamed over it: a reader sees the old
    file or the new one, never half of one. `mode` None: what the user's umask gives a
    new file (0o666 less the umask). Raises OSError."""
    if mode is None:
        mode = 0o666 & ~_umask()
    directory = final.parent if str(final.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)  # mkstemp makes it 0600, whatever the umask says
        os.replace(temp, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux);
    elsewhere set and restored at once."""
    with contextlib.suppress(OSError, ValueError), \
            open("/proc/self/status", encoding="ascii", errors="replace") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def check_writable(out_dir: Path) -> None:
    """Raises OSError when the artifact could not be written to `out_dir` (it is created
    if missing): a test file is made there and removed."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".babysit-probe.", dir=out_dir)
    os.close(fd)
    os.unlink(probe)


def load_schema() -> dict[str, Any]:
    """The artifact's JSON Schema, as shipped in the package."""
    text = resources.files("babysit").joinpath("schema/babysit-training.schema.json").read_text(
        encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
