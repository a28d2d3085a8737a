"""Shapes read since the fiftieth session, each on lines written in the real shape of a
public log babysit misread: AutoGluon's fits (settings printed as dicts, a failure it
caught and skipped, its leaderboard), and measures whose order their definitions fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from babysit.parsing.events import exception_line
from babysit.rules.ordered_measures import out_of_order
from tests.rules.test_loss_rules import verdict_of

_RAY = "(_dystack pid=167306) "


def _epochs(n: int) -> list[str]:
    return [f"epoch {k} loss {1 / k:.4f}" for k in range(1, n)]


# -- settings: a heading said again, a remark after it, a model's dict a line --------------

def _hyperparameters() -> list[str]:
    return ["User-specified model hyperparameters to be fit:", "{",
            "\t'CAT': [{}, {'depth': 6, 'grow_policy': 'SymmetricTree', 'l2_leaf_reg': "
            "2.1542798306067823, 'learning_rate': 0.06864209415792857, 'max_ctr_complexity': 4, "
            "'ag_args': {'name_suffix': '_r177', 'priority': -1}}],",
            "\t'FASTAI': [{}, {'bs': 256, 'emb_drop': 0.5411770367537934, 'epochs': 43, "
            "'layers': [800, 400], 'lr': 0.01519848858318159, 'ps': 0.23782946566604385, "
            "'ag_args': {'name_suffix': '_r191', 'priority': -4}}],", "}"]


def test_a_settings_heading_said_a_fourth_time_still_opens_its_block(tmp_path: Path):
    """AutoGluon prints its hyperparameters before each fit, word for word (the first
    behind Ray's head, in its DyStack sub-fit): a line said twice before without a record
    is passed by, and the heading was such a line, so the fourth block's settings were
    read as records."""
    lines = []
    for fit in range(4):
        head = _RAY if fit == 0 else ""
        lines += [f"Beginning AutoGluon training ... fit {fit}",
                  *(head + line for line in _hyperparameters()),
                  f"AutoGluon training complete, total runtime = {100 + fit}.5s"]
    lines += _epochs(12)
    artifact = verdict_of(tmp_path, lines)
    assert "depth" not in artifact["final_metrics"]
    assert "emb_drop" not in artifact["final_metrics"]
    assert "lr-schedule" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_model_configs_with_a_remark_after_their_heading_are_settings(tmp_path: Path):
    """`Model configs that will be trained (in order):`, then `Name: <tab>{…}` a model a
    line behind Ray's head (which takes their indent away)."""
    lines = [_RAY + "Model configs that will be trained (in order):",
             *(_RAY + f"\tExtraTrees_r{n}_BAG_L1: \t{{'max_features': 0.75, 'max_leaf_nodes': "
                      f"{18000 + n}, 'min_samples_leaf': 1, 'priority': -{n}}}"
               for n in range(1, 12)),
             _RAY + "Fitting model: ExtraTrees_r1_BAG_L1 ...", *_epochs(12)]
    artifact = verdict_of(tmp_path, lines)
    assert "max_leaf_nodes" not in artifact["final_metrics"]
    assert "at epoch 11" in artifact["summary"]


def test_an_ensemble_s_weights_are_no_record(tmp_path: Path):
    """`Ensemble Weights: {'CatBoost_BAG_L1': 0.238, …}` after each ensemble's fit: its
    parts' weights, set once, not figures of training."""
    lines = [*_epochs(12),
             *(f"\tEnsemble Weights: {{'CatBoost_BAG_L1': 0.{n}38, 'LightGBMXT_BAG_L1': 0.19}}"
               for n in range(1, 5))]
    artifact = verdict_of(tmp_path, lines)
    assert "catboost_bag_l1" not in artifact["final_metrics"]
    assert "at epoch 11" in artifact["summary"]


# -- a failure the library caught and skipped ---------------------------------------------

def _skipped_model(head: str) -> list[str]:
    site = "/env/lib/python3.10/site-packages"
    stack = [f'  File "{site}/autogluon/core/models/ensemble/fold_fitting_strategy.py", '
             f"line 413, in _ray_fit",
             "    fold_model.fit(X=X_fold, y=y_fold, time_limit=time_limit_fold)",
             f'  File "{site}/autogluon/tabular/models/fastainn/tabular_nn_fastai.py", '
             f"line 466, in _measure_batch_times",
             "    self.model.fit(1, lr=0, cbs=[batch_time_tracker_callback])",
             f'  File "{site}/fastai/tabular/model.py", line 75, in forward',
             "    return self.layers(x)"]
    return [head + "\tWarning: Exception caused NeuralNetFastAI_BAG_L1 to fail during "
                   "training... Skipping this model.",
            head + "\t\tray::_ray_fit() (pid=184093, ip=172.30.1.59)",
            *(head + line for line in stack),
            head + "UnboundLocalError: local variable 'x' referenced before assignment",
            head + "Detailed Traceback:",
            head + "Traceback (most recent call last):",
            head + f'  File "{site}/autogluon/core/trainer/abstract_trainer.py", line 2106, '
                   f"in _train_and_save",
            head + "    model = self._train_single(**model_fit_kwargs)",
            head + "ray.exceptions.RayTaskError(UnboundLocalError): ray::_ray_fit() "
                   "(pid=184093, ip=172.30.1.59)",
            *(head + line for line in stack),
            head + "UnboundLocalError: local variable 'x' referenced before assignment",
            head + "Fitting model: XGBoost_BAG_L1 ... Training model for up to 47.56s"]


def test_a_failure_announced_as_skipped_is_no_crash(tmp_path: Path):
    for head in ("", _RAY):
        lines = [*_epochs(6), *_skipped_model(head), *_epochs(12),
                 "AutoGluon training complete, total runtime = 2801.34s ... Best model: "
                 "WeightedEnsemble_L2"]
        artifact = verdict_of(tmp_path, lines)
        assert artifact["terminal_state"] == "SUCCEEDED", head
        assert "crash" not in {a["type"] for a in artifact["anomalies_detected"]}, head
        assert "lr" not in artifact["final_metrics"], head  # (a frame's code, behind a head)


def test_the_same_failure_unannounced_is_a_crash(tmp_path: Path):
    lines = [*_epochs(6), *_skipped_model("")[2:]]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "FAILED"
    assert "UnboundLocalError" in artifact["summary"]


def test_a_wrapper_naming_its_cause_in_brackets_closes_a_traceback():
    assert exception_line("ray.exceptions.RayTaskError(UnboundLocalError): ray::_ray_fit() "
                          "(pid=1, ip=1.2.3.4)") is not None
    assert exception_line("Loading (3 files): done") is None


# -- a leaderboard's row: a metric's name is a cell, not a figure's name -------------------

def test_a_leaderboard_row_is_no_pair_of_a_name_and_a_figure(tmp_path: Path):
    """AutoGluon's leaderboard: `6  LightGBM_BAG_L2  0.778763  accuracy  295.271434 …`
    (the `eval_metric` column holds the metric's name; the number after it is a time)."""
    lines = [*_epochs(12),
             "                        model  score_val eval_metric  pred_time_val     fit_time"
             "  stack_level  can_infer  fit_order",
             "0         WeightedEnsemble_L3   0.778789    accuracy      64.120703   191.468206"
             "            3       True         17",
             "6             LightGBM_BAG_L2   0.778763    accuracy     295.271434  1471.467147"
             "            2       True         16"]
    artifact = verdict_of(tmp_path, lines)
    assert "impossible-metric" not in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["final_metrics"].get("accuracy") is None


def test_pairs_apart_by_spaces_are_still_pairs(tmp_path: Path):
    lines = [f"{k} loss {1 / k:.4f} acc {k / 20:.4f} lr 0.001" for k in range(1, 15)]
    artifact = verdict_of(tmp_path, lines)
    assert {"loss", "acc"} <= set(artifact["final_metrics"])


# -- measures whose order their definitions fix --------------------------------------------

def test_a_root_mean_squared_error_below_the_mean_absolute_error_is_impossible(
        tmp_path: Path):
    """An NBA points model's report: `Mean Absolute Error: 9.43`, then `Root Mean Squared
    Error: 3.43` (a square root taken twice)."""
    lines = [*_epochs(12), "Mean Absolute Error: 9.43", "Root Mean Squared Error: 3.43",
             "Training finished."]
    artifact = verdict_of(tmp_path, lines)
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "impossible-metric"]
    assert found and "mean absolute error" in found[0]["description"]
    assert artifact["decision"] == "CONDITIONAL"


