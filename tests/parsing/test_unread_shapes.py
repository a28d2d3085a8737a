"""Classes of lines babysit could not read at all (issue 23, sealed-6): tables whose
headers name columns in several words, `name value` pairs after an `Epoch N:` head,
multi-line report blocks, metrics said in sentences, llm.c's own main.log. Every line
here is written for the test, in the shape of its class, not copied from a fixture."""

from __future__ import annotations

import math

from babysit.model import EventKind, Record
from babysit.parsing.headed_pairs import pairs_after_head, parse_headed_pairs
from babysit.parsing.header_cells import is_rule, multiword_names
from babysit.parsing.is_sentences import parse_is_sentences
from babysit.parsing.llmc import parse_llmc_main_log
from babysit.parsing.parser import LogParser


def _read(lines: list[str]) -> tuple[LogParser, list[Record]]:
    parser = LogParser()
    return parser, parser.feed_lines(lines) + parser.finish()


def _with(records: list[Record], name: str) -> list[Record]:
    return [r for r in records if name in r.metrics]


# --- tables whose column names have several words ----------------------------------------

def test_a_boxed_progress_table_is_read_by_its_header_and_its_bottom_border_ends_it() -> None:
    lines = ["+-------+----------+------------+",
             "| Step  | Val Acc  | Wall Clock |",
             "+-------+----------+------------+",
             *[f"| {i}     | 0.{60 + i}     | {i * 2.5}s       |" for i in range(1, 5)],
             "+-------+----------+------------+"]
    parser, records = _read(lines)
    rows = _with(records, "val_acc")
    assert [r.step for r in rows] == [1, 2, 3, 4]
    assert "wall_clock" not in rows[0].metrics  # a duration, not a metric
    assert any(e.kind is EventKind.COMPLETED for r in records for e in r.events)
    assert parser.lines_read >= len(lines) - 1  # the header counts once its rows are read


def test_a_border_before_any_row_ends_nothing() -> None:
    _, records = _read(["+------+------+", "| Iteration | Train Loss |", "+------+------+"])
    assert not any(r.events for r in records)


def test_an_aligned_header_with_two_word_names_names_each_column() -> None:
    header = "It   Gen Loss   Disc Loss   Acc %    Img/s"
    rows = [f"{i}    {2.0 - i / 10:.3f}      {0.7 + i / 100:.3f}       {50 + i:.1f}     {130.5 + i}"
            for i in range(3)]
    _, records = _read([header, *rows])
    read = _with(records, "gen_loss")
    assert [r.step for r in read] == [0, 1, 2]
    assert read[1].metrics["disc_loss"] == 0.71 and read[1].metrics["acc_%"] == 51.0


def test_a_nan_in_a_two_word_column_is_that_columns() -> None:
    _, records = _read(["Iteration  Policy Loss  Value Loss", "1  0.52  1.10", "2  nan  1.05"])
    assert math.isnan(_with(records, "policy_loss")[-1].metrics["policy_loss"])


def test_header_cells_refuse_sentences_and_one_word_headers() -> None:
    assert multiword_names("Loading the model  from disk  now") is None
    assert multiword_names("epoch  loss  acc") is None  # one-word names: shapes reads them
    assert multiword_names("| Epoch | Train Loss |") == ("|", ("epoch", "train_loss"))
    assert is_rule("+-----+------+") and is_rule("=====  ======") and not is_rule("--- a ---")


# --- `Epoch N:` then `name value` pairs --------------------------------------------------

def test_pairs_after_an_epoch_head_are_read_with_several_word_names() -> None:
    parsed = parse_headed_pairs("Epoch 4: Train Loss 0.812, Val Loss 0.901 | Val Acc 71.5%")
    assert parsed is not None and parsed.epoch == 4.0
    assert parsed.metrics == {"train_loss": 0.812, "val_loss": 0.901, "val_acc": 71.5}
    step = parse_headed_pairs("Iter 30/500 - loss 1.5 lr 3e-4")
    assert step is not None and (step.step, step.target) == (30, 500)


def test_pairs_after_a_loggers_prefix_are_read_too() -> None:
    parsed = parse_headed_pairs("[2024-01-02 03:04:05][fit.hooks][INFO] -  Epoch 9: Dice_l 0.42")
    assert parsed is not None and parsed.epoch == 9.0 and parsed.metrics == {"dice_l": 0.42}
    logged = parse_headed_pairs("2024-01-02 03:04:05 INFO: Step 12/40 | Train Acc 0.9")
    assert logged is not None and logged.step == 12


