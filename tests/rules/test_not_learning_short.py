"""Not learning on logs too short for the noise-judged test (issue 24): a plateau just
below the start, a loss of exactly 0 that nothing else contradicts, a loss under a name
of its own, a reward that stays at 0. Each shape is a real log's, cut to its point;
each healthy counterpart is one too."""

from __future__ import annotations

from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType
from babysit.parsing.parser import LogParser
from babysit.rules.no_progress import fallback_loss_key
from tests.rules.test_loss_rules import verdict_of


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.key for a in run.ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING and not a.resolved]


def test_six_points_on_a_plateau_just_below_the_start_are_not_learning():
    # jax_gpt2_finetune (public): 4.01 at step 0, then 3.87 … 3.92 through step 500.
    losses = [4.01, 3.87, 3.88, 3.98, 3.91, 3.92]
    lines = [f"step {100 * i} | elapsed {0.25 + 1.85 * i:.2f}m | loss: {v}"
             for i, v in enumerate(losses)]
    assert not_learning(lines) == ["flat"]


def test_a_short_fine_tune_that_fell_then_levelled_off_learned():
    # hf_trl_sft_qwen3 (public): 1.56 → 1.26 → 1.09, then 1.05 … 1.11 to the end.
    losses = [1.5618, 1.2588, 1.0872, 1.0539, 1.0881, 1.1054, 1.0551, 1.112, 1.1103]
    lines = [f"{{'loss': {v}, 'grad_norm': 0.5, 'learning_rate': 1e-4, 'epoch': {i / 3:.2f}}}"
             for i, v in enumerate(losses)]
    assert not_learning(lines) == []


def test_a_short_log_still_falling_slowly_is_not_a_plateau():
    lines = [f"step={10 * i} loss={5.0 - 0.01 * i:.4f}" for i in range(1, 12)]
    assert not_learning(lines) == []


def test_a_loss_of_exactly_0_under_its_own_name_is_not_learning():
    # kohya_lora (public): `avr_loss=0` on the bar at every epoch.
    lines = []
    for epoch, step in enumerate(range(176, 272, 16), start=11):
        lines += [f"epoch {epoch}/50", f"steps:  22%|████      | {step}/800 [00:46<02:44,  "
                                       f"3.79it/s, avr_loss=0]"]
    assert not_learning(lines) == ["zero loss"]


def test_a_loss_printed_as_0_while_the_error_falls_is_learning(tmp_path: Path):
    # cqpes (public): Keras prints `loss: 0.0000e+00` while mean_squared_error falls.
    lines = [f"Epoch {e}/40\n1/1 [==============================] - 0s 5ms/step - loss: "
             f"0.0000e+00 - mean_squared_error: {0.4 * 0.7 ** e:.4e}" for e in range(1, 41)]
    data = verdict_of(tmp_path, lines)
    assert [a for a in data["anomalies_detected"] if a["type"] == "not-learning"] == []


def test_a_grpo_loss_of_0_with_a_moving_reward_is_learning():
    # trl_grpo (public): GRPO's printed loss is ~0 by construction.
    lines = [f"{{'loss': 0.0, 'grad_norm': {g}, 'learning_rate': 6.9e-06, 'reward': {r}, "
             f"'kl': 0.0005, 'epoch': {e}}}"
             for g, r, e in ((0.09, 1.68, 0.31), (0.11, 1.97, 0.33), (0.1, 1.71, 0.35),
                             (0.1, 1.88, 0.37), (0.09, 1.8, 0.39))]
    assert not_learning(lines) == []


def test_a_reward_of_0_on_almost_every_step_is_not_learning():
    # verl_grpo (public): critic/score/mean 0.0 on every step but one.
    lines = [f"step:{s} - actor/pg_loss:0.0 - actor/grad_norm:0.01 - critic/score/mean:"
             f"{0.25 if s == 2 else 0.0} - critic/rewards/mean:{0.25 if s == 2 else 0.0}"
             for s in range(1, 22)]
    assert not_learning(lines) == ["reward"]