def test_measures_in_their_order_raise_nothing(tmp_path: Path):
    lines = [*_epochs(12), "Mean Absolute Error: 3.43", "Root Mean Squared Error: 4.61",
             "Training finished."]
    artifact = verdict_of(tmp_path, lines)
    assert "impossible-metric" not in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["decision"] == "GO"


def test_top_k_scores_fall_as_k_grows_only_when_wrong():
    assert out_of_order({"val_acc1": 71.2, "val_acc5": 68.0}, {}) is not None
    assert out_of_order({"val_acc1": 71.2, "val_acc5": 90.1}, {}) is None
    assert out_of_order({"hits@1": 0.31, "hits@10": 0.29}, {}) is not None
    # (two splits, two heads: no order between them)
    assert out_of_order({"train_mae": 9.0, "val_rmse": 3.0}, {}) is None
    assert out_of_order({"acc1": 0.9, "acc2": 0.5}, {}) is None
    # (rounding of the last digit printed)
    assert out_of_order({"mae": 0.1235, "rmse": 0.1234}, {}) is None
    # (a top-k error falls as k grows: GluonCV's; a precision at k goes either way:
    # VoxelNet's; an index after an underscore is a task's; a bare `top1` may be an error)
    assert out_of_order({"eval/err_top1": 0.94, "eval/err_top5": 0.84}, {}) is None
    assert out_of_order({"eval/err_top1": 0.5, "eval/err_top5": 0.8}, {}) is not None
    assert out_of_order({"pr.prec@10": 0.0015, "pr.prec@50": 0.00145}, {}) is None
    assert out_of_order({"valid_arithmetic_acc_1": 99.9, "valid_arithmetic_acc_3": 0.0}, {}) \
        is None
    assert out_of_order({"top1": 3.1, "top5": 0.0}, {}) is None


