"""Shapes read and judged since the forty-fifth session, each on lines written in the real
shape of a public log (sealed-144 and sealed-145, each scored blind first), and the review
leftovers of the forty-fourth."""

from __future__ import annotations

from pathlib import Path

from tests.parsing.test_shapes_round44 import _open, _records
from tests.rules.test_loss_rules import verdict_of

# -- review leftovers ---------------------------------------------------------------------

def test_a_kl_weight_warmed_a_little_every_step_still_leaves_a_divergence_judged(
        tmp_path: Path):
    lines = []
    for step in range(1, 401):
        loss = 2.0 - step / 400 if step <= 200 else 1.5 + (step - 200) * 0.2
        lines.append(f"step {step} | loss {loss:.4f} | kl_weight {step / 400:.5f}")
    opened = _open(verdict_of(tmp_path, lines))
    assert ("divergence", "blocker") in opened or ("divergence", "high") in opened


def test_a_score_named_a_coefficient_is_no_loss_weight():
    from babysit.core.series import _LOSS_WEIGHT
    for name in ("dice_coef", "val_dice_coef", "jaccard_coef", "matthews_corrcoef"):
        assert not _LOSS_WEIGHT.match(name), name
    for name in ("kl_coef", "recon_coef", "beta", "lambda_gp", "cls_weight"):
        assert _LOSS_WEIGHT.match(name), name


def test_a_best_heading_gives_back_the_lines_of_a_log_that_indents_its_training():
    lines = ["Best model so far:"] + [f"  epoch {epoch} loss {3.0 / epoch:.4f} acc 0.{epoch:02d}"
                                     for epoch in range(1, 81)]
    records = [r for r in _records(lines) if r.metrics and "loss" in r.metrics]
    assert 30 <= len(records) <= 41  # the block is bounded; the rest are read


# -- the first round (sealed-144 and sealed-145) ------------------------------------------

def _sign_epochs(wers: list[float]) -> list[str]:
    return [f"Train Loss: {0.027 - 0.0001 * n:.4f} - Dev WER: {wer:.4f} - Best Dev WER: "
            f"{min(wers[:n + 1]):.4f} - Best epoch: {n + 1} - Learning Rate: 0.00001000"
            for n, wer in enumerate(wers)]


def test_a_word_error_rate_above_100_on_many_evaluations_is_not_learning(tmp_path: Path):
    wers = [653.5, 845.5, 762.3, 793.3, 612.9, 515.6, 468.8, 523.6, 502.0, 390.8, 399.1]
    lines = [*_sign_epochs(wers), "Early stopping triggered! No improvement for 10 "
             "consecutive epochs. Best WER: 390.7638 - Best epoch: 10"]
    artifact = verdict_of(tmp_path, lines)
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_word_error_rate_that_starts_above_100_and_falls_is_no_alarm(tmp_path: Path):
    # a transformer ASR's first evaluations insert words, then it learns (sealed-113)
    wers = [116.3, 110.2, 120.8, 103.9, 82.9, 54.8, 37.0, 29.9, 27.8, 27.2, 24.2, 23.8]
    assert not any(kind == "not-learning" for kind, _ in _open(
        verdict_of(tmp_path, _sign_epochs(wers))))


def test_a_word_error_rate_at_100_is_a_model_that_emits_nothing_yet(tmp_path: Path):
    wers = [100.0] * 12
    assert not any(kind == "not-learning" and severity == "blocker"
                   for kind, severity in _open(verdict_of(tmp_path, _sign_epochs(wers))))


def test_a_best_restated_after_every_epoch_is_no_end_of_the_run():
    from babysit.config import RuleSettings
    from babysit.core.series import MetricSeries
    from babysit.model import Record
    series = MetricSeries(RuleSettings())
    for epoch in range(4):
        series.absorb(Record(epoch=float(epoch), metrics={"loss": 800.0 - epoch}))
        series.absorb(Record(metrics={"dev_wer": 170.0 + epoch}))
        series.absorb(Record(epoch=float(epoch), metrics={"best_dev": 170.0}))
    assert series.new_runs <= 1  # the first restatement may read as an end; no more


