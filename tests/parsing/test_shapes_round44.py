"""Shapes read and judged since the forty-fourth session, each on lines written in the real
shape of a public log (sealed-138 and sealed-139, each scored blind first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.parsing.log_prefix import message
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[Any]:
    parser = LogParser()
    return [r for r in (parser.feed(line) for line in lines) if r is not None] + parser.finish()


def _open(artifact: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- an image-quality model scored by rank correlation ------------------------------------

def _iqa_epoch(epoch: int, train_srcc: float, test_srcc: float) -> list[str]:
    stamp = f"[20250522 16:{epoch % 60:02d}:17 INFO    ]"
    return [f"{stamp} Running training epoch {epoch}",
            f"{stamp} train epoch:{epoch} / loss:{0.2 / epoch:.5f} / SRCC:{train_srcc} / "
            f"PLCC:{train_srcc + 0.02:.4f}",
            f"{stamp} Starting eval...",
            f"{stamp} Running testing in epoch {epoch}",
            f"{stamp} Epoch:{epoch} ===== loss:{6 + 0.1 * epoch:.3f} ===== SRCC:{test_srcc} "
            f"===== PLCC:{test_srcc + 0.01:.4f}",
            f"{stamp} Eval done...",
            f"{stamp} Epoch {epoch} done. Time: 5.0min"]


def test_an_evaluation_announced_with_its_epoch_is_read_as_the_test_split():
    records = _records(_iqa_epoch(54, 0.87, -0.12))
    test = [r for r in records if r.metrics and "test_srcc" in r.metrics]
    train = [r for r in records if r.metrics and "srcc" in r.metrics]
    assert test and test[0].metrics["test_loss"] == 11.4
    assert train and train[0].metrics["loss"] == 0.0037  # the training's own loss kept


def test_a_held_out_correlation_below_zero_beside_a_fitted_training_split_is_not_learning(
        tmp_path: Path):
    lines: list[str] = []
    for epoch, test in zip(range(54, 58), (-0.26, -0.12, -0.14, -0.05), strict=True):
        lines += _iqa_epoch(epoch, 0.87, test)
    artifact = verdict_of(tmp_path, lines)
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_held_out_correlation_that_climbs_is_not_flagged(tmp_path: Path):
    lines: list[str] = []
    for epoch, test in zip(range(1, 7), (-0.05, 0.1, 0.3, 0.5, 0.6, 0.65), strict=True):
        lines += _iqa_epoch(epoch, 0.4 + 0.05 * epoch, test)
    assert not any(kind == "not-learning" for kind, _ in _open(verdict_of(tmp_path, lines)))


def test_an_eight_digit_date_and_a_padded_level_closing_the_bracket_are_a_loggers_head():
    assert message("[20250522 16:25:17 INFO    ] Running testing in epoch 54") \
        == "Running testing in epoch 54"
    assert message("[2024-01-01 12:00:00 WARNING] loss: 3") == "loss: 3"


# -- one-space `Name value` lines ---------------------------------------------------------

def test_one_space_name_value_lines_are_read_whole_with_capitalised_names():
    records = _records(["[2025-11-07 07:53:10] [Train] Epoch 3 Step 10000/10010 Loss 2.5567 "
                        "Acc 61.25%",
                        "[2025-11-07 07:59:04] [Validation] Epoch 3 ValLoss 2.0061 ValAcc "
                        "72.94% (raw)"])
    assert records[0].metrics == {"loss": 2.5567, "acc": 61.25}
    assert records[0].epoch == 3.0
    assert records[1].metrics == {"val_loss": 2.0061, "val_acc": 72.94}  # (camel case spelled out)


def test_prose_with_numbers_one_space_apart_is_no_record():
    assert not any(r.metrics for r in _records(["Loaded 5 files from 3 folders"]))


# -- rsl_rl's block pasted from a narrow terminal -----------------------------------------

def test_a_counter_block_with_a_wrapped_figure_is_still_read(tmp_path: Path):
    lines = ["#" * 80,
             "                     Learning iteration 8391/10000",
             "",
             "                       Computation: 14963 steps/s (collection: 6.407s, learning",
             "0.163s)",
             "               Value function loss: inf",
             "                    Surrogate loss: 0.0000",
             "             Mean action noise std: 0.56",
             "                 Mean total reward: 25.66",
             "               Mean episode length: 1000.00",
             "         Episode_Reward/dof_acc_l2: -0.1826"]
    artifact = verdict_of(tmp_path, lines)
    assert ("nan-inf", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"
    # a reward's term named for an acceleration penalty is signed by design, no share
    assert not any(kind == "impossible-metric" for kind, _ in _open(artifact))


# -- the second round (sealed-140 and sealed-141) -----------------------------------------

_FINALIZER = ["Traceback (most recent call last):",
              '  File "/usr/lib/python3.8/multiprocessing/util.py", line 300, in _run_finalizers',
              "    finalizer()",
              '  File "/usr/lib/python3.8/shutil.py", line 673, in _rmtree_safe_fd',
              "    os.unlink(entry.name, dir_fd=topfd)",
              "OSError: [Errno 16] Device or resource busy: '.nfs000000000a86fd8b00001c09'"]
_IGNORED = ["Exception ignored in: <function Meteor.__del__ at 0x1547af4f01f0>",
            "Traceback (most recent call last):",
            '  File "/work/evalcap/meteor/meteor.py", line 59, in close',
            "    if self.meteor_p:",
            "AttributeError: 'Meteor' object has no attribute 'meteor_p'"]


def test_exit_time_tracebacks_after_the_plan_reached_end_nothing(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(4):
        lines += [f"Epoch {epoch}: 100%|██████████| 50/50 [00:10<00:00, v_num=0, "
                  f"loss={1.5 - 0.2 * epoch:.3f}]", *_IGNORED, *_FINALIZER]
    lines += ["`Trainer.fit` stopped: `max_epochs=4` reached.", *_FINALIZER]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert not any(kind == "crash" for kind, _ in _open(artifact))


def test_the_announced_early_stopping_rule_is_no_stop():
    from babysit.parsing.events import find_events
    assert not find_events("Will train until validation_0-rmse hasn't improved in 10 rounds.")
    assert find_events("Validation loss has not improved for 10 epochs. Terminating.")
    assert find_events("⏹️  Early stopping à l'époque 73")


def test_a_library_warning_that_the_best_weights_are_used_restores_them():
    from babysit.model import EventKind
    from babysit.parsing.events import find_events
    line = ("/site-packages/pytorch_tabnet/callbacks.py:172: UserWarning: Best weights "
            "from best epoch are automatically used!")
    assert [e.kind for e in find_events(line)] == [EventKind.BEST_RESTORED]


def test_a_table_bordered_on_one_side_is_read_and_its_negated_score_no_divergence(
        tmp_path: Path):
    lines = ["Will train until validation stopping metric hasn't improved in 100 rounds.",
             "---------------------------------------",
             "| EPOCH |  train  |   valid  | total time (s)"]
    for epoch in range(1, 41):
        train = -44000 / epoch ** 1.5 - 110
        lines.append(f"| {epoch:<5} | {train:.5f} |  {train * 1.1:.5f} |   {epoch / 10:.1f}")
    records = _records(lines[:6])
    assert records[-1].metrics["train"] < 0 and records[-1].epoch == 3
    artifact = verdict_of(tmp_path, lines)
    assert not any(kind == "divergence" for kind, _ in _open(artifact))
    assert artifact["terminal_state"] != "SUCCEEDED"  # the rule announced is no stop


def test_a_model_trained_alone_says_training_is_over():
    from babysit.parsing.completion_words import says_finished
    assert says_finished("Model trained")
    assert says_finished("The model has been trained successfully.")
    assert not says_finished("Loading model trained on ImageNet")


def test_a_block_under_a_best_results_heading_is_no_training(tmp_path: Path):
    lines = ["Namespace(batch_size=16, beam_size=3, dataset_name='iu_xray', epochs=100)"]
    for epoch in range(1, 8):
        lines += [f"\tepoch          : {epoch}", f"\ttrain_loss     : {2.0 / epoch:.4f}",
                  f"\tval_BLEU_4     : {0.10 + 0.002 * epoch:.4f}"]
    lines += ["Validation performance didn't improve for 50 epochs. Training stops.",
              "Best results (w.r.t BLEU_4) in validation set:",
              "\tval_BLEU_4     : 0.1140", "\tepoch          : 3", "\ttrain_loss     : 0.6667"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_count_from_zero_printed_every_ten_stops_at_its_last_print(tmp_path: Path):
    lines = [f"Epoch {epoch}/1000 | Generator loss: {1.0 + (epoch % 7) / 10:.3f} | "
             f"Critic loss: -20.{epoch % 9}" for epoch in range(0, 1000, 10)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "ENDED"


def test_a_bleu_of_four_grams_is_judged_as_its_metric():
    from babysit.rules.eval_names import evaluation_direction
    assert evaluation_direction("test_bleu_4") == 1
    assert evaluation_direction("val_bleu_4") == 1


# -- the third round (sealed-142 and sealed-143) ------------------------------------------

def test_a_total_loss_whose_term_weights_move_is_judged_afresh(tmp_path: Path):
    lines: list[str] = []
    alpha = beta = 0.0
    for n in range(60):
        if n >= 30:  # the property and KL terms annealed in: the total climbs by design
            alpha, beta = alpha + 5.0, beta + 0.002
        step = 100 * (n + 1)
        loss = 9.0 - 0.02 * n + alpha * 0.02 + beta * 60
        lines.append(f"[Train][{step}] Alpha: {alpha:.3f}, Beta: {beta:.3f}, Loss: {loss:.2f}, "
                     f"Word Loss: {9.0 - 0.02 * n:.2f}, Word: {80 + n * 0.2:.2f}")
        if n % 6 == 5:
            lines.append(f"[Validation][881] Alpha: {alpha:.3f}, Beta: {beta:.3f}, "
                         f"Loss: {loss * 0.5:.2f}, Word Loss: {4.5 - 0.01 * n:.2f}")
    opened = _open(verdict_of(tmp_path, lines))
    assert ("divergence", "high") not in opened and ("divergence", "blocker") not in opened
    assert ("eval-degradation", "blocker") not in opened


def test_a_pandas_frame_of_rows_labelled_by_split_is_read():
    lines = [",intent_loss,intent_acc,set",
             "0,1.4509,0.6377,train", "1,0.6874,0.8168,valid",
             "2,0.4358,0.8854,train", "3,0.4565,0.8928,valid"]
    metrics = [r.metrics for r in _records(lines) if r.metrics]
    assert metrics[0] == {"intent_loss": 1.4509, "intent_acc": 0.6377}
    assert metrics[1] == {"val_intent_loss": 0.6874, "val_intent_acc": 0.8168}


def test_an_fp16_loss_scale_below_one_is_high():
    from babysit.config import RuleSettings
    from babysit.model import Severity
    from babysit.rules.signals import Observation, Raise
    from babysit.rules.stream import LossScaleRule
    rule = LossScaleRule(RuleSettings())
    raised = []
    for step, scale in enumerate((32.0, 16.0, 8.0, 4.0, 2.0, 1.0, 0.5, 0.25), start=1):
        raised += rule.observe(Observation(step=step, metrics={"loss_scale": scale}))
    below = [s for s in raised if isinstance(s, Raise) and s.key == "below-one"]
    assert below and below[0].severity is Severity.HIGH


def test_slurms_node_failure_is_a_hardware_fault():
    from babysit.model import EventKind
    from babysit.parsing.events import find_events
    line = ("slurmstepd: *** JOB 279701 ON neo CANCELLED AT 2020-09-16T15:36:54 DUE TO NODE "
            "FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***")
    assert EventKind.HARDWARE_FAULT in {e.kind for e in find_events(line)}


def test_an_fp16_loss_scale_dipping_to_a_half_now_and_then_is_no_alarm():
    from babysit.config import RuleSettings
    from babysit.rules.signals import Observation, Raise
    from babysit.rules.stream import LossScaleRule
    rule = LossScaleRule(RuleSettings())
    signals = []
    for step, scale in enumerate((1.0, 1.0, 0.5, 1.0, 1.0, 0.5, 1.0), start=1):
        signals += rule.observe(Observation(step=step, metrics={"loss_scale": scale}))
    assert not [s for s in signals if isinstance(s, Raise)]