# -- sealed-170/171: plans, counters and heads ---------------------------------------------

_PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public"


def _ogb_run() -> list[str]:
    """An OGB graph-property script (sealed-170): its arguments as a dict, a data set's
    processing bar, then a bar of 1029 batches and an evaluation line per epoch."""
    log = _PUBLIC / "sealed-170" / "pytorch_tiny_gin_ogbg_molhiv_seed0_finished.log"
    return log.read_text().splitlines()


def test_a_plan_that_a_pass_s_total_divides_is_the_run_s_own(tmp_path: Path):
    """Three totals reached (a data bar's 41127, an epoch's 1029, then 51450 = 50 × 1029 at
    the last epoch's end) were taken for a loop called once per chunk, and the plan
    dropped: a finished run stayed RUNNING."""
    artifact = verdict_of(tmp_path, _ogb_run())
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["target_steps"] == 51450
    assert "learning_rate" not in artifact["final_metrics"]  # (the arguments' dict)


def test_the_same_run_short_of_its_plan_runs_on(tmp_path: Path):
    lines = _ogb_run()
    cut = next(at for at, line in enumerate(lines) if "Epoch: 30," in line)
    artifact = verdict_of(tmp_path, lines[:cut + 1])
    assert artifact["terminal_state"] == "RUNNING"


