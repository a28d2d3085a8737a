"""Shapes read and judged since the thirty-first session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- Settings printed whole are no records --------------------------------------------------


_OPTIMIZER = ["optimizer_class_param:", "SparseSGD (", "Parameter Group 0", "    dampening: 0",
              "    lr: 0.1", "    momentum: 0.9", "    nesterov: False", "    weight_decay: 0", ")"]


def _noilin(epochs: int, last: int, robust: list[float] | None = None) -> list[str]:
    lines = [f"Namespace(dataset='cifar10', epochs={epochs}, lr_max=0.1, net='ResNet18', "
             "num_steps=10, optimizer='sgd')", "==> Load Model", *_OPTIMIZER]
    for e in range(1, last + 1):
        pgd = robust[e - 1] if robust else 0.2 + 0.3 * e / epochs
        lines.append(f"Epoch: [{e} | {epochs}] | Train Time: 111.00 s | Natural Test Acc "
                     f"{0.3 + 0.5 * e / epochs:.4f} | PGD10 Test Acc {pgd:.4f} | Noise Rate "
                     f"0.6000 | Valid Acc {pgd + 0.001:.4f}")
    return lines


def test_a_pytorch_optimizers_repr_is_settings_not_steps():
    records = _records(_noilin(200, 5))
    assert [r.step for r in records] == [None] * 5
    assert [r.epoch for r in records] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_measures_between_pipes_named_in_words_are_read():
    record = _records(_noilin(120, 1))[0]
    assert record.metrics["natural_test_acc"] == 0.3042
    assert record.metrics["pgd10_test_acc"] == 0.2025
    assert record.metrics["valid_acc"] == 0.2035
    assert "noise_rate" not in record.metrics  # a setting between pipes, no measure


def test_a_run_whose_epochs_follow_an_optimizers_repr_finishes(tmp_path: Path):
    artifact = verdict_of(tmp_path, _noilin(200, 200))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


_CONFIG = ["import os", "from easydict import EasyDict as edict", "__C = edict()", "cfg = __C",
           "__C.SEED = 3035 # random seed,  for reporduction",
           "__C.LR = 1e-5 # learning rate", "__C.LR_DECAY = 0.995 # decay rate",
           "__C.LR_DECAY_START = -1 # when training epoch is more than it",
           "__C.NUM_EPOCH_LR_DECAY = 1 # decay frequency", "__C.MAX_EPOCH = 50",
           "__C.PRINT_FREQ = 30"]


def test_a_python_config_module_copied_into_the_log_is_settings():
    assert _records(_CONFIG) == []
    parser = LogParser()
    parser.feed_lines(_CONFIG)
    assert parser.plan.epochs == 50


# -- A bare number under a banner's rule heads its epoch's block ----------------------------


def _c3(last: int) -> list[str]:
    rule = "===============+++++++++++++++==============="
    lines = [*_CONFIG, "#" + "=" * 80, ""]
    for e in [*range(0, 25, 5), *range(25, last + 1)]:
        lines += [rule, str(e), "", f"  [mae {116 - e:.4f} mse {197 - e:.4f}], "
                  f"[val loss {0.18 - e * 0.001:.4f}]", "", rule, ""]
    return lines


def test_a_bare_number_under_a_rule_is_the_epoch_of_its_block():
    assert [r.epoch for r in _records(_c3(27))] == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 26.0, 27.0]


def test_a_run_at_its_planned_last_epoch_under_rules_finishes(tmp_path: Path):
    artifact = verdict_of(tmp_path, _c3(49))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    artifact = verdict_of(tmp_path, _c3(30))
    assert artifact["terminal_state"] == "RUNNING"


def test_a_bare_number_not_under_a_rule_is_no_epoch():
    lines = [*_c3(26)]
    lines[lines.index("25") - 1] = "evaluating"
    assert 25.0 not in [r.epoch for r in _records(lines)]


# -- NaN and zero ---------------------------------------------------------------------------


def test_a_row_of_a_counter_then_every_metric_nan_is_non_finite(tmp_path: Path):
    # RAFT's logger: `[step, lr]` then each metric, every one NaN
    row = "[   100,  0.0000078]        nan,        nan,        nan,   nan"
    artifact = verdict_of(tmp_path, [row])
    assert artifact["decision"] == "NO-GO"
    assert "nan-inf" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_row_of_numbers_with_one_nan_among_many_is_no_finding(tmp_path: Path):
    artifact = verdict_of(tmp_path, ["[   100,  0.0000078]     0.5123,     0.4211,     nan,   1.2"])
    assert "nan-inf" not in {a["type"] for a in artifact["anomalies_detected"]}


def _zero_loss(grad: float) -> list[str]:
    return [f"{{'loss': 0.0, 'grad_norm': {grad}, 'learning_rate': {1e-5 - i * 7e-10}, "
            f"'epoch': 0.0}}" for i in range(5)]


def test_a_loss_and_grad_norm_both_exactly_zero_from_the_start_is_a_blocker(tmp_path: Path):
    artifact = verdict_of(tmp_path, _zero_loss(0.0))
    assert artifact["decision"] == "NO-GO"
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker"


def test_a_zero_loss_beside_a_moving_grad_norm_stays_high(tmp_path: Path):
    lines = [f"{{'loss': 0.0, 'grad_norm': {0.5 + i}, 'learning_rate': 1e-05, 'epoch': 0.0}}"
             for i in range(5)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] != "NO-GO"


# -- Rank correlations are scores -----------------------------------------------------------


def test_a_rank_correlation_is_higher_is_better():
    from babysit.metric_names import eval_direction
    assert eval_direction("eval_stsb_spearman") == 1
    assert eval_direction("eval_avg_sts") == 1
    assert eval_direction("val_pearson") == 1
    assert eval_direction("eval_ndcg@10") == 1


# -- sealed-79 ------------------------------------------------------------------------------


def test_a_word_that_begins_with_inf_or_nan_is_no_non_finite_value(tmp_path: Path):
    # Sign Language Transformers logs each sequence's glosses: the sign for "inform"
    lines = []
    for step in range(100, 1100, 100):
        lines += [f"2024-09-30 21:40:06,582 Epoch   {step // 50}: Total Training Recognition Loss "
                  f"{60 - step / 50:.2f}  Total Training Translation Loss {1400 - step:.2f} ",
                  "2024-09-30 21:41:24,619 \tGloss Reference :\tINFORM",
                  "2024-09-30 21:44:22,294 \tGloss Hypothesis:\tINFORM"]
    artifact = verdict_of(tmp_path, lines)
    assert "nan-inf" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_stricter_score_at_its_floor_beside_its_family_leaving_it_is_no_finding(
        tmp_path: Path):
    # one or two words a target: no 4-gram to match, so BLEU-4 stays 0 while BLEU-1..3 rise
    lines = []
    for i in range(1, 21):
        bleu = 0.0 if i < 9 else 20.0 + i
        lines.append(f"step {i * 100} | loss {5.0 / i:.4f}")
        lines.append(f"eval step {i * 100} | val_bleu_1 {bleu:.2f} | val_bleu_3 {bleu:.2f} | "
                     f"val_bleu_4 0.00")
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "not-learning" and "bleu_4" in a["description"]
                and "resolved" not in a["description"]]


def test_a_negative_loss_scale_is_no_scale(tmp_path: Path):
    # Megatron when DeepSpeed's engine owns the optimizer: `loss scale: -1.0 | grad norm: 0.000`
    lines = [f" iteration {i:8d}/    1000 | consumed samples: {i * 1024:12d} | elapsed time per "
             f"iteration (ms): 141096.8 | learning rate: {i * 1.875e-5:.3E} | global batch size: "
             f" 1024 | lm-loss: {12.4 - i * 0.1:.6E} | loss scale: -1.0 | grad norm: 0.000 | "
             f"num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |"
             for i in range(1, 30)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "CONDITIONAL"
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "loss-scale"
                or (a["type"] == "not-learning" and "resolved" not in a["description"])]


def test_a_norm_in_bars_and_the_elapsed_time_in_brackets_are_read():
    records = _records([f"step {s:6d}  train {1.2 - s / 1000:.4e}  |g| 9.48e-01  [{s // 10}s]"
                        for s in range(100, 600, 100)])
    # (a shape read once the run printed it again: `train` alone is no known name)
    assert [r.step for r in records] == [200, 300, 400, 500]
    assert records[0].metrics == {"train": 1.0, "grad_norm": 0.948}


def test_where_a_resumed_run_continues_to_is_its_plan():
    from babysit.parsing.plan import target_in
    assert target_in("Resumed from results/encoder_last.pt at step 20000, continuing to "
                     "250000") == 250000
    assert target_in("training until step 5000") == 5000
    assert target_in("Training for 3000 steps") == 3000


def test_a_figure_over_a_count_of_batches_is_the_figure():
    from babysit.parsing.formats import parse_key_values
    parsed = parse_key_values("Mean test loss of 10 batches: 2.2928123235702516.")
    assert parsed is not None and parsed.metrics == {"mean_test_loss": 2.2928123235702516}


# -- sealed-80 ------------------------------------------------------------------------------


def _pymarl(blocks: int, loss_rises: bool = True) -> list[str]:
    lines = ["[INFO 14:00:00] my_main Beginning training for 500005 timesteps"]
    for b in range(1, blocks + 1):
        t_env = b * 10_000 + 17
        ret = 1.5 + 0.5 * b
        loss = 0.02 * b if loss_rises else 0.3 / b
        lines += [f"[INFO 14:{b:02d}:41] my_main Recent Stats | t_env: {t_env:10d} | Episode: "
                  f"{b * 450:8d}",
                  f"battle_won_mean:           {min(1.0, 0.05 * b):.4f}\tcpu_usage:"
                  f"                47.1667\tdead_allies_mean:          2.9919",
                  f"ep_length_mean:           22.8848\tepsilon:                   "
                  f"{max(0.05, 1 - 0.1 * b):.4f}\tgrad_norm:                 1.0645\tloss:"
                  f"                      {loss:.4f}",
                  f"q_taken_mean:              {0.1 * b:.4f}\treturn_mean:               "
                  f"{ret:.4f}\ttd_error_abs:              0.2257",
                  f"test_battle_won_mean:      {min(1.0, 0.06 * b):.4f}\ttest_return_mean:"
                  f"          {ret + 1:.4f}",
                  f"[INFO 14:{b:02d}:47] my_main Updated target network"]
    return lines


def test_a_stats_block_under_its_head_is_one_record_at_the_heads_step():
    records = [r for r in _records(_pymarl(4)) if "loss" in r.metrics]
    assert [r.step for r in records] == [10_017, 20_017, 30_017, 40_017]
    assert {"loss", "return_mean", "td_error_abs", "test_return_mean"} <= records[0].metrics.keys()


def test_a_td_loss_rising_with_its_returns_is_no_divergence_blocker(tmp_path: Path):
    artifact = verdict_of(tmp_path, _pymarl(12))
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "divergence" and a["severity"] in ("high", "blocker")]


def test_a_loss_split_named_bare_under_a_loss_heading_is_read(tmp_path: Path):
    # funcwj's separation trainers
    line = ("2020-02-15 00:00:31,027 [trainer.py:150 - INFO ] Loss(time/mini-batch) - Epoch  "
            "1: train = nan(1581.14s/2500) | dev = nan(152.82s/625)")
    artifact = verdict_of(tmp_path, [line])
    assert artifact["decision"] == "NO-GO"
    assert "nan-inf" in {a["type"] for a in artifact["anomalies_detected"]}


def test_training_for_all_its_epochs_done_closes_the_run(tmp_path: Path):
    head = "20-02-04 22:57:12 [/data1/trainer/trainer_Tasnet.py:145 - INFO ] "
    lines = [f"{head}Finished *** <epoch:{e}, iter:352, lr:1e-03, loss:{-e / 10:.3f}, Total "
             f"time:4.147 min> " for e in range(1, 21)]
    artifact = verdict_of(tmp_path, [*lines, f"{head}Training for 20/20 epoches done!"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    artifact = verdict_of(tmp_path, [*lines[:10], f"{head}Training for 10/20 epoches done!"])
    assert artifact["terminal_state"] != "SUCCEEDED"


def test_an_exception_in_training_before_the_done_line_is_a_failure(tmp_path: Path):
    head = "2024-10-07 15:27:46.647 | {} | yolox.core.trainer:{} - "
    lines = [head.format("INFO    ", "before_epoch:305") + "---> start train epoch 1",
             head.format("ERROR   ", "train:96") + "Exception in training: Bad StatusOr "
             "access: INVALID_ARGUMENT: RunNeuronCCImpl: error condition !(result != __null): ",
             head.format("INFO    ", "after_train:287") + "Training of experiment is done and "
             "the best AP is 0.00"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")


# -- sealed-81 ------------------------------------------------------------------------------


def _openpcdet(last_epoch: int, epochs: int = 10) -> list[str]:
    head = "2026-06-19 23:25:42,099   INFO  "
    lines = [f"{head}epochs                   {epochs}"]
    for e in range(1, last_epoch + 1):
        for b in (0, 449, 927):
            lines.append(f"{head}Train: {e:4d}/{epochs} ({100 * e // epochs:3d}%) [{b:4d}/928 "
                         f"({100 * b // 927:3d}%)]  Loss: {0.9 / e:.4f} ({0.9 / e:.3f})  LR: "
                         f"{1e-3 / e:.3e}  Time cost: 02:54/00:00 [29:20/00:00]  Acc_iter "
                         f"{(e - 1) * 928 + b + 1:<9d} Data time: 0.00(0.01)")
    return lines


def test_a_phase_label_with_the_epoch_and_the_batch_each_with_its_share_is_read():
    records = _records(_openpcdet(2))
    assert [(r.epoch, "train" in r.metrics) for r in records][-1][1] is False
    assert records[-1].step == 928 + 927


def test_the_last_batch_of_the_last_planned_epoch_finishes_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_openpcdet(10), "2026-06-19 23:27:51,178   INFO  "
                                     "**********************End evaluation kitti_models/second"
                                     "**********************"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert verdict_of(tmp_path, _openpcdet(6))["terminal_state"] == "RUNNING"


def _ocp(evals: list[float]) -> list[str]:
    head = "2023-11-15 17:3{}:57 (INFO): "
    lines = []
    for e, val in enumerate(evals, start=1):
        for s in range(1, 8):
            step = (e - 1) * 1500 + s * 200
            loss = 240.0 / (1 + step / 500)
            lines.append(head.format(s % 10) + f"forces_mae: {loss / 600:.2e}, energy_mae: "
                         f"{loss:.2e}, loss: {loss:.2e}, lr: 1.00e-03, epoch: {step / 1500:.2e}, "
                         f"step: {step:.2e}")
        lines += [head.format(8) + "Evaluating on val.",
                  head.format(9) + f"forces_mae: 0.2706, energy_mae: {val / 10:.4f}, loss: "
                  f"{val:.4f}, epoch: {e:.4f}"]
    return lines


def test_an_announced_evaluations_figures_are_the_evaluations(tmp_path: Path):
    records = _records(_ocp([150.0, 131.0, 133.0]))
    evals = [r for r in records if "val_loss" in r.metrics]
    assert [r.metrics["val_loss"] for r in evals] == [150.0, 131.0, 133.0]
    assert all("loss" not in r.metrics for r in evals)
    artifact = verdict_of(tmp_path, _ocp([150.0, 131.0, 133.0, 134.0, 136.0, 138.0]))
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "loss-spike" and a["severity"] in ("high", "blocker")]


# -- sealed-82 ------------------------------------------------------------------------------


def _xgboost_cli(rounds: int, closed: bool) -> list[str]:
    lines = ["[16:52:53] 10500000x28 matrix with 294000000 entries loaded from ../data/higgs.train"]
    for r in range(rounds):
        lines += [f"[16:53:{r % 60:02d}] boosting round {r}, {r * 7.6:.2f} sec elapsed",
                  f"[16:53:{r % 60:02d}] src/tree/updater_prune.cc:74: tree pruning end, 1 roots, "
                  "502 extra nodes, 0 pruned nodes, max_depth=8",
                  f"[16:53:{r % 60:02d}] [{r}]\ttest-auc:{0.76 + 0.08 * r / rounds:.6f}"]
    if closed:
        lines.append("[17:56:50] update end, 3835.9 sec in all")
    return lines


def test_the_xgboost_command_lines_update_end_closes_its_rounds(tmp_path: Path):
    artifact = verdict_of(tmp_path, _xgboost_cli(60, closed=True))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert verdict_of(tmp_path, _xgboost_cli(60, closed=False))["terminal_state"] != "SUCCEEDED"
