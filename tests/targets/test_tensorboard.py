"""TensorBoard event files as a target: files written by TensorBoard's own writer, read
incrementally, tags mapped to babysit's metric names, judged like a log."""

from __future__ import annotations

import io
import json
import math
import struct
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

# TensorBoard's writers and summary helpers import numpy and its plugins (~0.3 CPU seconds):
# they are imported where used, not in every worker that collects this module.
pytest.importorskip("tensorboard", reason="TensorBoard is not installed "
                                          "(pip install -e '.[test-services]')")

from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from babysit.model import Record
from babysit.targets.registry import all_options, select
from babysit.targets.tensorboard import claims
from babysit.targets.tensorboard.events import TensorBoardTarget
from babysit.targets.tensorboard.framing import crc32c_python, frame, masked_crc32c
from babysit.targets.tensorboard.tags import metric_name, scope_of_run
from tests.conftest import artifact_in
from tests.test_cli import babysit

Rows = Iterable[tuple[int, Mapping[str, float]]]


def scalar_event(step: int, values: Mapping[str, float], wall: float | None = None) -> Event:
    summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)
                             for tag, value in values.items()])
    return Event(wall_time=time.time() if wall is None else wall, step=step, summary=summary)


def write_run(logdir: Path, rows: Rows, *, suffix: str = "",
              wall: float | None = None) -> Path:
    """An event file written by TensorBoard's own writer; returns its path."""
    logdir.mkdir(parents=True, exist_ok=True)
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    before = set(logdir.iterdir())
    writer = EventFileWriter(str(logdir), filename_suffix=suffix)
    for step, values in rows:
        writer.add_event(scalar_event(step, values, wall))
    writer.close()
    (created,) = set(logdir.iterdir()) - before
    return created


def framed(*events: Event) -> bytes:
    """Events framed as TFRecords by TensorBoard's RecordWriter."""
    from tensorboard.summary.writer.record_writer import RecordWriter

    sink = io.BytesIO()
    writer = RecordWriter(sink)
    for event in events:
        writer.write(event.SerializeToString())
    return sink.getvalue()


