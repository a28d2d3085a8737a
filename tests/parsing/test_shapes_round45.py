"""Shapes read and judged since the forty-fifth session, each on lines written in the real
shape of a public log (sealed-144 and sealed-145, each scored blind first), and the review
leftovers of the forty-fourth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[Any]:
    parser = LogParser()
    return [r for r in (parser.feed(line) for line in lines) if r is not None] + parser.finish()


def _open(artifact: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


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
