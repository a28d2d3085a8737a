"""Run the demo: start the synthetic trainer, babysit its log live, report."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, Settings
from babysit.core.reports import Observer
from babysit.core.session import run_session
from babysit.model import AnomalyType, Decision
from babysit.targets.common.log_file import LocalLogTarget


def run_demo(out_dir: Path, observer: Observer, say: Callable[[str], None]) -> int:
    """Returns 0 when babysit caught what the demo run does wrong, 1 otherwise."""
    # The log stays next to the verdict, in the demo's own folder, so both can be read
    # afterwards and nothing else lands in the user's directory.
    log = out_dir / "train.log"
    log.write_text("", encoding="utf-8")
    trainer = subprocess.Popen(
        [sys.executable, "-m", "babysit.demo.trainer", "--log", str(log)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    say(f"babysit demo: a synthetic training run (pid {trainer.pid}, no torch needed) is "
        f"writing {log}.")
    say("babysit watches it live, polling every 1-3 s; it will go wrong on its own.\n")
    settings = Settings(
        poll=replace(PollSettings(), interval=1.0, max_interval=3.0, max_polls=60,
                     summary_every=5),
        out_dir=out_dir,
        fix=False,
    )
    try:
        result = run_session(lambda: LocalLogTarget(log), str(log), "local-log", settings,
                             observer)
    finally:
        trainer.terminate()
        try:
            trainer.wait(timeout=5)
        except subprocess.TimeoutExpired:
            trainer.kill()
            trainer.wait()
    verdict = result.verdict
    caught = [a for a in verdict.anomalies if a.type is AnomalyType.NAN_INF]
    say("")
    if verdict.decision is Decision.NO_GO and caught:
        say(f"demo: babysit caught the NaN at step {caught[0].step} and stopped the watch "
            f"with NO-GO (a real run would exit with code {int(result.exit_code)}).")
        say("demo: the synthetic trainer was then stopped by the demo itself (babysit's fix "
            "policy never kills a run).")
        if result.artifact_path:
            say(f"demo: the verdict is in {result.artifact_path}, the run's log in {log}")
        return 0
    say(f"demo: expected babysit to catch a NaN, but the verdict was {verdict.decision.value}: "
        f"{verdict.summary}")
    return 1
