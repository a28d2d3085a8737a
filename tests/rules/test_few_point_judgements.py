"""Judgements on few or sparse points (issue 24, learn7): a loss that jumps when too few
points came before it to know the noise, a classification error at its ceiling, a short
run whose loss went up, a loss that moves only in its last printed digit, and the
training objective under a name of its own. Lines are quoted in the shape of the public
logs each finding was written for (tests/fixtures/logs/public/, the log named)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import AnomalyType, Severity
from babysit.rules.last_digit import last_digit_unit, within_last_digit
from babysit.rules.objective_names import objective_key
from tests.rules.test_loss_rules import run_of, verdict_of


def _found(lines: list[str], kind: AnomalyType) -> list[tuple[Severity, bool, str]]:
    return [(a.severity, a.resolved, a.description) for a in run_of(lines).ledger.anomalies
            if a.type is kind]


def _megatron(iteration: int, loss: str) -> str:
    # sealed/megatron_deepspeed_bigscience_104b_grad_norm_spike_loss_jump.log
    return (f" iteration    {iteration}/  159576 | consumed samples:      1255856 | elapsed "
            f"time per iteration (ms): 80367.0 | learning rate: 3.000E-05 | global batch "
            f"size:   432 | lm loss: {loss} | loss scale: 65536.0 | grad norm: 12952.562 | "
            f"num zeros: 0.0 | number of skipped iterations:   0 | number of nan "
            f"iterations:   0 |")


def test_a_jump_in_an_excerpt_from_mid_run_is_a_notice_on_few_points():
    lines = [_megatron(11446, "3.062589E+00"), _megatron(11447, "3.114286E+00"),
             _megatron(11448, "7.712340E+00")]
    found = _found(lines, AnomalyType.LOSS_SPIKE)
    assert len(found) == 1
    severity, resolved, description = found[0]
    assert severity is Severity.MEDIUM and not resolved
    assert "2.48×" in description


def test_a_jump_off_a_resumed_runs_first_print_is_a_notice():
    # sealed/custom_qwen3_pretrain_resume_train_loss_jumps_10x_val_flat.log
    lines = [f"step   {47700 + 10 * i} | loss {v} | lr 1.79e-04 | grad 0.075 | 113.4k tok/s"
             for i, v in enumerate(["1.4684", "13.8450", "13.9949", "14.4119"])]
    found = _found(lines, AnomalyType.LOSS_SPIKE)
    assert [(s, r) for s, r, _ in found] == [(Severity.MEDIUM, False)]


def test_the_first_prints_of_a_run_from_its_start_jump_about_without_a_finding():
    # A healthy run's first steps (llamafactory DPO: 0.649, then 1.111 at step 3).
    lines = [f"step={s} loss={v}" for s, v in ((1, 0.6491), (2, 0.6402), (3, 1.111),
                                                (4, 0.62), (5, 0.6))]
    assert _found(lines, AnomalyType.LOSS_SPIKE) == []


def test_a_classification_error_at_100_on_sparse_evaluations_is_not_learning():
    # sealed/detr_stdout_class_error_100_not_learning_running.log: `Test:` lines after
    # epochs 0, 1 and 74 (steps 127, 255, 9599 of 128 per epoch), class_error 100.00.
    lines = []
    for step in (127, 255, 9599):
        lines.append(f"step={step} loss={30.0 - step / 1e4:.4f}")
        lines.append(f"step={step} eval/class_error=100.00 eval/loss=3.1")
    found = _found(lines, AnomalyType.NOT_LEARNING)
    assert any("eval/class_error" in d and not r for _, r, d in found)


def test_an_error_that_leaves_its_ceiling_early_says_nothing():
    lines = []
    for step, error in ((127, 100.0), (255, 98.5), (9599, 40.0)):
        lines.append(f"step={step} loss=30.0")
        lines.append(f"step={step} eval/class_error={error}")
    assert _found(lines, AnomalyType.NOT_LEARNING) == []


_TURI = ["+--------------+--------------+--------------+",
         "| Iteration    | Loss         | Elapsed Time |",
         "+--------------+--------------+--------------+"]


def test_a_ten_iteration_run_whose_loss_went_up_is_not_go(tmp_path: Path):
    # sealed-6/turicreate_object_detector_ascii_table_10_iterations_loss_up.log
    rows = [(1, "5.2557"), (2, "5.40362"), (3, "5.45125"), (4, "5.49206"), (5, "5.57774"),
            (6, "5.62333"), (10, "5.40187")]
    lines = [*_TURI, *(f"| {i:<12} | {v:<12} | {i * 0.9:.2f}s        |" for i, v in rows),
             _TURI[0]]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "CONDITIONAL"
    assert [(a["type"], a["severity"]) for a in data["anomalies_detected"]] == \
        [("not-learning", "high")]


def test_a_few_steps_wandering_about_the_start_are_no_finding():
    # sealed/litgpt_epoch_iter_step_loss_train_val_na_running.log: 3.724, 3.737, ... 3.656
    values = [3.724, 3.737, 3.730, 3.728, 3.731, 3.735, 3.725, 3.710, 3.689, 3.678]
    lines = [f"step={46 - 45 + i} loss={v}" for i, v in enumerate(values)]
    assert [r for _, r, _ in _found(lines, AnomalyType.NOT_LEARNING)] in ([], [True])


def test_a_loss_that_moves_only_in_its_last_digit_is_not_learning():
    # sealed-4/teach_hydra_progress_train_rf_flat_13_epochs.log (no step, per epoch)
    values = ["4.854e-01", *["4.855e-01"] * 9, "4.856e-01"]
    lines = [f"[13/12/22 10:24:34][teach.callback.progress][INFO] -    Epoch {e + 1}: "
             f"Train_rf {v}   Memory 9.8%" for e, v in enumerate(values)]
    still_open = [d for _, resolved, d in _found(lines, AnomalyType.NOT_LEARNING)
                  if not resolved]
    assert len(still_open) == 1 and "last printed digit" in still_open[0]


def test_a_last_digit_loss_that_later_falls_well_below_its_level_is_learning():
    # sealed-12/transformer_en_de_tmux_capture_chinese_epoch_lines_val_plateau_shell_prompt
    # .log: an epoch's running mean, `Loss: 4.6090` climbing one unit a print, then a
    # few epochs later down to 4.37 (then the shell's prompt: ENDED, where an open
    # finding would weigh high).
    values = [4.6086 + i / 10000 for i in range(10)] + [4.52, 4.45, 4.40, 4.37]
    lines = [f"Epoch:  {16 + i // 5} | Batch:  {10 * (i + 1):4d}/ 1330 | LR: 2.18e-04 |"
             f"Loss: {v:.4f} | Time: 3.0s" for i, v in enumerate(values)]
    found = [(r, d) for _, r, d in _found(lines, AnomalyType.NOT_LEARNING)
             if "last printed digit" in d]
    assert found and all(resolved for resolved, _ in found)


def test_the_unit_of_a_last_digit():
    assert last_digit_unit(0.4855) == 1e-4
    assert last_digit_unit(0.012) is None  # too few digits to say
    assert within_last_digit([0.4854, 0.4855, 0.4856]) == 0.4855
    assert within_last_digit([0.4853, 0.4855, 0.4857]) is None


def test_the_objective_by_other_names():
    assert objective_key(["acc", "ppl", "xent"]) == "xent"  # OpenNMT-py's report line
    assert objective_key(["train_step", "loc_loss", "cls_loss", "tot_loss"]) == "tot_loss"
    assert objective_key(["train_rf", "memory"]) == "train_rf"
    assert objective_key(["train_acc", "train_time"]) is None
    # For the spike rules, a whole objective only; a total by another name neither.
    assert objective_key(["loc_loss", "cls_loss"], whole_only=True) is None
    assert objective_key(["tot_loss"], whole_only=True, totals=False) is None
    assert objective_key(["acc", "ppl"], whole_only=True, totals=False) == "ppl"


def test_a_sparse_logs_loss_climbing_at_each_of_its_last_points_diverges():
    # sealed-2/opennmt_py_legacy_epoch_batch_ppl_exploding_acc_4pct.log: twelve reports,
    # xent 7.73 → 7.82 → 8.00 → 9.69 → 9.95 at the end (ppl 2,268 → 20,872).
    xents = [9.46, 10.47, 10.67, 10.09, 10.18, 9.18, 8.24, 7.73, 7.82, 8.00, 9.69, 9.95]
    lines = [f"Epoch  1, {100 * (i + 1)}/37527; acc:   4.40; ppl: 24048.64; xent: {x}; "
             f"1834 src tok/s; 1917 tgt tok/s; 250 s elapsed" for i, x in enumerate(xents)]
    found = _found(lines, AnomalyType.DIVERGENCE)
    assert [(s, r) for s, r, _ in found] == [(Severity.HIGH, False)]
    assert "7.73 → 7.82 → 8 → 9.69 → 9.95" in found[0][2]


@pytest.mark.parametrize("name", ["averaged_train_loss", "train_avg_loss", "mean_train_loss",
                                  "training_loss"])
def test_a_loss_named_for_the_training_is_its_whole_objective(name: str):
    # FedACT's federated rounds (sealed-8): `Averaged Train Loss: 0.4215`, alone on its line.
    assert objective_key([name], whole_only=True, totals=False) == name


def test_a_loss_named_for_what_it_scores_is_a_part_not_the_whole():
    assert objective_key(["box_loss"], whole_only=True, totals=False) is None


def test_a_federated_run_whose_training_loss_climbs_for_its_last_rounds_diverged():
    from tests.rules.test_loss_rules import run_of

    losses = [0.4215, 0.4178, 0.4420, 0.4379, 0.4485, 0.4660, 0.4826, 0.4985, 0.5492, 0.5936]
    lines = []
    for i, loss in enumerate(losses, 1):
        lines += [f"[Round {10 * i}/100]", f"Averaged Train Loss: {loss:.4f}",
                  f"Averaged Test Accuracy: {0.915 - 0.017 * i:.4f}"]
    assert AnomalyType.DIVERGENCE in {a.type for a in run_of(lines).ledger.anomalies}