def test_a_reward_that_grows_is_learning():
    lines = [f"step:{s} - actor/pg_loss:0.01 - critic/score/mean:{0.02 * s:.2f}"
             for s in range(1, 22)]
    assert not_learning(lines) == []


def test_a_few_optimizer_steps_are_too_few_to_say_a_run_is_not_learning():
    # The first six per-step lines of a healthy run: a slow fall under its noise.
    lines = [f"step {s}/60 | loss={2.0 - 0.005 * s + 0.01 * (s % 3):.3f}" for s in range(1, 7)]
    assert not_learning(lines) == []


def test_a_short_finished_run_whose_loss_never_moved_is_not_go(tmp_path: Path):
    lines = [f"step {100 * i}/500 | loss: {v}"
             for i, v in enumerate([4.01, 3.95, 3.99, 3.97, 4.0, 3.98])]
    data = verdict_of(tmp_path, [*lines, "Training complete"])
    assert ("not-learning", "high") in [(a["type"], a["severity"])
                                        for a in data["anomalies_detected"]]
    assert data["decision"] != "GO", data["summary"]


def test_a_gan_players_losses_are_not_taken_for_the_training_loss():
    assert fallback_loss_key(["d_loss", "g_loss"]) is None
    assert fallback_loss_key(["loss_D", "loss_G"]) is None
    assert fallback_loss_key(["avr_loss"]) == "avr_loss"


def test_a_frozen_loss_printed_once_an_epoch_at_the_same_bar_step_is_not_learning():
    # dmrgcn (public): each epoch's bar ends at 2785/2785, then the epoch's summary
    # prints the very same train loss; the step never moves.
    lines = []
    for epoch in range(16, 22):
        lines += [f"Train Epoch: {epoch} Loss: 0.35977894: 100% 2785/2785 [00:53<00:00, "
                  f"52.28it/s]", " ", f"Dataset: tag, Epoch: {epoch}",
                  "Train_loss: 46.05170378351126, Val_los: 0.5",
                  "Min_val_epoch: -1, Min_val_loss: 10000000000.0", " "]
    assert not_learning(lines) == ["identical"]


def test_a_loss_printed_again_after_an_evaluation_at_the_same_step_is_not_identical():
    # A summary line repeats the step's loss after the evaluation printed at that step.
    lines = []
    for step in range(1, 30):
        loss = f"{2.3456789 - 0.01 * step:.7f}"
        lines += [f"step={step} loss={loss}", f"step={step} eval_loss={2.5 - step / 100}",
                  f"step={step} loss={loss}"]
    assert not_learning(lines) == []


def _grpo_dicts(parts: dict[str, list[float]], points: int = 10) -> list[str]:
    lines = []
    for i in range(points):
        values = {k: v[i % len(v)] for k, v in parts.items()}
        fields = ", ".join(f"'{k}': {v}" for k, v in values.items())
        lines.append(f"{{'loss': 0.0, 'grad_norm': 0.2, 'learning_rate': 4e-07, {fields}, "
                     f"'reward': {sum(values.values()):.3f}, 'kl': 0.0005, "
                     f"'epoch': {2.5 * (i + 1)}}}")
    return lines


def test_a_grpo_reward_function_at_0_on_every_step_is_not_learning():
    # trl_grpo_equation (sealed-5): the format reward wanders, the task's is 0 throughout.
    lines = _grpo_dicts({"rewards/format_reward_func": [0.1, 0.5, 0.4, 0.3],
                         "rewards/equation_reward_func": [0.0]})
    assert not_learning(lines) == ["reward rewards/equation_reward_func"]
    # Newer TRL: `rewards/<name>/mean`; the dicts all after the bar's last redraw.
    later = _grpo_dicts({"rewards/accuracy_reward/mean": [0.0],
                         "rewards/format_reward/mean": [0.6, 0.7]})
    bar = ["100%|██████████| 100/100 [5:52:22<00:00, 211.42s/it]"]
    assert not_learning(bar + later) == ["reward rewards/accuracy_reward/mean"]