def append_bytes(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def by_step(records: Iterable[Record]) -> dict[int | None, dict[str, float]]:
    out: dict[int | None, dict[str, float]] = {}
    for record in records:
        out.setdefault(record.step, {}).update(record.metrics)
    return out


def healthy(steps: int, *, train_tag: str = "train/loss") -> list[tuple[int, dict[str, float]]]:
    return [(step, {train_tag: 3.0 * 0.97 ** step, "train/learning_rate": 3e-4,
                    "train/grad_norm": 1.0}) for step in range(1, steps + 1)]


# --- through the command line ------------------------------------------------------------

def test_a_healthy_run_to_its_planned_steps_is_go(tmp_path: Path):
    logdir = tmp_path / "runs" / "exp1"
    write_run(logdir, healthy(50))
    out = tmp_path / "out"
    done = babysit(str(logdir), "--once", "--json", "--out-dir", str(out), "--total-steps", "50",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    artifact = artifact_in(out)
    assert artifact["decision"] == "GO"
    assert artifact["target_type"] == "tensorboard"
    assert artifact["total_steps"] == 50 and artifact["target_steps"] == 50
    assert artifact["anomalies_detected"] == []
    assert {"loss", "lr", "grad_norm"} <= set(artifact["final_metrics"])
    assert artifact["final_metrics"]["loss"] == pytest.approx(3.0 * 0.97 ** 50, rel=1e-5)


def test_one_event_file_is_a_target_too(tmp_path: Path):
    path = write_run(tmp_path / "exp1", healthy(20))
    out = tmp_path / "out"
    done = babysit(str(path), "--once", "--json", "--out-dir", str(out), "--total-steps", "20",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    artifact = artifact_in(out)
    assert artifact["decision"] == "GO" and artifact["total_steps"] == 20


def test_a_nan_loss_scalar_is_no_go_at_its_step(tmp_path: Path):
    rows = healthy(30)
    rows[19] = (20, {"train/loss": math.nan, "train/learning_rate": 3e-4})
    logdir = tmp_path / "exp1"
    write_run(logdir, rows[:20])
    out = tmp_path / "out"
    done = babysit(str(logdir), "--once", "--json", "--out-dir", str(out), "--total-steps", "30",
                   cwd=tmp_path)
    assert done.returncode == 1, done.stderr + done.stdout
    artifact = artifact_in(out)
    assert artifact["decision"] == "NO-GO"
    nan = [a for a in artifact["anomalies_detected"] if a["type"] == "nan-inf"]
    assert nan and nan[0]["step"] == 20


def test_train_and_eval_runs_in_subdirectories_give_loss_and_eval_loss(tmp_path: Path):
    logdir = tmp_path / "exp1"
    write_run(logdir / "train", [(s, {"loss": 2.0 - s / 100}) for s in range(1, 41)])
    write_run(logdir / "eval", [(s, {"loss": 2.1 - s / 100, "accuracy": 0.5 + s / 100})
                                for s in (10, 20, 30, 40)])
    out = tmp_path / "out"
    done = babysit(str(logdir), "--once", "--json", "--out-dir", str(out), "--total-steps", "40",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    artifact = artifact_in(out)
    assert artifact["decision"] == "GO"
    metrics = artifact["final_metrics"]
    assert metrics["loss"] == pytest.approx(1.6)
    assert metrics["eval_loss"] == pytest.approx(1.7)
    assert metrics["eval/accuracy"] == pytest.approx(0.9)


def test_a_text_file_named_like_an_event_file_is_a_clear_error(tmp_path: Path):
    logdir = tmp_path / "exp1"
    logdir.mkdir()
    (logdir / "events.out.tfevents.123.host").write_text("step 1 loss 2.0\n" * 20)
    done = babysit(str(logdir), "--once", "--json", "--out-dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not a TensorBoard event file" in done.stdout + done.stderr


def test_a_missing_event_file_is_a_clear_error(tmp_path: Path):
    done = babysit(str(tmp_path / "events.out.tfevents.1.host"), "--once", "--json",
                   "--out-dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 4
    assert "not found" in done.stdout + done.stderr


# --- which kind claims a path ---------------------------------------------------------------

def values() -> dict[str, object]:
    from babysit.targets.registry import KINDS

    out: dict[str, object] = {o.dest: None for o in all_options().values()}
    out.update({k.flag.lstrip("-"): None for k in KINDS if k.flag})
    return out


def test_only_paths_with_event_files_are_claimed(tmp_path: Path):
    plain = tmp_path / "logs"
    plain.mkdir()
    (plain / "train.log").write_text("step 1 loss 2\n")
    assert not claims(str(plain))
    assert select(values(), str(plain)).kind == "local-log"
    assert select(values(), str(plain / "train.log")).kind == "local-log"
    nested = tmp_path / "runs" / "exp1"
    write_run(nested / "train", healthy(2))
    assert select(values(), str(tmp_path / "runs")).kind == "tensorboard"
    assert select(values(), str(nested)).kind == "tensorboard"
    assert select(values(), str(nested / "events.out.tfevents.1.host")).kind == "tensorboard"
    too_deep = tmp_path / "deep" / "a" / "b" / "c" / "d" / "e"
    write_run(too_deep, healthy(1))
    assert not claims(str(tmp_path / "deep"))


def test_a_directory_without_event_files_falls_back_to_the_log_kind(tmp_path: Path):
    (tmp_path / "logs").mkdir()
    done = babysit(str(tmp_path / "logs"), "--once", "--json", "--out-dir", str(tmp_path),
                   cwd=tmp_path)
    assert done.returncode == 4
    assert "is a directory" in done.stdout + done.stderr


def test_the_kind_module_is_cheap_to_import():
    code = ("import sys; import babysit.targets.registry; "
            "print(any(m.startswith(('tensorboard', 'google.protobuf')) for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


# --- incremental reading through poll() --------------------------------------------------

def test_a_record_still_being_written_waits_for_the_next_poll(tmp_path: Path):
    path = write_run(tmp_path / "exp1", [(1, {"loss": 2.0})])
    target = TensorBoardTarget(tmp_path / "exp1")
    assert by_step(target.poll().log.records) == {1: {"loss": 2.0}}
    # cut inside the header, inside the data, inside the footer
    for step, cut in ((2, 5), (3, 14), (4, -3)):
        record = framed(scalar_event(step, {"loss": 1.875}))
        append_bytes(path, record[:cut])
        snapshot = target.poll()
        assert snapshot.log.records == () and not any("damaged" in n for n in snapshot.notices)
        append_bytes(path, record[cut:])
        assert by_step(target.poll().log.records) == {step: {"loss": 1.875}}
        assert target.poll().log.records == ()


def test_only_new_records_are_read_each_poll(tmp_path: Path):
    path = write_run(tmp_path, healthy(5))
    target = TensorBoardTarget(tmp_path)
    first = target.poll()
    assert [r.step for r in first.log.records] == [1, 2, 3, 4, 5]
    assert all(r.time is not None for r in first.log.records)
    append_bytes(path, framed(scalar_event(6, {"train/loss": 0.5})))
    second = target.poll()
    assert [(r.step, dict(r.metrics)) for r in second.log.records] == [(6, {"loss": 0.5})]
    assert second.log.new_bytes == len(framed(scalar_event(6, {"train/loss": 0.5})))


def test_new_event_files_appearing_later_are_read(tmp_path: Path):
    logdir = tmp_path / "exp1"
    write_run(logdir / "train", [(s, {"loss": 2.0}) for s in (1, 2, 3)])
    target = TensorBoardTarget(logdir)
    assert sorted(by_step(target.poll().log.records)) == [1, 2, 3]
    write_run(logdir / "eval", [(2, {"loss": 2.25})])  # a new run folder
    write_run(logdir / "train", [(4, {"loss": 1.875})], suffix=".rolled")  # a new file
    snapshot = target.poll()
    steps = by_step(snapshot.log.records)
    assert steps[4] == {"loss": 1.875}
    assert steps[None] == {"eval_loss": 2.25}  # eval behind the train run: late, no step
    assert sum("new event file" in n for n in snapshot.notices) == 2
    assert target.poll().log.records == ()


def test_a_run_whose_own_steps_go_back_restarted(tmp_path: Path):
    logdir = tmp_path / "exp1"
    write_run(logdir, [(s, {"loss": 2.0}) for s in (1, 2, 3, 4)])
    target = TensorBoardTarget(logdir)
    target.poll()
    write_run(logdir, [(s, {"loss": 2.0}) for s in (2, 3)], suffix=".resumed")
    assert [r.step for r in target.poll().log.records] == [2, 3]


def test_quiet_for_is_the_age_of_the_newest_event(tmp_path: Path):
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(framed(*(scalar_event(s, {"loss": 1.0}, wall=990.0 + s) for s in (1, 2))))
    target = TensorBoardTarget(tmp_path, wall_time=lambda: 1600.0)
    snapshot = target.poll()
    assert snapshot.log.quiet_for == pytest.approx(608.0)
    assert snapshot.process.alive is None
    assert [r.time for r in snapshot.log.records] == [991.0, 992.0]


def test_the_writers_first_event_counts_as_writing(tmp_path: Path):
    write_run(tmp_path, [(1, {"loss": 1.0})], wall=1000.0)  # file_version: written now
    assert TensorBoardTarget(tmp_path).poll().log.quiet_for < 60


def test_steps_counted_from_zero_are_said_so(tmp_path: Path):
    write_run(tmp_path, [(s, {"loss": 1.0}) for s in range(0, 5)])
    assert TensorBoardTarget(tmp_path).poll().log.steps_from_zero is True


def test_garbage_in_the_middle_is_skipped_with_a_notice(tmp_path: Path):
    path = write_run(tmp_path, [(1, {"loss": 2.0})])
    target = TensorBoardTarget(tmp_path)
    target.poll()
    append_bytes(path, b"\x07garbage that is not a record at all" * 3)
    append_bytes(path, framed(scalar_event(2, {"loss": 1.5})))
    snapshot = target.poll()
    assert by_step(snapshot.log.records) == {2: {"loss": 1.5}}
    assert any("damaged byte" in n for n in snapshot.notices)


def test_a_record_whose_data_checksum_fails_is_skipped(tmp_path: Path):
    path = write_run(tmp_path, [(1, {"loss": 2.0})])
    target = TensorBoardTarget(tmp_path)
    target.poll()
    bad = bytearray(framed(scalar_event(2, {"loss": 1.5})))
    bad[14] ^= 0xFF  # inside the data
    append_bytes(path, bytes(bad) + framed(scalar_event(3, {"loss": 1.375})))
    snapshot = target.poll()
    assert by_step(snapshot.log.records) == {3: {"loss": 1.375}}
    assert any("damaged record" in n for n in snapshot.notices)


def test_a_good_run_beside_a_garbage_file_is_read(tmp_path: Path):
    write_run(tmp_path, [(1, {"loss": 2.0})])
    (tmp_path / "events.out.tfevents.9.junk").write_bytes(b"\x00\x01not an event file" * 10)
    target = TensorBoardTarget(tmp_path)
    snapshot = target.poll()
    assert by_step(snapshot.log.records) == {1: {"loss": 2.0}}
    assert any("is not a TensorBoard event file" in n for n in snapshot.notices)


def test_tensor_scalars_of_summary_v2_and_torch_writers_are_read(tmp_path: Path):
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb

    def tensor(dtype: int, **fields: object) -> TensorProto:
        return TensorProto(dtype=dtype, tensor_shape=TensorShapeProto(), **fields)

    histogram = Summary.Value(
        tag="weights", tensor=TensorProto(
            dtype=2, tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
            double_val=[1.0]),
        metadata=SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="histograms")))
    events = [
        Event(step=1, wall_time=1.0, summary=scalar_pb("train/loss", 2.5)),
        Event(step=2, wall_time=2.0, summary=Summary(value=[
            Summary.Value(tag="train/loss", tensor=tensor(1, tensor_content=struct.pack(
                "<f", 2.25))),
            Summary.Value(tag="lr", tensor=tensor(2, double_val=[1e-4])),
            Summary.Value(tag="tokens", tensor=tensor(9, int64_val=[4096])),
            histogram])),
        Event(step=3, wall_time=3.0, summary=Summary(value=[
            Summary.Value(tag="weights", tensor=tensor(2, double_val=[7.0])),  # still a histogram
            Summary.Value(tag="train/loss", tensor=tensor(1, float_val=[math.nan]))])),
    ]
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(framed(Event(wall_time=0.5, file_version="brain.Event:2"), *events))
    steps = by_step(TensorBoardTarget(tmp_path).poll().log.records)
    assert steps[1] == {"loss": 2.5}
    assert steps[2] == {"loss": 2.25, "lr": pytest.approx(1e-4), "tokens": 4096.0}
    assert math.isnan(steps[3]["loss"]) and "weights" not in steps[3]


def test_several_trainings_in_one_log_dir_keep_the_others_apart(tmp_path: Path):
    old = write_run(tmp_path / "version_0", [(1, {"loss": 5.0})])
    write_run(tmp_path / "version_1", [(1, {"loss": 2.0})])
    import os

    os.utime(old, (1000.0, 1000.0))
    target = TensorBoardTarget(tmp_path)
    snapshot = target.poll()
    assert by_step(snapshot.log.records) == {1: {"loss": 2.0, "version_0/loss": 5.0}}
    assert any("several runs" in n for n in snapshot.notices)


# --- pieces --------------------------------------------------------------------------------

@pytest.mark.parametrize("tag, run, name", [
    ("train/loss", "", "loss"),
    ("Loss/train", "", "loss"),
    ("loss", "", "loss"),
    ("train_loss", "", "loss"),
    ("eval/loss", "", "eval_loss"),
    ("Loss/val", "", "eval_loss"),
    ("val_loss", "", "eval_loss"),
    ("loss", "eval", "eval_loss"),
    ("loss", "train", "loss"),
    ("epoch_loss", "validation", "eval_loss"),  # Keras
    ("learning_rate", "", "lr"),
    ("lr", "", "lr"),
    ("train/learning_rate", "", "lr"),
    ("lr-AdamW", "", "lr"),  # Lightning's LearningRateMonitor
    ("grad_norm", "", "grad_norm"),
    ("train/grad_norm", "", "grad_norm"),
    ("accuracy", "eval", "eval/accuracy"),
    ("Accuracy/val", "", "val/accuracy"),
    ("eval/accuracy", "", "eval/accuracy"),
    ("throughput/tokens_per_sec", "", "throughput/tokens_per_sec"),
    ("epoch_accuracy", "train", "epoch_accuracy"),
])
def test_tags_map_to_babysits_names(tag: str, run: str, name: str):
    assert metric_name(tag, scope_of_run(run)) == name


def test_the_eval_names_are_ones_babysits_eval_rules_recognise():
    from babysit.metric_names import LOSS_KEYS, eval_direction

    assert eval_direction("eval_loss") == -1 and "eval_loss" not in LOSS_KEYS
    assert eval_direction("eval/accuracy") == 1 and eval_direction("val/accuracy") == 1


def test_crc32c_matches_tensorboards():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as theirs

    for data in (b"", b"a", b"123456789", bytes(range(256)) * 3):
        assert masked_crc32c(data) == theirs(data)
    assert crc32c_python(b"123456789") == 0xE3069283


def test_framing_waits_for_partial_records_and_reports_the_size_of_long_ones():
    record = framed(scalar_event(1, {"loss": 1.0}, wall=1.0))
    assert frame(record[:7]).consumed == 0
    partial = frame(record[:20])
    assert partial.consumed == 0 and partial.need == len(record)
    whole = frame(record + record[:3])
    assert len(whole.payloads) == 1 and whole.consumed == len(record)
    assert frame(b"not a tfrecord file", file_start=True).not_tfrecord


def test_a_json_line_per_poll_names_the_kind(tmp_path: Path):
    write_run(tmp_path / "exp1", healthy(5))
    done = babysit(str(tmp_path / "exp1"), "--once", "--json", "--out-dir", str(tmp_path),
                   cwd=tmp_path)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    baseline = next(line for line in lines if line["event"] == "baseline")
    assert baseline["formats"] == ["tensorboard"] and baseline["step"] == 5


def test_a_run_counting_from_zero_to_its_planned_steps_is_go(tmp_path: Path):
    logdir = tmp_path / "runs" / "exp0"
    write_run(logdir, [(step - 1, metrics) for step, metrics in healthy(50)])  # steps 0..49
    out = tmp_path / "out"
    done = babysit(str(logdir), "--once", "--json", "--out-dir", str(out), "--total-steps", "50",
                   cwd=tmp_path)
    artifact = artifact_in(out)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert artifact["total_steps"] == 50 and done.returncode == 0


# --- bounded, whatever the files claim or hold ----------------------------------------

def header_claiming(length: int) -> bytes:
    """A record header with a valid checksum whose length field claims `length` bytes."""
    field = struct.pack("<Q", length)
    return field + struct.pack("<I", masked_crc32c(field))


def test_a_length_field_claiming_a_gibibyte_is_stepped_over_unread(tmp_path: Path):
    path = write_run(tmp_path / "run", healthy(3))
    big = 1 << 30
    with path.open("ab") as handle:  # the claimed record, all there (sparse: no disk used)
        handle.write(header_claiming(big))
        handle.truncate(handle.tell() + big + 4)
    append_bytes(path, framed(scalar_event(4, {"train/loss": float("nan")})))
    target = TensorBoardTarget(tmp_path / "run")
    snapshot = target.poll()
    assert 3 in by_step(snapshot.log.records)
    assert math.isnan(by_step(snapshot.log.records)[4]["loss"])  # read past it
    assert any("of more than 16 MiB" in n and "unread" in n for n in snapshot.notices)


def test_a_claimed_gibibyte_not_yet_written_waits_without_reading(tmp_path: Path):
    path = write_run(tmp_path / "run", healthy(3))
    append_bytes(path, header_claiming(1 << 30) + b"\0" * 1000)
    target = TensorBoardTarget(tmp_path / "run")
    assert sorted(s for s in by_step(target.poll().log.records) if s is not None) == [1, 2, 3]
    assert target.poll().log.records == ()


def test_a_million_events_at_once_are_thinned_not_the_nan(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    from babysit.targets.tensorboard import events

    monkeypatch.setattr(events, "MAX_ROWS_PER_POLL", 200)  # 10⁶ events: 100,000
    rows = [(n, {"train/loss": 2.0 - n / 10_000}) for n in range(1, 5001)]
    rows[1234] = (1235, {"train/loss": float("nan")})
    rows[2000] = (2001, {"train/loss": 1.8, "train/grad_norm": 0.5})
    write_run(tmp_path / "run", rows)
    snapshot = TensorBoardTarget(tmp_path / "run").poll()
    steps = by_step(snapshot.log.records)
    assert len(snapshot.log.records) <= 200 + events.MAX_SPECIAL_ROWS
    assert math.isnan(steps[1235]["loss"]) and steps[2001]["grad_norm"] == 0.5
    assert sorted(s for s in steps if s is not None and s > 4900) == list(range(4901, 5001))
    assert any("5,000 steps read at once" in n for n in snapshot.notices)
    assert snapshot.log.new_lines == 5001  # the points: step 2001 holds two


def test_a_sweep_of_thousands_of_run_folders_is_a_log_dir_not_a_directory_error(
        tmp_path: Path):
    sweep = tmp_path / "sweep"
    for n in range(1, 2500):  # each run's writer has just created its (still empty) file
        (sweep / f"run{n:04d}").mkdir(parents=True)
        (sweep / f"run{n:04d}" / "events.out.tfevents.1.host").touch()
    write_run(sweep / "run0000", healthy(3))
    assert claims(str(sweep))
    assert select(values(), str(sweep)).kind == "tensorboard"
    target = TensorBoardTarget(sweep)
    assert any("more than 2,000 event files" in n for n in target.poll().notices)
