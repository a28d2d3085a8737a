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


def test_a_json_record_giving_its_step_of_the_plan_as_text(tmp_path: Path):
    # ms-swift's logging.jsonl: `"global_step/max_steps": "410/438"`, then the Hugging Face
    # Trainer's closing record with the same fields.
    lines = []
    for step in range(10, 440, 10):
        step = min(step, 438)
        lines.append(f'{{"loss": {1.0 / (1 + step / 50):.5f}, "learning_rate": 1e-05, '
                     f'"epoch": {step / 438:.4f}, "global_step/max_steps": "{step}/438", '
                     f'"percentage": "{100 * step / 438:.2f}%", "remaining_time": "1m"}}')
    lines.append('{"train_runtime": 2959.8, "train_loss": 0.284, "epoch": 1.0, '
                 '"global_step/max_steps": "438/438", "percentage": "100.00%"}')
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert (artifact["total_steps"], artifact["target_steps"]) == (438, 438)


def test_training_time_said_with_its_unit_is_the_closing_summary():
    assert _kinds("Finished. Total elapsed time (h:m:s): 0:17:19. Training time (h:m:s): "
                  "0:14:06.") == [("completed", "summary")]


def test_a_data_pass_bar_finishing_first_is_no_earlier_lap_of_the_training_bar(
        tmp_path: Path):
    # verl: vLLM's graph-capture bar finishes before training; the training bar then
    # runs once to its total (drawn twice on its last line) at epoch 4 of its records.
    lines = [f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): {100 * n // 67}%|###| "
             f"{n}/67 [00:0{n // 20}<00:03, 20.10it/s]" for n in (0, 30, 67)]
    for step in range(1, 241):
        lines.append(f"step:{step} - actor/pg_loss:{-0.01 - step * 1e-5:.6f} - "
                     f"training/epoch:{(step - 1) // 48} - critic/score/mean:{0.3 + step / 1000}")
        lines.append(f"Training Progress: {100 * step // 240}%|#####| {step}/240 "
                     f"[{step // 60}:{step % 60:02d}:00<1:00:00, 130.00s/it]")
    lines[-1] += lines[-1]  # the bar redrawn on the same line
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["total_steps"], artifact["target_steps"]) == (240, 240)


def test_a_training_split_then_a_bare_count_is_the_loop_counter():
    from babysit.parsing.leading_counter import LeadingCounter

    counter = LeadingCounter()
    read = [counter.read(f"Train {n}, loss: 1.2, train acc: 0.9") for n in (0, 1, 2)]
    assert read == [None, (1, None), (2, None)]
    assert counter.read("Test 2, loss: 1.5, test acc: 0.8") is None


def test_done_alone_after_a_loggers_timestamp_closes_the_run(tmp_path: Path):
    # DiT's train.py: `logger.info("Done!")` once its loop is over, under the logger's
    # `[%(asctime)s]` head.
    lines = [f"[2024-10-05 17:{m:02d}:03] (step={step:07d}) Train Loss: {0.2 - step / 1e5:.4f}, "
             f"Train Steps/Sec: 1.69" for m, step in enumerate(range(100, 5100, 100))]
    lines += ["[2024-10-05 17:56:02] Saved checkpoint to results/004-DiT-XL-2/checkpoints/"
              "0005000.pt", "[2024-10-05 17:56:05] Done!"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