def test_a_pandas_history_with_spaced_column_names_is_read():
    lines = [",epoch,batch loss,batch acc,train loss,train acc,val loss,val acc",
             "0,0,0.009965234436094761,0.0,,,,", "1,0,0.009934984147548676,0.0,,,,",
             "2,0,0.007410614751279354,0.0,,,,"]
    records = [r for r in _records(lines) if r.metrics]
    assert records and records[-1].metrics["batch_loss"] == 0.007410614751279354


def test_a_training_accuracy_of_zero_throughout_beside_a_held_out_one_at_zero_is_a_blocker(
        tmp_path: Path):
    lines = [",epoch,batch loss,batch acc,train loss,train acc,val loss,val acc"]
    lines += [f"{n},0,{0.01 / (n + 1):.6g},0.0,,,," for n in range(60)]
    lines.append("60,0,,,2.15e-05,0.0,6.2e-07,0.0002")
    assert ("not-learning", "blocker") in _open(verdict_of(tmp_path, lines))


def test_an_evaluation_named_in_words_between_steps_is_read_at_its_step():
    lines = [f"eta: 9:37:45  iter: {i}  loss: 0.70{i // 100}  loss_classifier: 0.3666"
             for i in (200, 400, 600)]
    lines += ["=" * 100, "Detection evaluation mAp=0.0003", "=" * 100, "Loss: 0.3"]
    records = [r for r in _records(lines) if r.metrics]
    evaluation = [r for r in records if "eval/detection_evaluation_map" in r.metrics]
    assert evaluation and evaluation[0].step == 600 and not evaluation[0].sparse
    assert not any("eval/loss" in r.metrics for r in records)  # a bare figure is no evaluation


def test_an_evaluation_loss_worse_while_its_accuracy_is_at_its_best_is_a_notice(
        tmp_path: Path):
    lines = ["epoch,time(s),train_loss,test_loss,test_acc(%)"]
    for epoch in range(1, 61):
        test_loss = 0.9 - 0.01 * epoch if epoch <= 30 else 0.6 + 0.02 * (epoch - 30)
        lines.append(f"{epoch:03d},00019,{1.0 / epoch:.6f},{test_loss:.5f},"
                     f"{80 + epoch * 0.2:.2f}")
    opened = _open(verdict_of(tmp_path, lines))
    assert not any(kind == "eval-degradation" and severity in ("medium", "high", "blocker")
                   for kind, severity in opened)


def test_a_unit_after_a_csv_columns_name_leaves_its_direction():
    from babysit.rules.eval_names import evaluation_direction
    assert evaluation_direction("test_acc(%)") == 1
    assert evaluation_direction("test_loss[nats]") == -1


# -- the second round (sealed-146 and sealed-147) -----------------------------------------

def test_an_end_with_the_models_name_between_says_training_is_over():
    from babysit.parsing.completion_words import says_finished
    assert says_finished("INFO: End NHP train! Cost time: 0.552m")
    assert not says_finished("Done loading training data")
    assert not says_finished("End of epoch training")


def test_an_aggregate_over_a_count_of_runs_and_results_written_out_close_a_run():
    from babysit.parsing.closing import may_close
    assert may_close("2025-05-22 23:43:30,515 - root - INFO - metrics over 1 runs:")
    assert may_close("[OK] Results appended to: scripts/results/models_test_lead1_K6.csv")


def _recsys_epochs(ndcg: list[float]) -> list[str]:
    lines = ["Namespace(batch_size=256, data_name='Beauty', epochs=200, lr=0.001, patience=10)"]
    for epoch, value in enumerate(ndcg):
        lines += [f"{{'epoch': {epoch}, 'rec_loss': '{1.2 - 0.01 * epoch:.4f}'}}",
                  f"{{'Epoch': {epoch}, 'HIT@10': '{value + 0.2:.4f}', 'NDCG@10': '{value:.4f}'}}"]
    return lines


def test_a_loop_that_stops_its_configured_patience_after_its_best_stopped_early(
        tmp_path: Path):
    ndcg = [0.20 + 0.01 * n for n in range(15)] + [0.3395 - 0.0007 * n for n in range(1, 11)]
    lines = [*_recsys_epochs(ndcg),
             "{'Epoch': 0, 'HIT@10': '0.4935', 'NDCG@10': '0.3317'}"]  # the test pass
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_log_that_stops_sooner_after_its_best_than_its_patience_is_still_running(
        tmp_path: Path):
    ndcg = [0.20 + 0.01 * n for n in range(15)] + [0.3395 - 0.0007 * n for n in range(1, 6)]
    assert verdict_of(tmp_path, _recsys_epochs(ndcg))["terminal_state"] == "RUNNING"


