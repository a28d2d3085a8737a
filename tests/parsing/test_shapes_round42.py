"""Shapes read and judged since the forty-second session, each on lines written in the real
shape of a public log (sealed-128 and sealed-129, scored blind first)."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.parsing.formats import parse_hf_dict, parse_key_values
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list:
    parser = LogParser()
    return [(line, parser.feed(line)) for line in lines]


# -- `Epoch 0/4, Iter 5/1029`: epochs counted from 0, an evaluation pass in the same shape --

def _mvs_epoch(epoch: int, train: list[float], test: list[float], mean: float) -> list[str]:
    lines = [f"Epoch {epoch}:"]
    lines += [f"Epoch {epoch}/4, Iter {i}/{len(train)}, train loss = {loss:.3f}, time = 14.9"
              for i, loss in enumerate(train)]
    lines += [f"Epoch {epoch}/4, Iter {i}/{len(test)}, test loss = {loss:.3f}, time = 5.7"
              for i, loss in enumerate(test)]
    lines.append(f"avg_test_scalars: {{'loss': {mean}, 'abs_depth_error': {mean + 0.004}, "
                 f"'thres2mm_error': {0.625 - 0.02 * epoch:.4f}}}")
    return lines


def test_epochs_counted_from_zero_place_each_batch_in_the_run():
    lines = _mvs_epoch(0, [77.5, 65.1, 40.0], [14.2, 12.4], 13.3) \
        + _mvs_epoch(1, [31.8, 26.5, 19.8], [9.1, 8.7], 8.9)
    steps = [(line, record.step) for line, record in _records(lines)
             if record is not None and "train loss" in line]
    # (not epoch 0 and epoch 1 both at steps 0..2, as a 1-based reading gives)
    assert [step for _, step in steps] == [0, 1, 2, 3, 4, 5]


def test_a_shorter_pass_in_the_training_shape_is_the_evaluation_at_the_training_step():
    lines = _mvs_epoch(0, [77.5, 65.1, 40.0, 31.0], [14.2, 12.4], 13.3)
    records = [record for _, record in _records(lines) if record is not None]
    test = [r for r in records if "test_loss" in r.metrics]
    assert test and all(r.step == 3 for r in test)  # the training's last step, not 0, 1
    assert all(r.target_steps == 16 for r in records if r.target_steps)  # 4 × 4, not 4 × 2
    assert not any("train_loss" in r.metrics for r in test)


def test_a_dict_its_line_labels_as_a_splits_is_that_splits_figures():
    parsed = parse_hf_dict("avg_test_scalars: {'loss': 5.085, 'abs_depth_error': 5.09}")
    assert parsed is not None
    assert parsed.metrics == {"test_loss": 5.085, "test_abs_depth_error": 5.09}
    parsed = parse_hf_dict("val_metrics = {'val_loss': 0.41, 'acc': 0.88}")
    assert parsed is not None and parsed.metrics == {"val_loss": 0.41, "val_acc": 0.88}
    # a file's name is no split's label, and an unlabelled dict keeps its names
    parsed = parse_hf_dict("test.py:12 {'loss': 0.5, 'learning_rate': 0.001}")
    assert parsed is not None and "loss" in parsed.metrics
    parsed = parse_hf_dict("{'loss': 0.5, 'learning_rate': 0.001, 'epoch': 1.0}")
    assert parsed is not None and "loss" in parsed.metrics


def test_a_test_pass_printed_batch_by_batch_is_no_decline_when_its_mean_improves(
        tmp_path: Path):
    # An MVSNet run on a Windows console: each epoch's 1029 training iterations, then its
    # 343 test batches one line each (losses from 2.9 to 15 around the pass's mean), then
    # the pass's mean as a dict; the mean falls 6.54 → 5.68 → 5.35 → 5.09.
    rng = random.Random(7)
    lines: list[str] = []
    for epoch, mean in enumerate((6.54, 5.68, 5.35, 5.09)):
        train = [max(3.0, 40.0 / (1 + epoch + i / 40) + rng.uniform(-1, 1)) for i in range(60)]
        test = [mean * rng.uniform(0.55, 1.7) for _ in range(40)]
        lines += _mvs_epoch(epoch, train, test, mean)
    lines += ["", "Process finished with exit code 0"]
    artifact = verdict_of(tmp_path, lines)
    open_ = [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
             if "resolved" not in a["description"]]
    assert not [kind for kind, _ in open_ if kind == "eval-degradation"], open_
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


# -- a line opened by its split, then measures by their short names ------------------------

def test_a_line_opened_by_its_split_reads_short_measure_names_without_a_counter():
    parsed = parse_key_values("  Val L:0.2388 ABS:0.4407 RMSE:1.3254 d1:0.4919")
    assert parsed is not None and parsed.metrics["rmse"] == 1.3254
    # (no split word, no counter: a note, as before)
    assert parse_key_values("ABS:0.4407 RMSE:1.3254") is None
    lines = ["Epoch [4/40] L:0.1989 D:0.1989 106s",
             "  Val L:0.2388 ABS:0.4407 RMSE:1.3254 d1:0.4919"]
    record = _records(lines)[-1][1]
    assert record is not None and record.metrics["eval/rmse"] == 1.3254


# -- a counter back at its start well short of its total is a relaunch ---------------------

def test_a_bracketed_counter_back_at_one_early_in_its_count_is_a_relaunch():
    # deep-text-recognition-benchmark: a launch stopped at 600 of 300000, then the next
    # one from 1; not an epoch's batches coming round (steps 300001, 300600, …)
    lines = [f"[{n}/300000] Train loss: {loss}, Valid loss: 0.04, Elapsed_time: 15.1"
             for n, loss in ((1, 4.49), (300, 0.2), (600, 0.035), (1, 4.49), (300, 0.2),
                             (600, 0.03), (900, 0.001))]
    steps = [record.step for _, record in _records(lines) if record is not None]
    assert steps == [1, 300, 600, 1, 300, 600, 900]


def test_a_bracketed_counter_that_comes_round_from_its_end_still_counts_batches():
    lines = [f"[{n}/16] train_loss: {0.5 - i * 0.01:.3f}"
             for i, n in enumerate((4, 8, 12, 16, 4, 8, 12, 16, 4))]
    steps = [record.step for _, record in _records(lines) if record is not None]
    assert steps[-1] == 36


# -- a training set back: both losses up together after falling, never back -----------------

_TROCR = ["[trocr-words] device=cuda model=microsoft/trocr-base-handwritten batch=4 epochs=6",
          "Loading weights: 100%|██████████| 478/478 [00:00<00:00, 1615.15it/s, "
          "Materializing param=encoder.layernorm.weight]"]


def _epochs(pairs: list[tuple[float, float]]) -> list[str]:
    return [f"Epoch {e:2d} | train {t:.4f} | val {v:.4f} | 2026-06-18 1{e}:39:10"
            for e, (t, v) in enumerate(pairs, 1)]


def test_an_epoch_line_with_its_time_and_bare_split_names_is_read_from_its_first():
    records = [r for _, r in _records(_epochs([(2.1521, 1.4609), (1.2953, 1.0191)]))
               if r is not None]
    assert [r.metrics for r in records] == [{"train": 2.1521, "val": 1.4609},
                                           {"train": 1.2953, "val": 1.0191}]


def test_a_bar_loading_or_writing_weights_counts_no_training_step():
    records = [r for _, r in _records(_TROCR) if r is not None]
    assert not [r for r in records if r.step is not None or r.target_steps]


def test_both_losses_jumping_together_after_falling_is_a_setback_left_open(tmp_path: Path):
    lines = _TROCR + _epochs([(2.1521, 1.4609), (1.2953, 1.0191), (1.0760, 0.9667),
                              (1.7439, 1.4283), (1.6174, 1.9225), (1.5360, 1.5957)])
    lines += ["[early stop] after 6 epochs",
              "[done] best val loss 0.9667 | weights in /kaggle/working/checkpoints_words"]
    artifact = verdict_of(tmp_path, lines)
    assert ("loss-spike", "high") in [(a["type"], a["severity"])
                                      for a in artifact["anomalies_detected"]
                                      if "resolved" not in a["description"]]
    assert artifact["decision"] == "CONDITIONAL"


def test_a_setback_the_training_loss_recovers_from_is_resolved(tmp_path: Path):
    lines = [*_epochs([(2.15, 1.46), (1.30, 1.02), (1.08, 0.97), (1.74, 1.43), (1.20, 1.05),
                       (1.05, 0.95), (0.98, 0.93)]), "Training finished."]
    artifact = verdict_of(tmp_path, lines)
    spikes = [a for a in artifact["anomalies_detected"] if a["type"] == "loss-spike"]
    assert spikes and all("resolved" in a["description"] for a in spikes)


def test_a_training_loss_jump_the_evaluation_does_not_share_is_no_setback(tmp_path: Path):
    # (an unfrozen backbone, a new augmentation: the training loss up, the held-out not)
    lines = [*_epochs([(2.15, 1.46), (1.30, 1.02), (1.08, 0.97), (1.74, 0.99), (1.50, 0.95),
                       (1.40, 0.93)]), "Training finished."]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "loss-spike" and "set back" in a["description"]]


# -- TRL's GRPO records: a surrogate loss about 0, gradient norms of 0 between real ones ----

def _grpo(step: int, loss: float, grad: float, reward: float) -> str:
    return (f"{{'loss': {loss}, 'grad_norm': {grad}, 'learning_rate': 1.87e-07, "
            f"'num_tokens': {1471167.0 + 5000 * step}, 'completions/mean_length': 38.125, "
            f"'completions/clipped_ratio': 0.0, 'rewards/mixed_reward/mean': {reward}, "
            f"'reward': {reward}, 'reward_std': 0.82, 'frac_reward_zero_std': 0.0, "
            f"'kl': 0.0004, 'entropy': 0.032, 'clip_ratio/region_mean': 0.0, "
            f"'epoch': {round(0.0002 * step, 2)}}}")


def test_a_grpo_runs_zero_norms_and_surrogate_loss_raise_no_alarms(tmp_path: Path):
    rng = random.Random(3)
    lines = []
    for step in range(1, 301):
        zero = rng.random() < 0.4  # a group whose rewards were all equal
        loss = 0.0 if zero else round(rng.uniform(-0.15, 0.4), 4)
        grad = 0.0 if zero else round(rng.uniform(0.7, 2.6), 3)
        lines.append(_grpo(step, loss, grad, round(0.3 + step / 300 + rng.uniform(-0.1, 0.1), 3)))
    lines.append("{'train_runtime': 10392.88, 'train_samples_per_second': 1.847, "
                 "'train_steps_per_second': 0.231, 'train_loss': 0.0029, 'epoch': 0.06}")
    artifact = verdict_of(tmp_path, lines)
    serious = [(a["type"], a["severity"], a["description"][:80])
               for a in artifact["anomalies_detected"] if a["severity"] in ("high", "blocker")]
    assert len(serious) <= 1, serious  # (at most the first 0s, before any came back)
    assert all("resolved" in a["description"] for a in artifact["anomalies_detected"])
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_loss_rising_from_a_best_of_exactly_zero_is_described_not_divided(tmp_path: Path):
    # (the divergence text once divided by the best level: babysit failed on two GRPO logs)
    losses = [0.0, 0.0, -0.08, 0.0, 0.0, 0.02, 0.05, 0.09, 0.14, 0.2, 0.27]
    lines = [f"step {i} loss {v}" for i, v in enumerate(losses, 1)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] in ("CONDITIONAL", "NO-GO")


# -- an epoch's header behind an emoji or in Spanish; an ending with words between ---------

def _spanish_epochs(head: str) -> list[str]:
    lines: list[str] = []
    for epoch, (tl, vl) in enumerate(((0.1409, 1.1915), (0.1107, 1.1319)), 13):
        lines += [f"{head} {epoch}/15", "-" * 40, f"   Train → Loss: {tl} | Acc: 96.31%",
                  f"   Val   → Loss: {vl} | Acc: 71.25%", ""]
    return lines


def test_an_epoch_header_behind_an_emoji_or_in_spanish_places_the_lines_under_it():
    for head in ("📅 Época", "Época", "epoch"):
        records = [r for _, r in _records(_spanish_epochs(head)) if r is not None]
        assert [r.epoch for r in records] == [13.0, 13.0, 14.0, 14.0], head


def test_an_ending_said_with_words_between_in_another_language():
    from babysit.parsing.completion_words import says_finished
    assert says_finished("🏆 ENTRENAMIENTO FINE-TUNING COMPLETADO")
    assert says_finished("Training des Modells abgeschlossen")
    assert not says_finished("Entrenamiento no completado")
    assert not says_finished("Training nicht abgeschlossen")


# -- a loss of any role blown up by orders of magnitude -------------------------------------

def _domainbed(run_losses: list[float]) -> list[str]:
    head = ("INFO 07/27 21:20:14 | test_in     test_out    train_out   tr_outloss  step        "
            "epoch       disc_loss   gen_loss")
    lines = [head]
    for i, disc in enumerate(run_losses):
        lines.append(f"INFO 07/27 21:20:14 | 0.571429    0.589041    0.566239    "
                     f"{0.7 + disc / 3:<12.6g}{i * 100:<12d}{i * 14.5:<12.6f}{disc:<12.6g}"
                     f"{-disc / 2:<12.6g}")
    return lines


def test_a_discriminators_loss_blown_up_by_orders_of_magnitude_is_a_blocker(tmp_path: Path):
    # DANN on DomainBed: `disc_loss` 0.69 → 50 → 4e3 → 1e6 → 5e8, every accuracy at the
    # larger class's share; then the next held-out domain's run, whose losses hold
    blown = [0.69, 0.70, 0.69, 0.70, 0.79, 2.8, 50.6, 4377.7, 27383.2, 1055794.8, 4465151.3,
             544444220.0, 2299814461.0, 2427287957.0]
    calm = [0.70, 0.69, 0.71, 0.70, 0.69, 0.72, 0.70, 0.69, 0.70, 0.71]
    lines = [*_domainbed(blown), "INFO 07/27 21:28:14 | Test envs = [1], name = te_01",
             *_domainbed(calm), "INFO 07/27 21:40:00 | === Summary ===", "Training finished."]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "divergence" and a["severity"] == "blocker"
               and "resolved" not in a["description"] for a in artifact["anomalies_detected"])


def test_a_gan_loss_that_swings_within_its_scale_is_no_blow_up(tmp_path: Path):
    swings = [0.69, 0.70, 0.69, 0.70, 0.79, 2.8, 50.6, 12.0, 3.1, 0.9, 120.0, 0.8, 0.7, 0.7]
    artifact = verdict_of(tmp_path, [*_domainbed(swings), "Training finished."])
    assert not [a for a in artifact["anomalies_detected"] if "blew up" in a["description"]]


def test_a_score_fallen_to_a_fifth_of_its_best_is_a_blocker(tmp_path: Path):
    # DivideMix on CIFAR-10, one line an epoch: test accuracy 84.84 at epoch 9, then down
    # to 2.84 at epoch 100, below a guess's 10 %
    accs = [57.1, 66.9, 71.3, 76.0, 79.2, 81.0, 82.5, 83.1, 84.0, 84.84]
    accs += [84.84 - 0.9 * i for i in range(1, 91)]
    lines = [f"Epoch:{e}   Accuracy:{a:.2f}" for e, a in enumerate(accs)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any("fifth of its best" in a["description"] for a in artifact["anomalies_detected"])


def test_a_score_never_better_than_its_first_and_halved_is_a_blocker(tmp_path: Path):
    # an R keras MLP whose L1 penalty swamped it (sealed-129): val_acc 0.5685 at epoch 1,
    # then 0.09 to 0.35 to epoch 30, the training accuracy down with it
    log = (Path(__file__).parents[1] / "fixtures/logs/public/sealed-129"
           / "r_keras_mnist_mlp_l1_regularizer_collapses_to_chance_30_epochs.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert artifact["decision"] == "NO-GO"
    assert any("never been better than at the run's first" in a["description"]
               for a in artifact["anomalies_detected"])


def test_a_loss_run_away_below_zero_is_left_to_the_loss_rules(tmp_path: Path):
    # a vocoder's own loss going to −1e9 overnight is the loss rules' (high while it runs),
    # not this rule's blocker
    values = [0.006, 0.005, 0.006, 0.005, 0.006, -0.5, -90.0, -3.1e5, -1.4e6, -2.2e7, -1e9]
    lines = [f"step {i} vocoder_loss {v} mel_loss 0.41" for i, v in enumerate(values, 1)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if "blew up" in a["description"]]


def test_a_score_that_never_reached_a_tenth_of_its_scale_is_no_collapse(tmp_path: Path):
    # a captioner's chrF early in its run: 0.069, then down to 0.03
    chrf = [0.0689, 0.061, 0.055, 0.048, 0.041, 0.035, 0.031, 0.0295]
    lines: list[str] = []
    for epoch, value in enumerate(chrf, 1):
        lines += [f"epoch {epoch} train_loss {3.0 - 0.1 * epoch:.3f}",
                  f"epoch {epoch} val_loss {2.9 - 0.05 * epoch:.3f} val_chrf {value}"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if "fifth of its best" in a["description"] or "half of that" in a["description"]]


def test_an_evaluation_bar_before_a_trainers_first_loss_dicts_counts_no_step():
    # a KG fine-tune's log of stdout: the evaluation before training (`100% 31/31` and its
    # dict of ranks), then the Trainer's loss dicts with no step of their own
    lines = ["100% 31/31 [00:08<00:00,  3.90it/s]{'mr': 1460.93, 'mrr': 0.00435, "
             "'hits@1': 0.0, 'hits@10': 0.0123}",
             "100% 31/31 [00:08<00:00,  3.76it/s]",
             "{'loss': 0.6964, 'grad_norm': 0.0699, 'learning_rate': 0.001, 'epoch': 0.04}",
             "{'loss': 0.6927, 'grad_norm': 0.0629, 'learning_rate': 0.002, 'epoch': 0.08}"]
    records = [r for _, r in _records(lines) if r is not None and "loss" in r.metrics]
    assert records and all(r.step is None or r.step < 31 for r in records)
