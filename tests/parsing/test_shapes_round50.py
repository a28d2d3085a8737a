"""Shapes read since the fiftieth session, each on lines written in the real shape of a
public log babysit misread: AutoGluon's fits (settings printed as dicts, a failure it
caught and skipped, its leaderboard), and measures whose order their definitions fix."""

from __future__ import annotations

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