def test_a_schedulers_patience_is_no_early_stop():
    from babysit.parsing.facts import configured_patience
    assert configured_patience("Namespace(epochs=200, patience=10)") == 10
    assert configured_patience('  "early_stopping_patience": 5,') == 5
    assert configured_patience("  - Scheduler patience: 5") is None
    assert configured_patience("ReduceLROnPlateau(patience=2)") is None


def test_an_evaluation_set_off_by_a_comma_is_read_in_a_log_of_epochs():
    lines = ["2025-05-22 23:40:45,996 - root - INFO - Epoch: 123, learning rate: 0.0001, "
             "train loss: 0.04762652",
             "2025-05-22 23:41:02,916 - root - INFO - validate average_precision, 0.97262706",
             "2025-05-22 23:40:46,055 - root - INFO - train average_precision, 0.97463018"]
    metrics = [r.metrics for r in _records(lines) if r.metrics]
    assert {"eval/validate_average_precision": 0.97262706} in metrics
    assert not any("train_average_precision" in m or "eval/train_average_precision" in m
                   for m in metrics)


def test_a_lead_step_qualifying_an_evaluation_is_no_step():
    lines = [f"[Epoch {epoch:02d}] Train masked-MSE=0.0{50 - epoch} | Val(step1) MAE=0.0826 "
             f"RMSE=0.1389 | Val(mean@K) MAE=0.0818 RMSE=0.1392" for epoch in range(1, 4)]
    assert all(r.step != 1 or r.epoch == 1 for r in _records(lines) if r.metrics)


def test_a_per_class_precision_undefined_is_named_for_its_class():
    from babysit.parsing.shapes import name_before
    line = "precision class 1 = nan"
    assert name_before(line, line.index("nan")) == "precision_class_1"
    line = "epoch 3 nan"
    assert name_before(line, line.index("nan")) is None


def test_a_csv_row_whose_quoted_cells_hold_reports_is_read_by_its_numbers():
    report = "\"{'precision': 0.8, 'recall': 0.7, 'f1-score': 0.75, 'support': 809}\""
    lines = ["ANSWER,QUESTION,eval_loss,epoch,train_loss"]
    lines += [f"{report},{report},{1.0 / epoch:.4f},{epoch},{0.5 / epoch:.4f}"
              for epoch in range(1, 5)]
    records = [r for r in _records(lines) if r.metrics]
    assert records and records[-1].metrics.get("eval_loss") == 0.25
    assert not any("precision" in r.metrics for r in records)


# -- the third round (sealed-148 and sealed-149) and the snapshots between ------------------

def test_a_loggers_bracketed_head_with_its_source_line_is_no_figure_anywhere_in_a_line():
    lines = ["Epoch 28:  81%|███▎   | 294/365 [28:32<06:53,  0.17it/s, v_num=4-21, "
             "train_step_timing in s=4.170][NeMo I 2025-03-04 08:28:28 wer:329] ",
             "[NeMo I 2025-03-04 08:28:03 wer:331] predicted:đựng toàn bộ"]
    assert not any("wer" in r.metrics for r in _records(lines) if r.metrics)


def test_a_best_after_each_of_several_models_still_ends_each():
    from babysit.config import RuleSettings
    from babysit.core.series import MetricSeries
    from babysit.model import Record
    series = MetricSeries(RuleSettings())
    for _model in range(3):
        for epoch in range(1, 51):
            series.absorb(Record(epoch=float(epoch), metrics={"loss": 2.0 / epoch}))
        series.absorb(Record(metrics={"best_test_acc": 0.76}))
    assert series.new_runs == 2


def test_a_banner_over_the_best_and_the_whole_runs_time_close_a_run():
    from babysit.parsing.closing import may_close
    assert may_close("=== BEST [cnn_davis_regB] === epoch 75 | MSE 0.2346 | CI 0.8921")
    assert may_close("params 800,417 | mean 3.4s/epoch | total 5.7 min")
