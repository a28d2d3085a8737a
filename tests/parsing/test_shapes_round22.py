"""Shapes read and judged since the twenty-second session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

import math
import random
from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.rules.last_weights import final_evaluation_fell
from tests.rules.test_loss_rules import verdict_of


def _kinds(line: str) -> list[tuple[str, str]]:
    return [(event.kind.value, event.detail) for event in find_events(line)]


def _caffe_iterations(upto: int) -> list[str]:
    lines = []
    for it in range(100, upto + 1, 100):
        loss = 4.6 * math.exp(-it / 20000) + 0.8
        lines.append(f"I1230 20:{it // 1000 % 60:02d}:08.682876 23363 solver.cpp:237] "
                     f"Iteration {it}, loss = {loss:.5f}")
        lines.append(f"I1230 20:{it // 1000 % 60:02d}:08.682972 23363 sgd_solver.cpp:106] "
                     f"Iteration {it}, lr = 0.001")
    return lines


def test_ctrl_c_echoed_onto_the_next_line_is_a_stop_not_a_finish(tmp_path: Path):
    # The terminal echoes `^C` where the cursor stands; Caffe's SIGINT handler then stops
    # the solver and prints its usual closing lines: a cancelled run, not a finished one.
    lines = ["I1230 18:38:52.123 23363 solver.cpp:48] Initializing solver from parameters: ",
             "max_iter: 100000", *_caffe_iterations(5000),
             "I1230 20:51:24.031729 23363 solver.cpp:341] Iteration 5000, Testing net (#0)",
             "^CI1230 20:51:29.566437 23363 solver.cpp:391] Test interrupted.",
             "I1230 20:51:29.566483 23363 solver.cpp:309] Optimization stopped early.",
             "I1230 20:51:29.566496 23363 caffe.cpp:215] Optimization Done."]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("CANCELLED", "NO-GO")
    # A bare `^C` inside other text is no stop.
    assert not _kinds("regex [^C] matched")


def test_a_platform_saying_the_training_ended_with_a_non_zero_code_is_a_failure():
    assert _kinds("[Modelarts Service Log]Training end with return code: 250") == [
        ("exception", "Training end with return code: 250")]
    assert _kinds("process exited with code 137")[0][0] == EventKind.EXCEPTION.value
    # Status 0, or a helper's clean exit, says nothing of the training.
    assert not _kinds("worker process exited with code 0")
    assert not _kinds("[Modelarts Service Log]Training end with return code: 0")


def test_early_stopping_announced_as_a_setting_is_no_stop():
    assert not _kinds("Multiple eval metrics are present. Will use validation_rmse for "
                      "early stopping.")
    assert not _kinds("Training with early stopping.")
    assert _kinds("Epoch 00023: early stopping") == [("completed", "early-stop")]
    # A stop said in words of getting no better is one.
    assert _kinds("Stopping iteration because model did not get better in the last 25 "
                  "epochs") == [("completed", "early-stop")]


def _boosting_fit(rounds: int, start: float, floor: float) -> list[str]:
    out = ["Will train until validation_rmse hasn't improved in 50 rounds.", ""]
    for r in range(1, rounds + 1):
        train = floor + (start - floor) * math.exp(-r / 150)
        out.append(f"[{r}]\ttrain-rmse:{train:.6f}\tvalidation-rmse:{train * 1.08:.6f}")
    return out


def test_a_round_count_back_at_one_is_the_next_fit_not_the_first_getting_worse(
        tmp_path: Path):
    # One fit per target, their errors on different scales: the second fit's validation
    # error is no degradation of the first's.
    lines = _boosting_fit(400, 7.1, 5.6) + _boosting_fit(400, 90.0, 69.0)
    artifact = verdict_of(tmp_path, lines)
    open_degradations = [a for a in artifact["anomalies_detected"]
                         if a["type"] == "eval-degradation" and "resolved" not in
                         a["description"]]
    assert not open_degradations


def test_the_last_evaluation_falling_far_below_a_steady_level():
    steady = [0.82 + 0.004 * math.sin(i) for i in range(40)]
    found = final_evaluation_fell([*steady, 0.727], 1)
    assert found is not None and "0.727" in found
    # An ordinary last evaluation, or one a little lower, is no finding.
    assert final_evaluation_fell([*steady, 0.815], 1) is None
    # A loss (lower is better) jumping at the end is the same finding.
    assert final_evaluation_fell([1.0 - v for v in steady] + [0.30], -1) is not None


def test_a_finished_run_whose_last_evaluation_collapsed_is_not_go(tmp_path: Path):
    noise = random.Random(7)
    lines = []
    for epoch in range(1, 61):
        lines.append(f"[Train] epoch [{epoch}/60], loss:{3.0 - epoch * 0.02:.4f} class:pill")
        # (the one before the last above the level: the fall is one evaluation's, not a
        # streak the running rules would see)
        auc = {59: 0.828, 60: 0.727}.get(epoch, 0.82 + noise.gauss(0, 0.004))
        lines.append(f"[Eval] pill class RocAUC detection: {auc:.4f} at epoch {epoch}")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "CONDITIONAL"
    assert any(a["type"] == "eval-degradation" and "last evaluation" in a["description"]
               for a in artifact["anomalies_detected"])


def test_a_dev_score_falling_from_one_lucky_evaluation_is_no_degradation(tmp_path: Path):
    # A translation's dev BLEU on a plateau near 27 with one evaluation at 30: the two
    # after it are lower than the luck, not lower than the plateau.
    bleu = [20.0 + 7 * (1 - math.exp(-e / 5)) for e in range(1, 21)]
    bleu += [26.8, 30.0, 26.44, 25.65, 26.9, 27.1, 27.2, 26.6, 27.0, 27.3]
    lines = []
    for epoch, score in enumerate(bleu, start=1):
        lines.append(f"Train | Epoch: [{epoch}/{len(bleu)}] | Avg loss: {5 - epoch * 0.05:.3f}")
        lines.append(f"Eval | Avg loss: {4.6:.3f} | Eval | BLEU Score: {score:.3f}")
    artifact = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "eval-degradation" and "in a row" in a["description"]
                   and "30" in a["description"] for a in artifact["anomalies_detected"])


def test_the_run_saying_its_training_is_done_well_short_of_its_plan_ended(tmp_path: Path):
    # YOLOX's trainer prints its closing sentence from `after_train`, however the loop
    # left; at epoch 93 of 300 the run is over, not done. (Its logger's `after_train`
    # function name is no "after …" condition on the sentence.)
    lines = [f"2022-06-06 02:06:{i % 60:02d}.095 | INFO     | yolox.core.trainer:after_iter:260 "
             f"- epoch: {epoch}/300, iter: {i * 10}/174, mem: 8338Mb, iter_time: 0.158s, "
             f"total_loss: {2.5 - i * 0.01:.1f}, lr: 1.940e-03"
             for epoch in (91, 92, 93) for i in range(1, 18 if epoch < 93 else 16)]
    lines.append("2022-06-06 02:06:18.230 | INFO     | yolox.core.trainer:after_train:195 - "
                 "Training of experiment is done and the best AP is 58.41")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "ENDED" and artifact["decision"] == "CONDITIONAL"
    assert not _kinds("Training of epoch 3 is done")


def test_a_detectron2_record_whose_time_left_is_one_iteration_is_the_last(tmp_path: Path):
    lines = []
    for it in range(19, 1500, 20):
        eta = 1.55 * (1499 - it) if it < 1499 else 1.5489
        lines.append(f'{{"data_time": 0.28, "eta_seconds": {eta}, "iteration": {it}, '
                     f'"loss_cls": {0.9 * math.exp(-it / 400) + 0.03:.4f}, "lr": 0.00025, '
                     f'"time": 1.64, "total_loss": {1.9 * math.exp(-it / 400) + 0.3:.4f}}}')
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_coco_stats_lists_and_metric_names_in_other_languages_are_read():
    from babysit.parsing.formats import parse_json_line
    from babysit.rules.eval_names import evaluation_direction

    parsed = parse_json_line('{"train_loss": 20.8, "test_coco_eval_bbox": [0.31, 0.52, 0.3, '
                             '-1.0, 0.1, 0.2, 0.3, 0.4, 0.4, -1.0, 0.2, 0.5], "epoch": 3}')
    assert parsed is not None
    assert parsed.metrics["test_coco_eval_bbox_map"] == 0.31
    assert parsed.metrics["test_coco_eval_bbox_map50"] == 0.52
    # A Portuguese script's validation error falls as it improves; its training error
    # is no evaluation.
    assert evaluation_direction("erro_validação") == -1
    assert evaluation_direction("erro_treino") == 0


def test_a_run_not_learning_past_half_its_plan_is_a_blocker_while_it_runs(tmp_path: Path):
    lines = []
    for epoch in range(1, 9):
        lines.append(f"Epoch {epoch}/10")
        lines.append(f"863/863 [==============================] - 3s 4ms/step - loss: 0.6956 - "
                     f"auc: {0.4996 + 0.0001 * (epoch % 3):.4f} - val_loss: 0.6953 - "
                     f"val_auc: 0.5000")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in artifact["anomalies_detected"])