def test_an_outer_count_beside_a_running_one_is_no_plan(tmp_path: Path):
    """DeepSpeed's throughput timer, `0/190, SamplesPerSec=…`: its epoch and its step."""
    head = "[2021-06-12 20:16:{:02d},745] [INFO] "
    lines = []
    for n in range(1, 21):
        lines += [head.format(n) + f"[logging.py:60:log_dist] [Rank 0] step={10 * n}, "
                                   f"skipped=0, lr=[0.03], mom=[[0.8, 0.999]]",
                  head.format(n) + f"[timer.py:160:stop] 0/{10 * n}, "
                                   f"SamplesPerSec={3300 + n}.4196",
                  f"epoch 0 batch {n} loss {3 / n:.4f}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["target_steps"] is None


def test_an_epoch_counted_from_1_and_from_0_on_two_lines_is_no_relaunch(tmp_path: Path):
    """A DGL script's `Epoch 28, Learning Rate: 0.01` before the epoch's work, `Run 00 |
    Epoch 00027 | Loss …` after it: the lines between, the same each epoch (`block
    generation total time  0`), are no closing block when the log stops among them."""
    lines = []
    for epoch in range(1, 29):
        lines += [f"Epoch {epoch}, Learning Rate: 0.01", "connection checking time:  0",
                  "block generation total time  0", f"pure train time  0.2{epoch % 9}"]
        if epoch < 28:
            lines.append(f"Run 00 | Epoch {epoch - 1:05d} | Loss {3.7 - epoch / 50:.4f} | "
                         f"Train 0.{1000 + epoch} | Val 0.0763 | Test 0.0586")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


def _easytorch(epochs: int, train_mae: Callable[[int], float], head: str = "",
               val: bool = True) -> list[str]:
    """easytorch's epoch: `Epoch 1 / 300`, `Result <train>: […]`, `Result <val>: […]`,
    behind `head` (formatted with the epoch)."""
    lines = []
    for epoch in range(1, epochs + 1):
        at = head.format(epoch)
        lines += [at + f"Epoch {epoch} / 300",
                  at + f"Result <train>: [train_time: 79.32 (s), lr: 1.00e-03, train_MAE: "
                       f"{train_mae(epoch):.4f}, train_RMSE: 2.5657, train_MAPE: 0.0374]"]
        if val:
            lines.append(at + f"Result <val>: [val_time: 30.77 (s), val_MAE: "
                              f"{8.9 - epoch / 50:.4f}, val_RMSE: 12.1517]")
    return lines


def test_a_result_tagged_with_its_split_is_read(tmp_path: Path):
    """easytorch: `2024-09-12 … - easytorch-training - INFO - Epoch 1 / 300` (a logger's
    name with a hyphen before its level), `Result <train>: […]`, `Result <val>: […]`."""
    lines = _easytorch(12, lambda epoch: 1.6 - epoch / 100,
                       "2024-09-12 12:{:02d}:00,185 - easytorch-training - INFO - ")
    artifact = verdict_of(tmp_path, lines)
    assert {"val_mae", "val_rmse"} <= set(artifact["final_metrics"])
    assert "12 training records" in artifact["summary"]


def test_a_regression_error_near_ln_k_is_no_guess_over_classes(tmp_path: Path):
    """A traffic forecaster's train MAE began at 1.6058, within 3 % of ln 5."""
    lines = _easytorch(44, lambda epoch: 1.6058 - (epoch % 4) / 1000, val=False)
    artifact = verdict_of(tmp_path, lines)
    found = [a["description"] for a in artifact["anomalies_detected"]]
    assert not [d for d in found if "uniform guess" in d]


def test_memory_that_could_not_be_allocated_in_words_is_an_oom(tmp_path: Path):
    lines = [*_epochs(6), "Traceback (most recent call last):",
             '  File "/ds/deepspeed/ops/transformer/inference/ds_attention.py", line 1, in f',
             "    workspace = self.allocate_workspace()",
             "RuntimeError: Workspace can't be allocated, not enough memory"]
    artifact = verdict_of(tmp_path, lines)
    assert "oom" in {a["type"] for a in artifact["anomalies_detected"]}
    lines = [*_epochs(6), "Warning: not enough memory to cache the dataset, reading from disk",
             *_epochs(12)[5:]]
    assert "oom" not in {a["type"] for a in verdict_of(tmp_path, lines)["anomalies_detected"]}


def test_a_failure_inside_a_checkpoint_rotation_is_a_checkpoint_failure(tmp_path: Path):
    """OpenRLHF's `save_ckpt` removes the oldest checkpoint, and `shutil.rmtree` fails."""
    lines = [*_epochs(6), "Traceback (most recent call last):",
             '  File "/x/openrlhf/trainer/sft_trainer.py", line 282, in save_logs_and_checkpoints',
             "    self.strategy.save_ckpt(",
             '  File "/x/openrlhf/utils/deepspeed.py", line 432, in save_ckpt',
             "    shutil.rmtree(oldest_dir)",
             '  File "/env/lib/python3.10/shutil.py", line 726, in rmtree',
             "    os.rmdir(path)",
             "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/global_step15'"]
    artifact = verdict_of(tmp_path, lines)
    assert "checkpoint-failure" in {a["type"] for a in artifact["anomalies_detected"]}


def _dpo(first_losses: list[float], accuracy: float) -> list[str]:
    lines = [f"{{'loss': {loss}, 'grad_norm': 0.0{n + 1}, 'learning_rate': {n + 1}e-06, "
             f"'rewards/chosen': {10 + n}.39, 'rewards/rejected': 1.70, 'rewards/accuracies': "
             f"{accuracy}, 'rewards/margins': {8 + n}.68, 'epoch': {0.12 * (n + 1):.2f}}}"
             for n, loss in enumerate(first_losses)]
    return [*lines, "{'train_runtime': 1071.4363, 'train_samples_per_second': 2.529, "
                    "'train_steps_per_second': 0.159, 'train_loss': 0.00015, 'epoch': 2.0}"]


def test_preference_pairs_told_apart_from_the_first_point_are_a_finding(tmp_path: Path):
    """A LLaMA-Factory DPO run: `loss: 0.0017`, every pair ranked right, at its first
    print, then 0.0004, 0.0001 …: the pairs differ in something trivial."""
    artifact = verdict_of(tmp_path, _dpo([0.0017, 0.0004, 0.0001, 0.0001, 0.0001, 0.0001,
                                          0.0001, 0.0001], 1.0))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and "told apart from the first" in found[0]["description"]
    assert artifact["decision"] == "CONDITIONAL"


def test_a_preference_loss_that_falls_from_ln2_is_learning(tmp_path: Path):
    artifact = verdict_of(tmp_path, _dpo([0.6931, 0.61, 0.45, 0.30, 0.12, 0.05, 0.01, 0.004],
                                         1.0))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}