def test_a_sentence_after_an_epoch_head_is_no_metric_line() -> None:
    assert parse_headed_pairs("Epoch 5: saving the model to disk") is None
    assert parse_headed_pairs("Epoch 5: saving model to ckpt 3") is None  # no metric name
    assert pairs_after_head("loss 0.5 extra") is None  # words without a value


def test_a_projects_own_name_is_read_once_the_line_recurs() -> None:
    lines = [f"Epoch {e}: Recon_xy {0.5 - e / 100:.3e}" for e in range(4)]
    lines.append("Epoch 4: Recon_xy nan")
    _, records = _read(lines)
    read = _with(records, "recon_xy")
    assert [r.epoch for r in read] == [1.0, 2.0, 3.0, 4.0]  # the first, alone, is no metric
    assert math.isnan(read[-1].metrics["recon_xy"])


# --- multi-line report blocks ------------------------------------------------------------

def _block(n: int, loss: str) -> list[str]:
    return ["SUMMARY", f"    Iteration = {n}", f"    Loss = {loss}", f"    Rate = {1e-3 / n:.2e}",
            ""]


def test_report_blocks_are_one_record_each_from_the_second_head_on() -> None:
    lines = [line for n in (10, 20, 30, 40) for line in _block(n, f"{2.0 - n / 100:.2f}")]
    parser, records = _read(lines)
    blocks = [r for r in records if r.fmt == "report-block"]
    assert [r.step for r in blocks] == [20, 30, 40]  # the last read without a head after it
    assert blocks[-1].metrics == {"loss": 1.6, "rate": 2.5e-05}
    assert parser.step == 40


def test_a_nan_in_a_report_block_is_that_metrics() -> None:
    lines = [line for n, v in ((1, "0.9"), (2, "0.8"), (3, "NaN")) for line in _block(n, v)]
    _, records = _read(lines)
    assert math.isnan([r for r in records if r.fmt == "report-block"][-1].metrics["loss"])


def test_a_configuration_dump_printed_once_is_no_report() -> None:
    _, records = _read(["Config", "  depth = 12", "  width = 768", "Start", "step 1 loss 2.0"])
    assert not [r for r in records if r.fmt == "report-block"]


def test_a_block_under_an_evaluation_head_is_the_evaluations() -> None:
    lines = [line for v in ("0.5", "0.4", "0.3")
             for line in ("Validation", f"  loss = {v}", "  acc = 0.9")]
    _, records = _read(lines)
    assert [r.metrics for r in records if r.fmt == "report-block"][-1] == \
        {"eval/loss": 0.3, "eval/acc": 0.9}


# --- metrics said in sentences -----------------------------------------------------------

def test_clauses_of_name_is_value_are_metrics_and_counters_their_place() -> None:
    parsed = parse_is_sentences("Epoch 2, Step 40, elapsed 12.0 (s), mean loss so far is 0.25")
    assert parsed is not None and (parsed.epoch, parsed.step) == (2.0, 40)
    assert parsed.metrics == {"mean_loss": 0.25}
    assert parse_is_sentences("The dataset is 3 GB, batch size is 32") is None


def test_a_step_counted_within_its_epoch_is_placed_in_the_run() -> None:
    lines = [f"Epoch {e}, Step {s}, train loss is {1 / (e * 3 + s / 10):.4f}"
             for e in range(3) for s in (10, 20, 30)]
    lines.insert(3, "Epoch 0, dev error is 0.31.")
    _, records = _read(lines)
    steps = [r.step for r in _with(records, "train_loss")]
    assert steps == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    assert _with(records, "dev_error")[0].metrics["dev_error"] == 0.31


# --- llm.c's main.log ----------------------------------------------------------------------

def test_llmc_main_log_lines_name_their_step_and_metrics() -> None:
    parsed = parse_llmc_main_log("s:7 trl:9.5 lr:0.000300 norm:1.25")
    assert parsed is not None and parsed.step == 7
    assert parsed.metrics == {"train_loss": 9.5, "lr": 0.0003, "grad_norm": 1.25}
    assert parse_llmc_main_log("s:7 foo:1") is None and parse_llmc_main_log("step 7") is None


def test_llmc_validation_off_its_cadence_is_the_last_step() -> None:
    lines = []
    for s in range(0, 401, 20):
        if s % 100 == 0:
            lines.append(f"s:{s} tel:{5 - s / 200:.3f}")
        lines.append(f"s:{s} trl:{5 - s / 190:.3f} lr:0.000100 norm:0.50")
    ended = [*lines, "s:437 tel:2.700"]
    _, records = _read(ended)
    assert any(e.kind is EventKind.COMPLETED for r in records for e in r.events)
    _, records = _read(lines)
    assert not any(e.kind is EventKind.COMPLETED for r in records for e in r.events)
