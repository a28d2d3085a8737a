"""Shapes read and judged since the forty-sixth session, each on lines written in the real
shape of a public log (sealed-150 and sealed-151, each scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.text import normalise_key
from tests.parsing.test_shapes_round44 import _open, _records
from tests.rules.test_loss_rules import verdict_of

# -- a hand-written table with a column of remarks -----------------------------------------

_TABLE_HEAD = [" Ep |   TrLoss |    VLoss |   VAcc |   VQWK |    VF1 |         LR | Status",
               "-" * 78]


def _table_row(epoch: int, train: float, val: float, best: bool) -> str:
    status = f"[BEST] ({200 + epoch}s)" if best else f"({200 + epoch}s)"
    return (f"{epoch:3d} | {train:.6f} | {val:.6f} | {60 + epoch:.2f}% | 0.{77 + epoch:02d}00 | "
            f"0.{49 + epoch:02d}00 | 1.00e-04 | {status}")


def test_a_status_column_of_words_leaves_the_rows_figures_read():
    records = [r for r in _records([*_TABLE_HEAD, *(_table_row(e, 1.4 - e / 20, 0.95 - e / 50,
                                                               e % 2 == 1)
                                                    for e in range(1, 6))])
               if r.metrics]
    assert len(records) == 5
    assert records[-1].epoch == 5.0  # (`Ep` is the epoch's column)
    assert records[-1].metrics["train_loss"] == 1.15
    assert records[-1].metrics["val_loss"] == 0.85
    assert "status" not in records[-1].metrics


def test_a_table_with_remarks_that_closes_on_its_time_is_a_finished_run(tmp_path: Path):
    lines = [*_TABLE_HEAD, *(_table_row(e, 1.4 - e / 20, 0.95 - e / 50, True)
                             for e in range(1, 16)),
             "", "Done in 3147s. Best: epoch 15, QWK=0.9200"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO"


def test_a_split_glued_to_its_metric_in_camel_case_is_spelled_out():
    for name, read in (("TrLoss", "train_loss"), ("VLoss", "val_loss"), ("VAcc", "val_acc"),
                       ("valLoss", "val_loss"), ("trainAcc", "train_acc"),
                       ("TestAccuracy", "test_accuracy"), ("evalLoss", "eval_loss")):
        assert normalise_key(name) == read, name
    # capitals alone after the letter, or a word that only begins like a split: unchanged
    for name, read in (("VQWK", "vqwk"), ("VAELoss", "vaeloss"), ("TeacherLoss", "teacherloss"),
                       ("Velocity", "velocity"), ("TrueLoss", "trueloss"), ("mAP50", "map50")):
        assert normalise_key(name) == read, name


# -- a JSON-lines metrics file closed by its summary object --------------------------------

def _grokking_lines(steps: int) -> list[str]:
    lines = ['{"_meta": {"group": "A4", "optimizer": "adamw", "seed": 2}}']
    for n, step in enumerate(range(0, steps + 1, 100)):
        lines.append(f'{{"step": {step}, "train_loss": {2.5 / (n + 1):.6f}, "train_acc": '
                     f'{min(1.0, 0.1 * (n + 1)):.3f}, "test_loss": {2.6 - n * 0.01:.4f}, '
                     f'"test_acc": {min(0.99, 0.05 * (n + 1)):.3f}}}')
    return lines


def test_a_summary_object_after_the_last_record_ends_the_run(tmp_path: Path):
    lines = [*_grokking_lines(3000),
             '{"_summary": {"group": "A4", "grok_step": 1800, "grokked": true, '
             '"final_train_acc": 1.0, "final_test_acc": 0.99, "elapsed_sec": 114.6, '
             '"stopped_step": 3000}}']
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["total_steps"] == 3000  # (the summary is no record of a step)


def test_the_same_file_without_its_summary_is_still_going(tmp_path: Path):
    assert verdict_of(tmp_path, _grokking_lines(3000))["terminal_state"] == "RUNNING"


# -- names and numbers joined by a dash in brackets ----------------------------------------

def test_dash_joined_pairs_in_brackets_are_read():
    records = _records([
        f"2021.10.31-17:28:1{n}:{n}:[step-{n}]--[loss_G-{115.2 - n:.6f}]--[loss_D-"
        f"{17.03 - n:.6f}]--[ETA-186 days, 19:22:33]" for n in range(1, 4)])
    assert [r.step for r in records] == [1, 2, 3]
    assert records[-1].metrics == {"loss_g": 112.2, "loss_d": 14.03}


def test_one_dash_joined_name_in_brackets_is_no_figure():
    assert not any("rank" in r.metrics for r in _records([
        "[rank-0] loading shard 3 of 8", "[rank-1] loading shard 4 of 8"]))


# -- an optimizer's settings on one line ---------------------------------------------------

def test_an_optimizers_settings_behind_a_loggers_head_are_no_record():
    records = _records([
        "2026-03-29 07:37:48 | INFO | docred.train | Optimizer: PLM params=391 (lr=2e-05), "
        "other params=167 (lr=0.001)",
        "2026-03-29 07:37:48 | INFO | docred.train | Scheduler: total_steps=2880, "
        "warmup_steps=172"])
    assert not any(r.metrics for r in records)


# -- epochs that shrank to a step each ------------------------------------------------------

def _acgpn_lines(full: int, shrunk: int) -> list[str]:
    lines = []
    step = 0
    for _ in range(full):
        step += 1
        lines.append(f"2021.10.31-17:28:10:{step}:[step-{step}]--[loss_G-{115 - step * 0.01:.6f}]"
                     f"--[loss_D-{17 - step * 0.002:.6f}]--[ETA-16 days, 19:23:49]")
    lines.append("End of epoch 1 / 200 \t Time Taken: 3010 sec")
    for epoch in range(2, 2 + shrunk):
        step += 1
        lines.append(f"2021.10.31-18:18:15:{step}:[step-{step}]--[loss_G-47.330322]--"
                     f"[loss_D-1.837595]--[ETA-20 days, 16:48:29]")
        lines.append(f"End of epoch {epoch} / 200 \t Time Taken: 1 sec")
    return lines


def test_epochs_that_shrank_to_a_step_each_are_not_learning(tmp_path: Path):
    artifact = verdict_of(tmp_path, _acgpn_lines(500, 14))
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_few_short_epochs_are_no_finding(tmp_path: Path):
    opened = _open(verdict_of(tmp_path, _acgpn_lines(500, 6)))
    assert not any(kind == "not-learning" for kind, _ in opened)


def test_a_step_printed_now_and_then_makes_no_epoch_short(tmp_path: Path):
    # a step line every 1,000 steps, an epoch line every 100: between epoch lines the
    # step read stands still, and no epoch printed more records than another
    lines = []
    for epoch in range(1, 60):
        step = epoch * 100
        if step % 1000 == 0:
            lines.append(f"step {step} | loss {3.0 / (1 + step / 1000):.4f} | lr 0.001")
        lines.append(f"Epoch {epoch} done, epoch: {epoch}")
    opened = _open(verdict_of(tmp_path, lines))
    assert not any(kind == "not-learning" for kind, _ in opened)


# -- a results heading after the last fold ---------------------------------------------------

def _fold_lines(fold: int) -> list[str]:
    lines = []
    for epoch in range(1, 6):
        for batch in range(100, 1001, 100):
            lines.append(f"Train E{epoch}: {batch // 10}%| {batch}/1000 [00:27<00:00, 38.69it/s, "
                         f"loss={0.02 / epoch:.4f}]")
        lines.append(f"E{epoch}/5 — loss: {0.02 / epoch:.4f}, ss_auc: 0.{70 + epoch}00(50)")
    lines.append(f"Fold {fold} best -> ss_auc: 0.7500, full_ss: 0.8100")
    return lines


def test_a_results_heading_after_the_last_fold_ends_the_run(tmp_path: Path):
    lines = [*_fold_lines(0), *_fold_lines(1), "", "=" * 60, "RESULTS", "=" * 60,
             "Fold 0: ss_auc=0.7500@E5, full_ss=0.8149", "Fold 1: ss_auc=0.7500@E5, "
             "full_ss=0.8242", "Time: 5.1 min"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO"


def test_a_results_heading_the_run_prints_at_each_epoch_ends_nothing(tmp_path: Path):
    lines = []
    for epoch in range(1, 8):
        lines += [f"epoch {epoch} step {epoch * 100} loss {1 / epoch:.4f}", "Results",
                  f"val_acc: 0.{50 + epoch}"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- the second round (sealed-152 and sealed-153) -------------------------------------------

def _series_block(n: int) -> list[str]:
    return [f"timesteps                   {65536 * n:.6e}",
            f"wall_time                   {36.0 * n:.6e}",
            f"mean_episode_rewards        {min(9.5, 2 + n * 0.1):.6e}",
            f"val_mean_episode_rewards    {min(5.0, 1 + n * 0.05):.6e}",
            f"mean_episode_len            {400 - n:.6e}",
            f"Name: {n}, dtype: float64"]


def test_a_pandas_series_printed_whole_is_one_record_at_its_timesteps():
    lines = [line for n in range(1, 5) for line in _series_block(n)]
    records = [r for r in _records(lines) if r.metrics]
    assert [r.step for r in records] == [65536, 131072, 196608, 262144]
    assert records[-1].metrics["mean_episode_rewards"] == 2.4


def test_name_value_lines_with_no_series_footer_are_no_record():
    lines = [line for n in range(1, 5) for line in _series_block(n)[:-1]]
    assert not any(r.metrics for r in _records(lines))


def test_a_finished_banner_in_capitals_between_rules_behind_a_loggers_head(tmp_path: Path):
    head = "2026-06-04 08:44:49,220 INFO "
    lines = [head, f"{head}{'=' * 60}", f"{head}Iteration 27/100", f"{head}{'=' * 60}"]
    for it in range(27, 101):
        lines += [f"{head}Iteration {it}: loss={1.5 - it / 100:.4f} (pi={1.2 - it / 120:.4f}, "
                  f"v=0.0983) examples=8192",
                  f"{head}Checkpoint saved: runs/checkpoints/checkpoint_{it:04d}.pt"]
    lines += [head, f"{head}{'=' * 60}", f"{head}Checkpoint saved: runs/checkpoints/final.pt",
              head, f"{head}{'=' * 60}", f"{head}TRAINING COMPLETE", f"{head}{'=' * 60}",
              f"{head}  Total time:     129h48m35s", f"{head}  Iterations:     100"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_the_best_weights_loaded_by_their_files_name_after_training(tmp_path: Path):
    lines = []
    for epoch in range(1, 41):
        val = 0.62 - min(epoch, 10) * 0.004 + max(0, epoch - 10) * 0.002
        lines.append(f"Epoch {epoch}/40")
        lines.append(f"50/50 [==============================] - 29s 575ms/step - loss: "
                     f"{0.6 - epoch * 0.004:.4f} - val_loss: {val:.4f} - lr: 3.0000e-04")
    overfit = verdict_of(tmp_path, lines)
    assert any(kind == "eval-degradation" for kind, _ in _open(overfit))
    restored = verdict_of(tmp_path, [*lines, "",
                                     "Loading network weights from 'weights_best.h5'."])
    assert not any(kind == "eval-degradation" for kind, _ in _open(restored))
    assert restored["decision"] == "GO"


def test_another_runs_best_loaded_before_training_restores_nothing(tmp_path: Path):
    lines = ["Loading model weights from 'pretrained/model_best.pth'."]
    for epoch in range(1, 41):
        val = 0.62 - min(epoch, 10) * 0.004 + max(0, epoch - 10) * 0.002
        lines.append(f"Epoch {epoch}/40")
        lines.append(f"50/50 [==============================] - 29s 575ms/step - loss: "
                     f"{0.6 - epoch * 0.004:.4f} - val_loss: {val:.4f} - lr: 3.0000e-04")
    assert any(kind == "eval-degradation" for kind, _ in _open(verdict_of(tmp_path, lines)))


# -- the third round (sealed-155) -----------------------------------------------------------

def _bilstm_lines(val_accs: list[float], losses: list[float]) -> list[str]:
    lines = []
    for epoch, (val, loss) in enumerate(zip(val_accs, losses, strict=True), start=1):
        for batch in [*range(0, 323, 40), 323]:
            lines.append(f"Epoch {epoch}/{len(val_accs)} [Train]:  {batch * 100 // 323}%|█ | "
                         f"{batch}/323 [00:01<00:00, 170.44it/s, loss={loss:.2f}]")
        lines.append(f"Epoch {epoch}/{len(val_accs)} [Val]: 100%|██████████| 81/81 "
                     f"[00:00<00:00, 555.03it/s]")
        pct = epoch * 100 // len(val_accs)
        lines.append(f"  {pct}%|▏         | {epoch}/{len(val_accs)} [00:02<01:59,  2.45s/it, "
                     f"train_acc={val + 0.3:.2f}%, val_acc={val:.2f}%]")
    return lines


def test_an_unnamed_bar_over_the_plans_epochs_carries_the_epochs_figures():
    records = _records(_bilstm_lines([14.92, 14.94, 14.92], [1.47, 1.47, 1.47]))
    read = [r for r in records if "val_acc" in r.metrics]
    assert [r.metrics["val_acc"] for r in read] == [14.92, 14.94, 14.92]
    assert read[0].epoch == 1.0


def test_an_accuracy_in_a_narrow_band_beside_a_loss_that_never_moved_never_learned(
        tmp_path: Path):
    vals = [14.92 if n % 5 else 14.94 for n in range(50)]
    artifact = verdict_of(tmp_path, [*_bilstm_lines(vals, [1.47] * 50), "Training complete"])
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_the_same_band_beside_a_falling_loss_is_no_blocker(tmp_path: Path):
    vals = [14.92 if n % 5 else 14.94 for n in range(50)]
    losses = [1.47 - 0.02 * n for n in range(50)]
    artifact = verdict_of(tmp_path, [*_bilstm_lines(vals, losses), "Training complete"])
    assert ("not-learning", "blocker") not in _open(artifact)


# -- the fourth round (sealed-154) ----------------------------------------------------------

def test_a_count_marked_with_a_hash_in_brackets_is_the_step_and_a_loading_bar_no_plan():
    lines = ["Loading: 100% 6004/6004 [28:40<00:00,  3.65it/s]",
             *(f"[07:{52 + n}:56][#{54663 + 477 * n:06d}][1784ms] loss_src:0.0{60 + n} "
               f"loss_dst:0.0{32 + n}" for n in range(4))]
    records = [r for r in _records(lines) if r.metrics and "loss_src" in r.metrics]
    assert [r.step for r in records][1:] == [55140, 55617, 56094]
    assert all(r.target_steps is None for r in records)


def test_a_bracketed_counter_of_its_total_then_its_rate_is_the_step(tmp_path: Path):
    lines = [f"[{n * 100}/25001]\t 0.658it/s\t time: 0:02:32~10:30:47\t loss: {20 - n / 10:.3f}"
             f">{19 - n / 10:.3f}\t lr: 3.474e-05 ▲" for n in range(1, 30)]
    records = [r for r in _records(lines) if r.metrics]
    assert records[-1].step == 2900 and records[-1].target_steps == 25001
