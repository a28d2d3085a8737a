"""MLPerf's result log (`mlperf_logging`), in both its forms: the current `:::MLLOG {…}`
JSON events and v0.5's `:::MLPv0.5.0 bench time (file:line) key: value`. Lines written in
the format's shape with made-up values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.mlperf import parsed_from, read_event
from babysit.parsing.parser import LogParser
from tests.core.test_endings import once


def _mllog(key: str, value: object = None, **metadata: object) -> str:
    return ":::MLLOG " + json.dumps({
        "namespace": "", "time_ms": 1600000000000, "event_type": "POINT_IN_TIME",
        "key": key, "value": value,
        "metadata": {"file": "train.py", "lineno": 12, **metadata}})


def _v05(key: str, value: str | None = None) -> str:
    tail = key if value is None else f"{key}: {value}"
    return f":::MLPv0.5.0 resnet 1541000000.123 (train.py:42) {tail}"


def _run(evals: list[float], stop_status: str | None, every: int = 2) -> list[str]:
    lines = [_mllog("submission_benchmark", "resnet"), _mllog("global_batch_size", 256),
             _mllog("opt_base_learning_rate", 4.0), _mllog("train_samples", 1000),
             _mllog("run_start")]
    for index, value in enumerate(evals):
        for epoch in range(index * every, (index + 1) * every):
            lines += [_mllog("epoch_start", epoch_num=epoch),
                      _mllog("epoch_stop", epoch_num=epoch + 1)]
        epoch = (index + 1) * every
        lines += [_mllog("eval_start", epoch_num=epoch), _mllog("eval_stop", epoch_num=epoch),
                  _mllog("eval_accuracy", value, epoch_num=epoch)]
    if stop_status is not None:
        lines.append(_mllog("run_stop", status=stop_status))
    return lines


def test_an_evaluation_is_its_figure_at_its_epoch() -> None:
    event = read_event(_mllog("eval_accuracy", 0.5, epoch_num=6))
    assert event is not None
    parsed = parsed_from(event)
    assert parsed is not None and parsed.metrics == {"eval_accuracy": 0.5}
    assert parsed.epoch == 6.0 and parsed.step is None


def test_v05_evaluation_puts_its_epoch_in_the_metadata() -> None:
    event = read_event(_v05("eval_accuracy", '{"epoch": 3, "value": 0.61}'))
    assert event is not None
    parsed = parsed_from(event)
    assert parsed is not None and parsed.metrics == {"eval_accuracy": 0.61}
    assert parsed.epoch == 3.0


def test_a_block_s_end_counts_its_epochs() -> None:
    event = read_event(_mllog("block_stop", first_epoch_num=10, epoch_count=5))
    assert event is not None
    parsed = parsed_from(event)
    assert parsed is not None and parsed.epoch == 15.0 and not parsed.metrics


@pytest.mark.parametrize("line", [
    _mllog("global_batch_size", 256), _mllog("opt_base_learning_rate", 4.0),
    _mllog("eval_samples", 500), _v05("eval_target", "0.75"), _v05("eval_size",
                                                                   '{"epoch": 1, "value": 9}'),
    _v05("opt_learning_rate", "0.1"), _mllog("epoch_start", epoch_num=2),
])
def test_settings_and_sizes_are_no_metrics(line: str) -> None:
    event = read_event(line)
    assert event is not None and parsed_from(event) is None
    records = LogParser().feed_lines([line])
    assert not any(r.metrics for r in records)


def test_a_prefix_before_the_tag_is_no_matter() -> None:
    event = read_event("0: " + _mllog("eval_accuracy", 0.7, epoch_num=1))
    assert event is not None and event.key == "eval_accuracy"


@pytest.mark.parametrize("line", ["::: MLLOG nothing", ":::MLLOG {not json",
                                  "an ordinary line with eval_accuracy: 0.5"])
def test_lines_that_are_not_events(line: str) -> None:
    assert read_event(line) is None


@pytest.mark.parametrize(("line", "kind", "detail"), [
    (_mllog("run_stop", status="success"), EventKind.COMPLETED, "run-stop"),
    (_mllog("run_stop", status="aborted"), EventKind.JOB_STATE, "FAILED"),
    (_mllog("run_stop", status="abort"), EventKind.JOB_STATE, "FAILED"),
    (_v05("run_stop", '{"success": true}'), EventKind.COMPLETED, "run-stop"),
    (_v05("run_stop", '{"success": false}'), EventKind.JOB_STATE, "FAILED"),
    (_mllog("run_stop"), EventKind.JOB_STATE, "ENDED"),
])
def test_run_stop_is_the_run_s_word_on_its_end(line: str, kind: EventKind, detail: str) -> None:
    records = LogParser().feed_lines([line])
    events = [e for r in records for e in r.events]
    assert [(e.kind, e.detail) for e in events] == [(kind, detail)]


def test_the_parser_reads_the_evaluations_of_a_run() -> None:
    records = LogParser().feed_lines(_run([0.2, 0.4, 0.6], None))
    evals = [(r.epoch, r.metrics["eval_accuracy"]) for r in records if r.metrics]
    assert evals == [(2.0, 0.2), (4.0, 0.4), (6.0, 0.6)]


def test_a_run_that_reached_its_target_succeeded(tmp_path: Path) -> None:
    verdict = once(tmp_path, "\n".join(_run([0.2, 0.4, 0.6, 0.76], "success")) + "\n")
    assert (verdict["terminal_state"], verdict["decision"]) == ("SUCCEEDED", "GO")
    assert verdict["final_metrics"]["eval_accuracy"] == 0.76


def test_an_aborted_run_failed(tmp_path: Path) -> None:
    # the epoch budget spent short of the target; the job itself exits normally after it
    lines = [*_run([0.2, 0.4, 0.6, 0.7], "aborted"), "ENDING TIMING RUN AT 2020-07-14",
             "RESULT,IMAGE_CLASSIFICATION,,4328,root,2020-07-14"]
    verdict = once(tmp_path, "\n".join(lines) + "\n")
    assert (verdict["terminal_state"], verdict["decision"]) == ("FAILED", "NO-GO")


def test_v05_success_false_failed(tmp_path: Path) -> None:
    lines = [_v05("run_start")]
    for epoch in range(6):
        lines += [_v05("train_epoch", str(epoch)), _v05("eval_start", str(epoch)),
                  _v05("eval_accuracy", f'{{"epoch": {epoch}, "value": {0.5 + epoch / 100}}}'),
                  _v05("eval_stop")]
    lines += [_v05("eval_target", "0.9"), _v05("run_stop", '{"success": false}'),
              _v05("run_final")]
    verdict = once(tmp_path, "\n".join(lines) + "\n")
    assert (verdict["terminal_state"], verdict["decision"]) == ("FAILED", "NO-GO")


def test_a_run_without_run_stop_is_running(tmp_path: Path) -> None:
    verdict = once(tmp_path, "\n".join(_run([0.2, 0.4], None)) + "\n")
    assert verdict["terminal_state"] == "RUNNING"


def _v06(key: str, value: str, metadata: str) -> str:
    # mlperf_logging's first `:::MLL` logger (Intel's MiniGo submission, sealed-16): the
    # metadata sometimes a Python dict's repr
    return f':::MLL 1560875622.039693 {key}: {{"value": {value}, "metadata": {metadata}}}'


@pytest.mark.parametrize(("line", "key", "value", "metadata"), [
    (_v06("eval_accuracy", "0.51", "{'lineno': 49, 'epoch_num': 14}"), "eval_accuracy", 0.51,
     {"lineno": 49, "epoch_num": 14}),
    (_v06("run_stop", "null", "{'lineno': 53, 'status': 'success'}"), "run_stop", None,
     {"lineno": 53, "status": "success"}),
    (_v06("submission_org", '"Intel_Corp"', '{"lineno": 0, "file": "manual"}'),
     "submission_org", "Intel_Corp", {"lineno": 0, "file": "manual"}),
    # neither JSON nor a literal, or nested past any event's depth: the key alone
    (":::MLL 1560875622.04 run_start: {not an object", "run_start", None, {}),
    (":::MLL 1560875622.04 weird: " + "[" * 3000, "weird", None, {}),
])
def test_v06_events_with_json_or_python_metadata(line: str, key: str, value: object,
                                                 metadata: dict) -> None:
    event = read_event(line)
    assert event is not None
    assert (event.key, event.value, event.metadata) == (key, value, metadata)


def test_a_v06_run_that_reached_its_target_succeeded(tmp_path: Path) -> None:
    lines = [_v06("run_start", "null", "{'lineno': 1}")]
    lines += [_v06("eval_accuracy", f"{0.3 + e / 20}", f"{{'lineno': 49, 'epoch_num': {e}}}")
              for e in range(5)]
    lines.append(_v06("run_stop", "null", "{'lineno': 53, 'status': 'success'}"))
    verdict = once(tmp_path, "\n".join(lines) + "\n")
    assert (verdict["terminal_state"], verdict["decision"]) == ("SUCCEEDED", "GO")
