"""Shapes read since the forty-eighth session, each on lines written in the real shape of
a public log (sealed-164, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.closing import closes
from tests.parsing.test_shapes_round44 import _open
from tests.rules.test_loss_rules import verdict_of

# -- a line of fields with a bare duration among them --------------------------------------

def _timed_epochs(last: int, of: int) -> list[str]:
    """An offline Q-learning job's epochs: `Epoch    1/50 | train 0.17699 | val 0.03603 |
    3s`, the last field how long the epoch took."""
    return [f"Epoch {n:4d}/{of} | train {0.18 / n:.5f} | val {0.04 / n + 0.002:.5f} | "
            f"{n * 2 + 1}s" for n in range(1, last + 1)]


def test_a_duration_field_does_not_hide_a_line_of_fields(tmp_path: Path):
    artifact = verdict_of(tmp_path, _timed_epochs(50, 50))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert set(artifact["final_metrics"]) >= {"train", "val"}
    assert "at epoch 50 of 50" in artifact["summary"]


def test_the_same_log_short_of_its_plan_is_still_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _timed_epochs(12, 50))
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")
    assert "at epoch 12 of 50" in artifact["summary"]


def test_a_duration_in_minutes_and_seconds_is_no_field_either(tmp_path: Path):
    lines = [f"Epoch {n}/20 | train {1 / n:.4f} | val {1 / n + 0.1:.4f} | {n}m {n * 3 % 60}s"
             for n in range(1, 21)]
    assert "val" in verdict_of(tmp_path, lines)["final_metrics"]


# -- pairs after an epoch's head, an aside in parentheses closing the line ----------------

def _seed_epochs(seed_shift: float) -> list[str]:
    return [f"epoch {n:02d}: actor {1.2 - n / 100 + seed_shift:.4f} critic "
            f"{0.007 - n / 2000:.4f} Q {-0.03 * n:.4f} val Sharpe {(-1) ** n * 0.4:+.3f} "
            f"(mean|a| {0.2 + n / 50:.3f})" for n in range(1, 11)]


def test_an_aside_in_parentheses_does_not_hide_the_pairs_before_it(tmp_path: Path):
    """A trading agent's offline actor-critic suite, five seeds one after another, ends on
    its own banner: the pairs are read (the aside's too) and the banner closes the run."""
    lines: list[str] = []
    for seed in range(3):
        lines += [f"$ python -m src.models.tacr.train --tag macro16 --seed {seed}",
                  *_seed_epochs(seed / 10),
                  f"[seed {seed}] best val Sharpe 1.0962 @ epoch 7 -> checkpoints/s{seed}/best.pt"]
    lines.append("=== suite complete: macro16 ===")
    artifact = verdict_of(tmp_path, lines)
    assert set(artifact["final_metrics"]) >= {"actor", "critic", "q", "val_sharpe", "mean_a"}
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_all_done_closes_but_not_as_a_clause_of_more_work():
    assert not closes("all done, now testing model")
    assert closes("=== ALL DONE Fr 29. Mai 20:13 ===")


# -- a return by its name under each epoch's head; the return asked for is no result -------

def _dt_blocks(last: int) -> list[str]:
    """A return-conditioned decision transformer: each epoch's head alone on its line, then
    the return it was asked for and the one it earned."""
    lines = ["Namespace(algo='rcsl-dt', batch=256, epochs=60, seed=0)",
             "Begin output policy training"]
    for n in range(last + 1):
        lines += ["------------", f"Epoch {n}" + (" (Initial model)" if n == 0 else ""),
                  f"target return: 132.76379035532239, eval return: "
                  f"{20 + 60 * n / (n + 8) + (n % 3):.12f}"]
    return lines


def test_an_evaluated_return_is_read_and_the_target_return_is_no_frozen_result(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _dt_blocks(60))
    assert "eval_return" in artifact["final_metrics"]
    assert "not-learning" not in {kind for kind, _ in _open(artifact)}
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_return_code_is_no_return():
    from babysit.parsing.formats import names_a_measure
    assert names_a_measure({"eval_return": 1.0})
    assert names_a_measure({"ep_ret": 1.0})
    assert not names_a_measure({"return_code": 1.0})


# -- an epoch's head as an ordinal, its figures on the lines under it ---------------------

def _ordinal_blocks(last: int, plan: int) -> list[str]:
    """A retrosynthesis scorer's log: its configuration, then `  1th epoch,` over its
    indented figures, one block an epoch, and its closing block."""
    lines = ["  ----- Train Config Information -----", f"  num_epoch: {plan}", "  lr: 0.0004",
             "", "  ----- Training Log -----"]
    for n in range(1, last + 1):
        lines += [f"  {n}th epoch,", f"   training loss: {0.38 + 1.2 / n:.6f}",
                  f"   val loss: {0.58 + 0.7 / n:.6f}", f"   epoch time: {24 + n % 7:.2f}"]
    return lines


def test_an_ordinal_epoch_head_counts_the_epochs_against_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, _ordinal_blocks(40, 40))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    running = verdict_of(_folder(tmp_path / "short"), _ordinal_blocks(12, 40))
    assert running["terminal_state"] == "RUNNING"


# -- the best results' heading after the last epoch closes the run ------------------------

def _r2gen_summary(epoch: int, bleu: float) -> list[str]:
    return [f"\tepoch          : {epoch}", f"\ttrain_loss     : {1.7 - epoch / 20:.6f}",
            f"\tval_BLEU_4     : {bleu:.6f}", f"\ttest_BLEU_4    : {bleu - 0.01:.6f}",
            "Saving checkpoint: ./results/current_checkpoint.pth ..."]


def test_the_best_results_heading_after_the_last_epoch_closes_the_run(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(1, 16):
        lines += _r2gen_summary(epoch, 0.04 + epoch / 200)
    closing = ["Best results (w.r.t BLEU_4) in validation set:", "\tval_BLEU_4     : 0.150383",
               "\tepoch          : 8", "Best results (w.r.t BLEU_4) in test set:",
               "\ttest_BLEU_4    : 0.140000", "\tepoch          : 8"]
    finished = verdict_of(tmp_path, lines + closing)
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    assert verdict_of(_folder(tmp_path / "cut"), lines)["terminal_state"] == "RUNNING"


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


# -- EDSR-PyTorch's epochs: a sample counter, each figure in brackets ----------------------

def _edsr_epoch(epoch: int, l1: list[float], psnr: float, best: tuple[float, int]) -> list[str]:
    lines = [f"[Epoch {epoch}]\tLearning rate: 1.00e-4"]
    lines += [f"[{800 * (i + 1)}/7800]\t[L1: {value:.4f}]\t92.7+0.1s"
              for i, value in enumerate(l1)]
    return [*lines, "", "Evaluation:", f"[SRRAW x4]\tPSNR: {psnr:.3f} (Best: {best[0]:.3f} "
            f"@epoch {best[1]})", "Forward: 2.64s", "", "Saving...", "Total: 3.47s", ""]


def _edsr_log(blow_up_at: int | None, last: int) -> list[str]:
    lines = ["rcan x4 result"]
    best = (0.0, 1)
    for epoch in range(1, last + 1):
        blown = blow_up_at is not None and epoch >= blow_up_at
        level = 29 - 12 * epoch / (epoch + 5)
        l1 = [1.5e5 - 1e3 * i for i in range(9)] if blown and epoch == blow_up_at else \
            [level * (3.2 if blown else 1.0) + 0.01 * (i % 3) for i in range(9)]
        psnr = 6.7 if blown else 18 + 4 * epoch / (epoch + 5)
        if psnr > best[0]:
            best = (psnr, epoch)
        lines += _edsr_epoch(epoch, l1, psnr, best)
    return lines


def test_edsr_s_loss_blowing_up_is_a_divergence(tmp_path: Path):
    artifact = verdict_of(tmp_path, _edsr_log(blow_up_at=20, last=30))
    assert artifact["decision"] == "NO-GO"
    assert ("divergence", "blocker") in _open(artifact)


def test_a_healthy_edsr_log_raises_nothing_serious_and_its_best_s_epoch_is_no_record_s(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _edsr_log(blow_up_at=None, last=30))
    assert not [a for a in _open(artifact) if a[1] in ("high", "blocker")]
    assert artifact["final_metrics"]["l1"] > 0
    assert "30" in artifact["summary"] or artifact["total_steps"] >= 30 * 7200


# -- the PyTorch quickstart: a test pass's block under its heading, after each epoch ------

def _quickstart(epochs: int, learns: bool) -> list[str]:
    lines: list[str] = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch}: ----------------------"]
        for seen in range(64, 24000, 6400):
            loss = 2.3 - 0.3 * epoch - seen / 1e5 if learns else 12.4 + (seen % 7) / 20
            lines.append(f"Loss: {loss:.6f}, {seen:>5d}/24000")
        test = (f" Accuracy: {40 + 8 * epoch:.1f}%, Avg loss: {2.1 - 0.3 * epoch:.6f} " if learns
                else " Accuracy: 0.0, Avg Loss: 12.390607")
        lines += ["Test Error: ", test, ""]
    return [*lines, "Done!"]


def test_a_quickstart_run_that_learns_is_go_and_its_test_pass_is_no_training(tmp_path: Path):
    artifact = verdict_of(tmp_path, _quickstart(5, learns=True))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert "test/accuracy" in artifact["final_metrics"]
    assert artifact["total_steps"] == 5 * 4  # the training lines, not the test passes


def test_a_quickstart_run_whose_test_loss_never_moves_is_no_go(tmp_path: Path):
    """The optimizer was given another model's parameters: the test loss is the same to
    every digit after each epoch, and the test accuracy 0. Each `Epoch N:` head after a
    test pass is the loop's next epoch, not a new launch that restarts the judging."""
    artifact = verdict_of(tmp_path, _quickstart(10, learns=False))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "NO-GO")
    assert ("not-learning", "blocker") in _open(artifact)


# -- a results file whose counter is glued to its word ------------------------------------

def test_an_evaluation_record_with_its_counter_glued_and_its_best_after_it(tmp_path: Path):
    lines = [f"epoch{n} ave_auroc {0.9 + (n % 700) / 70000:.5f}" for n in range(100, 10000, 100)]
    finished = verdict_of(tmp_path, [*lines, "best_epoch5300 best_ave_auroc 0.94104"])
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    assert "at epoch 9900" in finished["summary"]
    assert verdict_of(_folder(tmp_path / "cut"), lines)["terminal_state"] == "RUNNING"


# -- bearpaw's epoch head, a job script's `date` before the run and after it --------------

def _bearpaw_job(last: int, plan: int) -> list[str]:
    lines = ["Tue Feb  8 17:08:29 EST 2022", "Slurm nodes: evc3",
             f"Namespace(arch='vgg16', dataset='cifar100', epochs={plan}, lr=0.05)"]
    for epoch in range(1, last + 1):
        lines += ["", f"Epoch: [{epoch} | {plan}] LR: 0.050000", "Training...",
                  " -> Progress: 100 done!",
                  f"Train Loss: {2.5 / epoch:.4f} | Train Acc: {50 + epoch:.2f} | "
                  f"Test Acc: {45 + epoch / 2:.2f}"]
    return lines


def test_a_job_s_time_report_and_date_after_the_last_planned_epoch_end_it(tmp_path: Path):
    ending = ["", "real\t13m35.599s", "user\t25m53.429s", "sys\t5m59.430s", "",
              "Ending script...", "Tue Feb  8 17:22:06 EST 2022"]
    finished = verdict_of(tmp_path, _bearpaw_job(45, 45) + ending)
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    assert "of 45" in finished["summary"]
    short = verdict_of(_folder(tmp_path / "short"), _bearpaw_job(20, 45) + ending)
    assert short["terminal_state"] == "ENDED"


def test_the_epoch_a_best_was_reached_at_is_no_record_s_epoch():
    from babysit.parsing.formats import parse_key_values
    for line in ("[SRRAW x4]\tPSNR: 6.674 (Best: 22.112 @epoch 72)",
                 "[MyImage x1]\tPSNR: 37.373 (Best: 37.373 from epoch 1)"):
        parsed = parse_key_values(line)
        assert parsed is not None and parsed.epoch is None and "psnr" in parsed.metrics
    parsed = parse_key_values("Epoch 3 (best at epoch 2) loss: 0.5")
    assert parsed is not None and parsed.epoch == 3


# -- sealed-166: DeepXDE's list cells, a box-drawing bar, an optimiser's own end ----------

def _deepxde(rows: list[tuple[int, str, str]]) -> list[str]:
    lines = ["Compiling model...", "'compile' took 0.349125 s", "", "Training model...", "",
             "Step      Train loss                        Test loss                         "
             "Test metric"]
    return lines + [f"{step:<10d}{train:<34s}{test:<34s}[]  " for step, train, test in rows]


def test_deepxde_s_list_cells_are_read_as_the_sum_of_their_terms(tmp_path: Path):
    rows = [(n * 1000, f"[{5e-3 / (n + 1):.2e}, {0.8 / (n + 1) ** 2:.2e}, {0.2 / (n + 1):.2e}]",
             f"[{4e-3 / (n + 1):.2e}, {0.8 / (n + 1) ** 2:.2e}, {0.2 / (n + 1):.2e}]")
            for n in range(21)]
    closing = ["", "Best model at step 20000:", "  train loss: 2.57e-06", "  test loss: 2.46e-06",
               "  test metric: []", "", "'train' took 68.625427 s", ""]
    artifact = verdict_of(tmp_path, _deepxde(rows) + closing)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert artifact["total_steps"] == 20000
    assert {"train_loss", "test_loss"} <= set(artifact["final_metrics"])


def test_a_nan_term_in_deepxde_s_first_row_is_no_go(tmp_path: Path):
    lines = _deepxde([(0, "[3.80e+03, nan]", "[3.06e+03, nan]")])
    lines += ["", "Best model at step 0:", "  train loss: inf", "  test loss: inf", ""]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert ("nan-inf", "blocker") in _open(artifact)


def test_fields_set_apart_by_a_box_drawing_bar_with_a_greek_name(tmp_path: Path):
    lines = ["=== Phase 'full_loss_1' | epochs 100 ==="]
    lines += [f"Ep {n:3d}/100 │  0.11s │ bd {2 / n:.4e} │ res {40 / n:.4e} │ test "
              f"{3 / n ** 0.5:.4e} │ η_eff {2e-3 / n:.3e}" for n in range(1, 101)]
    artifact = verdict_of(tmp_path, lines)
    assert {"bd", "res", "test", "η_eff"} <= set(artifact["final_metrics"])
    assert "at epoch 100 of 100" in artifact["summary"]


def test_l_bfgs_b_converged_after_adam_is_a_finished_run_not_a_frozen_one(tmp_path: Path):
    """Raissi's physics-informed networks: Adam's `It:` lines, then one `Loss:` line per
    L-BFGS-B evaluation, the last ones the same to every digit at the minimum, then SciPy's
    own word through TF1's interface."""
    lines = [f"It: {i}, Loss: {1e4 / (1 + i):.3e}, l1: 0.99, l2: 0.0025, Time: 0.05"
             for i in range(0, 5000, 10)]
    lines += [f"Loss: {0.9 + 1 / (k + 2):.7g}" for k in range(200)]
    lines += ["Loss: 0.882377"] * 12
    lines += ["INFO:tensorflow:Optimization terminated with:",
              "  Message: b'CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH'",
              "  Objective function value: 0.882377", "  Number of iterations: 3222",
              "Error lambda_1: 0.157452%", "Error lambda_2: 0.039916%"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert not [a for a in _open(artifact) if a[1] in ("high", "blocker")]


def test_a_loss_frozen_from_the_start_is_still_a_blocker(tmp_path: Path):
    lines = [f"step={n} loss=10.825912" for n in range(1, 40)]
    assert ("not-learning", "blocker") in _open(verdict_of(tmp_path, lines))


def test_an_ipython_context_line_is_no_save_the_traceback_went_through(tmp_path: Path):
    """A notebook stopped by hand in `train(…)`; the cell's `torch.save(…)` two lines below
    is shown as context, not a call that failed."""
    red, green, cyan, blue, off = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0;36m", "\x1b[0;34m", "\x1b[0m"
    number = "\x1b[1;32m"
    lines = [f"Train Epoch: 1 [{n * 640}/65920 ({n}%)]\tLoss: {3 - n / 100:.6f}"
             for n in range(1, 30)]
    lines += [f"{red}{'-' * 75}{off}",
              f"{red}KeyboardInterrupt{off}                         Traceback (most recent "
              "call last)",
              f"{green}<ipython-input-12-205a0687c3cd>{off} in {cyan}<module>{blue}{off}",
              f"{number}     38{off} {green}for{off} epoch {green}in{off} range(1):",
              f"{green}---> 39{red}     {off}train{blue}({off}model{blue}){off}",
              f"{number}     41{off}     torch{blue}.{off}save{blue}({off}model{blue}.{off}"
              f"state_dict{blue}(){off}, PATH{blue}){off}",
              "", f"{red}KeyboardInterrupt{off}: "]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "CANCELLED"
    assert "checkpoint-failure" not in {kind for kind, _ in _open(artifact)}


def test_a_forecaster_s_displacement_error_under_a_logger_s_head(tmp_path: Path):
    """SGAN's trainer (SoPhie, sealed-166): `[INFO: trainer.py:  214]:   [val] ade: 6.443`
    at each check, the same to the third decimal at all nineteen."""
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-166"
           / "pytorch_sophie_gan_aiodrive_val_ade_frozen.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert "eval/ade" in artifact["final_metrics"]
    assert "trainer.py" not in artifact["final_metrics"]
    assert any("eval/ade" in a["description"] for a in artifact["anomalies_detected"]
               if a["type"] == "not-learning")