# -- sealed-172: a main thread's failure after its helpers', Lightning's checkpoint words ---

def test_the_main_thread_s_failure_after_helper_threads_died_is_a_crash(tmp_path: Path):
    """A WaveNet notebook: its loader threads die twice (`Exception in thread Thread-1417:`,
    then `IndexError: index 50 is out of bounds …`), then the cell's own IndexError."""
    thread = ["Exception in thread Thread-{n}:", "Traceback (most recent call last):",
              '  File "/usr/lib/python3.6/threading.py", line 916, in _bootstrap_inner',
              "    self.run()",
              '  File "/w/wavenet_training.py", line 320, in load_new_chunk',
              "    segment_position = self.segment_positions[current_chunk_position]",
              "IndexError: index 50 is out of bounds for axis 0 with size 50", ""]
    lines = [*_epochs(12), *(t.format(n=1417) for t in thread),
             *(t.format(n=1418) for t in thread), "test loss:  2.4866827726364136",
             "-" * 75,
             "IndexError                                Traceback (most recent call last)",
             "<ipython-input-17-1fb5df6ca437> in <module>()",
             "---> 14                 examples_per_segment=examples_per_segment)", "",
             "/w/wavenet_training.py in get_minibatch(self, minibatch_size)",
             "--> 393             if position > self.inputs[segment].size(0):", "",
             "IndexError: list index out of range"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "FAILED"
    assert artifact["decision"] == "NO-GO"


def _lightning(epochs: int, batches: int, accumulate: int) -> list[str]:
    """Lightning's epoch bars, each closed by ModelCheckpoint's words glued to its last
    redraw (`Epoch 0, global step 255: 'val_loss' reached …`), then the reset redraw."""
    bar = "|██████████| {n}/{b} [00:57<00:00,  4.41it/s, v_num=cbxp, train_loss_step={x:.3f}]"
    lines = []
    for epoch in range(epochs):
        for n in range(0, batches + 1, 5):
            lines.append(f"Epoch {epoch}: {100 * n // batches:3d}%"
                         + bar.format(n=n, b=batches, x=1 / (1 + epoch * batches + n)))
        lines.append(f"Epoch {epoch}: 100%" + bar.format(n=batches, b=batches, x=0.5)[:-1]
                     + f", val_loss_step=0.{60 - 3 * epoch}, val_loss_epoch=0.4{9 - epoch}, "
                       f"train_loss_epoch=0.5{9 - epoch}]")
        lines[-1] += (f"Epoch {epoch}, global step {(epoch + 1) * batches // accumulate}: "
                      f"'val_loss' reached 0.4{9 - epoch} (best 0.4{9 - epoch}), saving model "
                      f"to './ckpt/epoch={epoch}.ckpt' as top 1")
        lines.append(f"Epoch {epoch}:   0%" + bar.format(n=0, b=batches, x=0.5 / (1 + epoch)))
    return [*lines, f"`Trainer.fit` stopped: `max_epochs={epochs}` reached."]


def test_lightning_s_checkpoint_words_keep_the_bars_counting(tmp_path: Path):
    """After `Epoch 0, global step 255:`, the next epoch's bar gave no step: each epoch
    seemed to run none (a blocker: a loader that hands the loop nothing)."""
    artifact = verdict_of(tmp_path, _lightning(12, 255, 1))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO"


def test_lightning_s_global_step_under_accumulation_is_the_step(tmp_path: Path):
    artifact = verdict_of(tmp_path, _lightning(12, 255, 5))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["total_steps"] == 12 * 255 // 5


def _act_run(tail: list[str]) -> list[str]:
    """ACT's trainer: a bar over 1001 steps, validation at the start, rollouts whose
    simulator warns at its own steps, then `Training finished:` and the best restated."""
    lines = ["  0%|          | 0/1001 [00:00<?, ?it/s]validating", "Val loss:   77.14373"]
    for step in range(1, 1002, 50):
        lines.append(f" {step // 10}%|█         | {step}/1001 [00:{step // 60:02d}<00:01, "
                     f"{1 + step / 1000:.2f}it/s]")
        lines.append(f"val_l1: 0.{791 - step // 2} val_kl: 7.635 val_loss: {77 - step / 14:.3f}")
    lines.append("100%|██████████| 1001/1001 [29:50<00:00,  1.79s/it]")
    for sim_step in range(290, 300):
        lines += ["fps_rendering True",
                  f"Warning: step duration: 0.0{sim_step % 9 + 1} s at step {sim_step} longer "
                  f"than DT: 0.02 s, culmulated delay: {23 + sim_step / 100:.3f}"]
    return [*lines, "Success rate: 0.3", *tail]


def test_a_warning_s_figures_are_no_training_record(tmp_path: Path):
    artifact = verdict_of(tmp_path, _act_run(["Training finished:"]))
    assert "step_duration" not in artifact["final_metrics"]
    assert artifact["total_steps"] == 1001


def test_the_result_restated_after_the_end_is_no_run_gone_back(tmp_path: Path):
    """`Training finished:`, then `Seed 0, val loss 0.373114 at step 1000` after the bar's
    1001/1001: the summary, not training at step 1000 again."""
    artifact = verdict_of(tmp_path, _act_run(["Training finished:",
                                              "Seed 0, val loss 0.373114 at step 1000",
                                              "Best ckpt, val loss 0.373114 @ step1000"]))
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO"


def test_a_relaunch_after_the_end_still_runs(tmp_path: Path):
    lines = _act_run(["Training finished:"])
    artifact = verdict_of(tmp_path, [*lines, *lines[:12]])
    assert artifact["terminal_state"] == "RUNNING"


def test_a_new_plan_after_a_one_episode_session_is_no_running_count(tmp_path: Path):
    """Appended sessions of a DQN script (sealed-11): `Episode 1/1`, then a session of
    `Episode 1/10` … `10/10`: the right number grew once under a standing left one — a
    new plan, not an outer count beside a running one."""
    lines = []
    for session, episodes in enumerate((1, 1, 10)):
        lines.append(f"Training Session Started: 2026-02-03 15:3{session}:53")
        lines += [f"Episode {n}/{episodes} | Deliveries: {100 * n} | Collisions: 0 | "
                  f"Loss: {2.0 / n:.4f} | ε: 0.000" for n in range(1, episodes + 1)]
        lines += ["FINAL RESULTS (Online DQN Learning)", f"Total Deliveries: {episodes * 100}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["total_steps"] == 10
