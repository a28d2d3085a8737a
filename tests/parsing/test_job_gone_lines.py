"""Lines that say a job is gone: a shell's report of how the job it ran ended, which
echoes the job's command line (its settings are no facts about the run, see
`parsing.facts`), and a job wrapper's word that its job vanished (`parsing.events`).
The logs are written here in the shapes those tools print, with made-up values."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.parsing.facts import run_facts
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of

_COMMAND = "python train.py --learning_rate=0.05 --vocab_size=32000 --batch_size=32"


@pytest.mark.parametrize("line", [
    f"./train.sh: line 7: 41233 Killed                  {_COMMAND}",
    f"[1]+  Killed                  {_COMMAND}",
    f"zsh: killed     {_COMMAND}",
    f"run.sh: line 2: 881 Terminated              {_COMMAND}",
])
def test_a_shell_job_report_is_no_configuration_line(line: str):
    assert run_facts(line) == {}


def test_the_same_settings_alone_are_still_read():
    assert run_facts(f"Running: {_COMMAND}") == {"configured_lr": 0.05, "vocab_size": 32000.0}


def test_a_kill_report_after_carriage_return_step_counters_ends_the_run(tmp_path: Path):
    lines = ["global step 200 learning rate 0.0500 step-time 0.40 perplexity 80.10"]
    lines += [f"step: {s}" for s in range(1, 400)]
    lines += ["global step 400 learning rate 0.0490 step-time 0.41 perplexity 41.30"]
    lines += [f"step: {s}" for s in range(400, 520)]
    lines.append(f"./train.sh: line 7: 41233 Killed                  {_COMMAND}")
    parser = LogParser()
    records = parser.feed_lines(lines)
    assert any(e.kind is EventKind.HOST_KILL for r in records for e in r.events)
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("NO-GO", "FAILED")


def test_a_job_wrapper_that_lost_its_job_is_a_crash(tmp_path: Path):
    line = ("slurm.pl: Error, unfinished job no longer exists, log is in exp/log/train.1.log, "
            "last line is 'epoch 3 batch 500 loss 2.31'")
    events = find_events(line)
    assert [e.kind for e in events] == [EventKind.EXCEPTION]
    lines = [f"epoch 1 batch {b} loss {3.0 - b / 1000:.3f}" for b in range(100, 600, 100)]
    verdict = verdict_of(tmp_path, [*lines, line])
    assert (verdict["decision"], verdict["terminal_state"]) == ("NO-GO", "FAILED")
    assert "crash" in {a["type"] for a in verdict["anomalies_detected"]}


def test_a_wrapper_that_merely_mentions_its_jobs_is_nothing():
    assert find_events("queue.pl: 4 jobs submitted, waiting for them to finish") == ()


def test_a_shell_that_reports_its_job_hung_up_stopped_it(tmp_path: Path):
    line = "./train.sh: line 7: 41233 Hangup                  python train.py --epochs 50"
    assert [(e.kind, e.detail) for e in find_events(line)] == [
        (EventKind.STOPPED_BY_SIGNAL, "Hangup")]
    lines = [f"epoch {e} loss {2.0 - e / 100:.4f}" for e in range(1, 9)]
    verdict = verdict_of(tmp_path, [*lines, line])
    assert (verdict["decision"], verdict["terminal_state"]) == ("NO-GO", "CANCELLED")
