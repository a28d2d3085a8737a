"""Logs read too little, and their endings missed (issue 23, sealed-8): Keras 1's epoch
bar, a zero-based epoch summary after each epoch's bar, a tool's statistics report set
apart by indentation, TF1 Estimator's closing line, and a trainer's history written as
one pretty-printed JSON document. Each line below is in the shape its framework's source
prints (cited at each); the sealed-8 log that showed the class is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.bars import parse_bar
from babysit.parsing.formats import parse_key_values
from babysit.parsing.frameworks import planned_epochs
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of

# --- Keras 1: the epoch's seconds after its drawn bar, no time per step -------------------
# keras/utils/generic_utils.py (1.x), Progbar.update: `info += ' - %ds' % (now - self.start)`
# (keras1_image_sr_epoch_50_of_50_val_psnr_24_then_holdout_psnr_13_7.log)
KERAS1_END = ("24576/24576 [==============================] - 4532s - loss: 0.0042 - "
              "PSNRLoss: 26.9141 - val_loss: 0.0055 - val_PSNRLoss: 24.2536")


def test_a_keras_1_epoch_bar_is_a_bar_with_its_metrics() -> None:
    bar = parse_bar(KERAS1_END)
    assert bar is not None and bar.style == "keras" and (bar.n, bar.total) == (24576, 24576)
    assert bar.metrics["val_psnrloss"] == 24.2536


def test_a_bare_count_with_seconds_is_no_bar() -> None:
    # Undrawn, it is a counter's line (`12/540 - 3s - loss: 2.28`), read as before.
    assert parse_bar("12/540 - 3s - loss: 2.28") is None


def test_an_excerpt_of_the_last_planned_keras_1_epoch_ends_the_run(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, ["Epoch 50/50", KERAS1_END, "Validating  model",
                                 "validated image:", "126058_255_RGB_part2.tif", "13.52"])
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["reading"]["progress"] == "step"


def test_a_keras_1_epoch_short_of_its_plan_is_not_the_end(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, ["Epoch 12/50", KERAS1_END])
    assert data["terminal_state"] == "RUNNING"


# --- a zero-based epoch summary after the epoch's bar -------------------------------------
# A hand loop: `logging.info(f"Data size: …, training epoch: {epochs}.")`, then per epoch a
# tqdm bar and `logging.info(f"Epoch {epoch:04d} in static KGE | Ave Loss: {loss:.4f} ")`
# over `range(epochs)` (kge_static_pretrain_tqdm_cr_epoch_0000_to_0029_of_30_ave_loss.log)


def _kge(epochs_run: int, planned: int = 5) -> list[str]:
    lines = ["2023-11-11 11:45:14,866 - INFO: Start training.",
             f"2023-11-11 11:45:14,866 - INFO: Data size: 149690, batch size: 500, "
             f"training epoch: {planned}."]
    for epoch in range(epochs_run):
        frames = [f"  {n * 100 // 300:>2}%|▎         | {n}/300 [00:{n % 60:02d}<14:12,  2.93s/it]"
                  for n in (0, 9, 150)]
        frames.append("100%|██████████| 300/300 [14:28<00:00,  2.89s/it]")
        lines.append("\r".join(frames))
        lines.append(f"2023-11-11 12:{epoch + 10}:22,754 - INFO: Epoch {epoch:04d} in static KGE "
                     f"| Ave Loss: {8.0 - epoch * 0.3:.4f} ")
    return lines


def test_the_last_zero_based_epoch_reaches_the_plan(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _kge(5))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    assert data["total_steps"] == data["target_steps"] == 1500  # 5 epochs of 300 batches


def test_a_zero_based_epoch_short_of_the_plan_is_not_the_end(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _kge(4))
    assert data["terminal_state"] == "RUNNING"
    assert data["total_steps"] == 1200  # each summary closes its epoch: 4 × 300


@pytest.mark.parametrize(("line", "sizes", "epochs"), [
    ("Data size: 149690, batch size: 500, training epoch: 30.", True, 30),
    ("training epoch: 3, loss: 0.25", False, None),  # a metric line's counter
    ('  "num_train_epochs": 3,', False, 3),  # trainer_state.json
    ("total epochs: 12", False, 12),
    ("train_epoch: 4", True, None),
])
def test_a_plan_of_epochs_said_among_sizes(line: str, sizes: bool, epochs: int | None) -> None:
    assert planned_epochs(line, sizes=sizes) == epochs


# --- a statistics report set apart by indentation (MLatom's Fortran part) -----------------
# MLatomF prints, per data set, `Statistical analysis for N entries in the … set` and its
# `MAE =`, `RMSE =` lines, then `FINAL ML MODEL CREATED AND SAVED` (dralgroup/MLatom,
# mlatom_fortran_kreg_krr_report_blocks_final_ml_model_created_and_saved.log)


def _statistics(count: int, which: str, mae: str) -> list[str]:
    # (each set's figures differ, as MLatom's do: the same line said twice is skipped)
    return [" Analysis for values", f" Statistical analysis for {count} entries in the {which} set",
            f"   MAE =           {mae}", f"   MSE =          -0.0000000010{count}",
            f"   RMSE =           0.0000004941{count}",
            f"   correlation coefficient =           0.9999999999{count}",
            "   linear regression of {y, y_est} by f(a,b) = a + b * y",
            f"     R^2 =           0.9999999999{count}", f"     a =          -0.0000000090{count}",
            "   largest positive outlier", f"     error =           0.0000020541{count}",
            f"     index = {count // 2}", ""]


def _mlatom() -> list[str]:
    return [" MLatomF started on 28.02.2022 at 13:48:28",
            " Optimal value of lambda is          0.00000000000189",
            *_statistics(361, "sub-training", "0.0000002913728"),
            *_statistics(90, "validation", "0.0000003101810"),
            " CREATE AND SAVE FINAL ML MODEL", "",
            *_statistics(451, "training", "0.0000002910736"),
            " FINAL ML MODEL CREATED AND SAVED", "", " Wall-clock time:       3.27 sec",
            " MLatomF terminated on 28.02.2022 at 13:48:32"]


def test_indented_report_blocks_for_each_set_are_records() -> None:
    parser = LogParser()
    records = [r for r in parser.feed_lines(_mlatom()) if r.fmt == "report-block"]
    assert [sorted(r.metrics)[:2] for r in records] == [
        ["a", "correlation_coefficient"], ["eval/a", "eval/correlation_coefficient"],
        ["a", "correlation_coefficient"]]
    assert records[1].metrics["eval/mae"] == pytest.approx(3.10181e-07)


def test_a_report_printed_once_is_none() -> None:
    # One block, no second with its names: a configuration's dump, left to the formats.
    parser = LogParser()
    records = parser.feed_lines(_statistics(361, "sub-training", "0.0000002913728"))
    assert not [r for r in records if r.fmt == "report-block"]


def test_the_final_model_created_and_saved_ends_the_run(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _mlatom())
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")


def test_announcing_the_final_model_is_not_its_save() -> None:
    parser = LogParser()
    records = parser.feed_lines([" CREATE AND SAVE FINAL ML MODEL"])
    assert not [e for r in records for e in r.events if e.kind is EventKind.COMPLETED]


# --- TF1 Estimator: `Loss for final step` once train() returns -----------------------------
# tensorflow_estimator/python/estimator/estimator.py: `logging.info('loss = %s, step = %s')`
# (LoggingTensorHook), `_write_dict_to_summary`'s `Saving dict for global step %d: %s`, and
# `_train_with_estimator_spec`'s `logging.info('Loss for final step: %s.', loss)`
# (tf1_estimator_colab_dmn_babi_train_and_evaluate_step_2001_loss_for_final_step.log)


def _estimator(final: bool) -> list[str]:
    lines = ["Start train and evaluate loop. The evaluate will happen after every checkpoint."]
    for step in range(0, 1001, 100):
        lines.append(f"loss = {3.7 / (1 + step / 100):.8f}, step = {step} (57.105 sec)")
        lines.append("global_step/sec: 1.75133")
        if step and step % 200 == 0:
            lines.append(f"Saving dict for global step {step}: acc = 0.9, global_step = {step}, "
                         f"loss = 0.27265805")
    lines.append("Saving checkpoints for 1001 into ../model/dmn/model.ckpt.")
    if final:
        lines.append("Loss for final step: 0.0014298395.")
    return lines


def test_loss_for_final_step_names_a_value_not_a_step() -> None:
    parsed = parse_key_values("Loss for final step: 0.0014298395.")
    assert parsed is None or parsed.step is None


def test_loss_for_final_step_ends_an_estimator_run(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _estimator(final=True))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    assert data["total_steps"] == 1000


def test_without_it_the_estimator_run_is_not_over(tmp_path: Path) -> None:
    assert verdict_of(tmp_path, _estimator(final=False))["terminal_state"] == "RUNNING"


# --- a pretty-printed JSON document: trainer_state.json ------------------------------------
# transformers/trainer_callback.py, TrainerState.save_to_json: `json.dumps(
# dataclasses.asdict(self), indent=2, sort_keys=True)`; `log_history` holds the dicts
# Trainer.log wrote (training records, `eval_*` evaluations, the closing `train_runtime`).


def _trainer_state(last_step: int, max_steps: int = 60, nan_at: int | None = None) -> str:
    history: list[dict[str, float]] = []
    for step in range(10, last_step + 1, 10):
        loss = float("nan") if step == nan_at else 1.4 - step / 100
        history.append({"epoch": step / 20, "grad_norm": 2.0, "learning_rate": 5e-5 * (
            1 - step / max_steps), "loss": loss, "step": step})
        if step % 20 == 0:
            history.append({"epoch": step / 20, "eval_accuracy": 0.5 + step / 200,
                            "eval_loss": 1.2 - step / 100, "eval_runtime": 3.1, "step": step})
    if last_step == max_steps:
        history.append({"epoch": 3.0, "step": max_steps, "total_flos": 1.2e8,
                        "train_loss": 1.1, "train_runtime": 120.5,
                        "train_samples_per_second": 40.1})
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": last_step / 20,
             "eval_steps": 20, "global_step": last_step, "is_hyper_param_search": False,
             "log_history": history, "logging_steps": 10, "max_steps": max_steps,
             "num_train_epochs": 3, "save_steps": 20, "stateful_callbacks": {
                 "TrainerControl": {"args": {"should_save": True}, "attributes": {}}},
             "total_flos": 1.2e8, "train_batch_size": 8, "trial_name": None}
    return json.dumps(state, indent=2, sort_keys=True)


def test_the_records_of_a_trainer_state_are_its_log_history() -> None:
    parser = LogParser()
    records = [r for r in parser.feed_lines(_trainer_state(40).splitlines())
               if r.fmt == "json-document"]
    assert [r.step for r in records if "loss" in r.metrics] == [10, 20, 30, 40]
    evaluations = [r for r in records if "eval_loss" in r.metrics]
    assert [r.step for r in evaluations] == [20, 40]
    assert "loss" not in evaluations[0].metrics
    assert parser.target == 60 and parser.plan.epochs == 3


def test_a_finished_trainer_state_is_a_finished_run(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _trainer_state(60).splitlines())
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    assert (data["total_steps"], data["target_steps"]) == (60, 60)


def test_a_trainer_state_short_of_its_plan_is_not(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _trainer_state(40).splitlines())
    assert data["terminal_state"] != "SUCCEEDED"
    assert (data["total_steps"], data["target_steps"]) == (40, 60)


def test_a_nan_loss_in_a_trainer_state_is_seen(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _trainer_state(40, nan_at=30).splitlines())
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}
    assert data["decision"] == "NO-GO"


def test_a_configuration_printed_as_a_document_keeps_its_plan() -> None:
    # A dict of settings, not a list of records: its lines are left to the formats.
    parser = LogParser()
    parser.feed_lines(["{", '  "max_steps": 500,', '  "num_epochs": 4', "}",
                       "step=10 loss=2.0"])
    assert parser.target == 500 and parser.plan.epochs == 4


def test_a_lone_bracket_in_a_log_does_not_swallow_the_lines_after_it() -> None:
    # Not a document: its next line begins no JSON. Hugging Face's dicts after it are
    # read as ever.
    parser = LogParser()
    records = parser.feed_lines(["[", "Starting training", "[", "  {'loss': 2.0, 'epoch': 0.1}",
                                 "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 0.2}"])
    assert [r.metrics.get("loss") for r in records if "loss" in r.metrics] == [2.0, 1.5]


def test_brackets_nested_without_end_are_no_document_and_hold_no_memory():
    # Hostile input: a line of `[` after another, never closed.
    from babysit.parsing.json_document import JsonDocument

    document = JsonDocument()
    for _ in range(10_000):
        if document.wants("["):
            document.read("[")
    assert len(document._stack) <= 64
    assert LogParser().feed_lines(["[", *["["] * 500, "step 3 | loss 2.0"])[-1].metrics == {
        "loss": 2.0}