def test_grpo_reward_functions_that_earn_or_are_penalties_are_learning():
    lines = _grpo_dicts({"rewards/format_reward_func": [0.1, 0.5, 0.4],
                         "rewards/equation_reward_func": [0.0, 0.1, 0.0, 0.2]})
    assert not_learning(lines) == []
    # A penalty at 0 is at its best; DPO's implicit rewards are not reward functions.
    assert not_learning(_grpo_dicts({"rewards/repetition_penalty": [0.0],
                                     "rewards/accuracy_reward": [0.3, 0.5]})) == []
    dpo = [f"{{'loss': {0.69 - 0.01 * i:.3f}, 'rewards/chosen': 0.0, 'rewards/rejected': 0.0, "
           f"'rewards/margins': 0.0, 'reward': 0.0, 'epoch': {0.1 * i:.1f}}}" for i in range(3)]
    assert "reward rewards/chosen" not in not_learning(dpo)


def test_too_few_grpo_records_say_nothing_of_a_reward_function():
    lines = _grpo_dicts({"rewards/format_reward_func": [0.1, 0.5],
                         "rewards/equation_reward_func": [0.0]}, points=6)
    assert not_learning(lines) == []


def _noisy_flat_loss(points: int) -> list[float]:
    return [0.16 + 0.02 * ((i * 7) % 5 - 2) / 2 for i in range(points)]


def test_a_flat_noisy_loss_with_a_climbing_quality_score_is_learning():
    # paddle_hapi_chexnet (sealed-5): the per-step loss wanders 0.13-0.19 while every
    # class's AUROC climbs from 0.53 to 0.72.
    losses = _noisy_flat_loss(60)
    for name in ("AUROC_Atelectasis", "acc", "val_dice"):
        lines = [f"step {10 * (i + 1)}/614 - loss: {v:.4f} - {name}: {0.53 + 0.004 * i:.4f}"
                 for i, v in enumerate(losses)]
        assert not_learning(lines) == [], name


def test_a_flat_loss_with_a_quality_score_that_only_wanders_is_not_learning():
    losses = _noisy_flat_loss(60)
    lines = [f"step {10 * (i + 1)}/614 - loss: {v:.4f} - acc: {0.50 + 0.01 * (i % 3):.4f}"
             for i, v in enumerate(losses)]
    assert not_learning(lines) == ["flat"]


def test_a_rising_hardware_utilisation_is_no_quality_score():
    # nanochat_base_train (sealed): `bf16_mfu` rises from 0.01 to 1.18 as the kernels warm.
    losses = _noisy_flat_loss(60)
    lines = [f"step {i:05d}/00060 | loss: {v:.6f} | bf16_mfu: {min(1.2, 0.01 + 0.1 * i):.2f}"
             for i, v in enumerate(losses)]
    assert not_learning(lines) == ["flat"]


# tiny_llm's relaunches (sealed-4): the loop runs over an empty data loader.
def _epochs(loss: float, speed: float, count: int = 8) -> list[str]:
    return [f"Epoch {e}, Loss {loss:.4f}, Time 0.95s, Speed {speed:.2f} tok/s"
            for e in range(1, count + 1)]


def test_a_loss_and_a_throughput_both_exactly_0_are_a_loop_over_no_data():
    assert not_learning(_epochs(3.7888, 2841.5)[:3] + _epochs(0.0, 0.0)) == ["no data"]


def test_a_tiny_loss_at_a_real_throughput_is_not_no_data():
    # A loss printed as 0.0000 while tokens flow is a rounded small loss, not an empty loop.
    assert "no data" not in not_learning(_epochs(0.0, 2841.5))


def test_a_reward_part_at_0_while_the_summed_reward_rises_is_a_bonus_done_without():
    # A GRPO run (sealed-38's Qwen2.5 math run): its strict `correct_and_format` part pays
    # out almost never while the summed reward climbs 0.29 → 0.62: the policy learns the
    # task by the other parts; the part at 0 is no run that never learned.
    lines = _grpo_dicts({"rewards/reward_correct_and_format": [0.0],
                         "rewards/accuracy_reward": [0.25 + 0.02 * i for i in range(40)]},
                        points=40)
    assert not_learning(lines) == []
    # While the sum has not risen (the first points) the part is still the finding.
    assert not_learning(lines[:10]) == ["reward rewards/reward_correct_and_format"]
